import { defineConfig } from 'vitest/config';

// Integration tests start real servers (Temporal dev server, versitygw, the sandbox) on free ports;
// two cores means at most two test files at a time.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup-runtime.ts'],
  },
});
