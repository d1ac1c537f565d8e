import { defineConfig } from 'vitest/config';

// The suite's config without the shared global set-up, for running one area's tests in isolation.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
