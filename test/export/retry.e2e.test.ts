// Pages that still fail after their retries: the export completes "with failures", lists them in the
// failures table, and `runs retry` fetches exactly those pages, then commits a complete output.
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { exportLayout } from '../../pipeline/export-layout.js';
import { retryExport, startExport } from '../../cli/export-run.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import { storeResolverFor } from '../../workers/worker.js';
import type { ExportSummary } from '../../pipeline/export-types.js';
import {
  readTable,
  s3Location,
  setFaults,
  startTestWorker,
  temporalClient,
  testConfig,
  type TestWorker,
} from '../support/pipeline-harness.js';
import { prospectIds, startCountingProxy, startExportSandbox, type CountingProxy } from './support.js';

let sandbox: RunningSandbox;
let proxy: CountingProxy;
let worker: TestWorker;
let client: Client;

beforeAll(async () => {
  sandbox = await startExportSandbox('retry');
  proxy = await startCountingProxy(sandbox.url);
  client = await temporalClient();
});

afterAll(async () => {
  await worker?.stop();
  await client?.connection.close();
  await proxy?.close();
  await sandbox?.close();
});

test('failed pages are recorded, and a retry fetches exactly them', async () => {
  // 10 calls/s, so the pages are still going when the faults are switched on.
  const config = testConfig(proxy.url, { ENRICHFLOW_API_RATE_PER_MINUTE: '600' });
  worker = await startTestWorker(config);
  const output = s3Location('retry');
  const { runId } = await startExport(client, config, {
    target: 'prospects',
    filters: { company_size: { values: ['11-50', '201-500'] } },
    output,
    offsetCap: 1_000,
    apiRetry: { maximumAttempts: 1 },
  });
  const { store, prefix } = storeResolverFor(config)(`${output}${runId}/`);
  const deadline = Date.now() + 60_000;
  while (!(await store.exists(`${prefix}${exportLayout.plan}`))) {
    if (Date.now() > deadline) throw new Error('no plan');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await setFaults(sandbox, [{ match: 'fetchProspects', kind: 'error', count: 3 }]);
  const first = (await client.workflow.getHandle(runId).result()) as ExportSummary;
  await setFaults(sandbox, []);
  expect(first.status).toBe('completed_with_failures');
  expect(first.counts.failedPages).toBe(3);
  const failures = await readTable<{ stage: string; error_type: string }>(
    config,
    first.outputPrefix,
    'failures',
  );
  expect(failures.rows).toHaveLength(3);
  expect(failures.rows.every((f) => f.stage === 'pages' && f.error_type === 'ServerError')).toBe(true);
  const want = await prospectIds(sandbox, `b.size_range IN ('11-50', '201-500')`);
  expect(first.counts.written).toBeLessThan(want.length);

  const before = proxy.calls.length;
  const retry = await retryExport(client, config, first);
  expect(retry).toMatchObject({ failures: 3 });
  const second = (await client.workflow.getHandle(retry!.retryId).result()) as ExportSummary;
  expect(second.status).toBe('completed');
  expect(proxy.calls.length - before).toBe(3);
  const { rows } = await readTable<{ id: string }>(
    config,
    second.outputPrefix,
    'prospects',
    'SELECT prospect_id AS id FROM t',
  );
  expect(rows.length).toBe(want.length);
  expect(new Set(rows.map((r) => r.id))).toEqual(new Set(want));
  await expect(retryExport(client, config, second)).resolves.toBeUndefined();
});
