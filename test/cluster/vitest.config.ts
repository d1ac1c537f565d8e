import { defineConfig } from 'vitest/config';

// `npm run test:cluster`: the cluster test alone, one file at a time, with the time a 20,000-row run and
// a cluster start need. It starts its own servers, so the suite's global set-up is not used.
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 600_000,
    hookTimeout: 600_000,
    env: { ENRICHFLOW_CLUSTER_TEST: '1' },
  },
});
