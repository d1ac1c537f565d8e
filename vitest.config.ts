import { defineConfig } from 'vitest/config';

// Three projects. `unit`: no servers and no child processes (`npm run test:unit`, under a minute).
// `sandbox`: the Data Service stand-in and its clients, each file building its own dataset and serving
// it in-process over HTTP. `e2e`: tests that need the Temporal dev server and the S3 server the global set-up starts on free
// ports, or that start the CLI, workers or servers as processes; two cores means two files at a time.
// The cluster test has a config of its own (`npm run test:cluster`).
const E2E = [
  'test/**/*.e2e.test.ts',
  'test/foundation/temporal.test.ts',
  'test/storage/s3.test.ts',
  'test/storage/input-reader.test.ts',
  'test/bench/**/*.test.ts',
  'test/pipeline/dry-run.test.ts',
  'test/sandbox/serve.test.ts',
];
const SANDBOX = [
  'test/sandbox/**/*.test.ts',
  'test/sandbox-events/**/*.test.ts',
  'test/conformance/**/*.test.ts',
  'test/client/**/*.test.ts',
];
const ALWAYS_EXCLUDED = ['test/cluster/**', 'node_modules/**'];

const shared = {
  pool: 'forks' as const,
  maxWorkers: 2,
  testTimeout: 60_000,
  hookTimeout: 120_000,
  setupFiles: ['test/support/setup-runtime.ts'],
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...E2E, ...SANDBOX, ...ALWAYS_EXCLUDED],
        },
      },
      {
        test: {
          ...shared,
          name: 'sandbox',
          include: SANDBOX,
          exclude: [...E2E, ...ALWAYS_EXCLUDED],
        },
      },
      {
        test: {
          ...shared,
          name: 'e2e',
          include: E2E,
          exclude: ALWAYS_EXCLUDED,
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
