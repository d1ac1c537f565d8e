// A worker killed with SIGKILL in the middle of a run loses nothing: a new worker finishes the run and
// the output holds every expected record exactly once.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Client } from '@temporalio/client';
import { startRun } from '../../cli/start-run.js';
import type { EnrichflowConfig } from '../../config/index.js';
import { validateJobSpec } from '../../jobs/job-spec.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import type { RunSummary, StageProgress } from '../../pipeline/run-types.js';
import { QUERY_PROGRESS } from '../../pipeline/run-types.js';
import {
  readTable,
  s3Location,
  setFaults,
  spawnWorkerProcess,
  startTestSandbox,
  temporalClient,
  testConfig,
  uploadFile,
  waitFor,
} from '../support/pipeline-harness.js';

const SAMPLE = fileURLToPath(new URL('../../samples/companies.csv', import.meta.url));

let sandbox: RunningSandbox;
let defaultConfig: EnrichflowConfig;
let client: Client;
const children: ChildProcess[] = [];

function spawnWorker(config: EnrichflowConfig = defaultConfig): ChildProcess {
  const child = spawnWorkerProcess(config);
  children.push(child);
  return child;
}

beforeAll(async () => {
  sandbox = await startTestSandbox();
  defaultConfig = testConfig(sandbox.url);
  client = await temporalClient();
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await setFaults(sandbox, []);
  await client?.connection.close();
  await sandbox?.close();
});

test(
  'SIGKILL mid-run: a restarted worker finishes, every record exactly once',
  { timeout: 180_000 },
  async () => {
    // Slow calls, so the kill lands while batches are in flight.
    await setFaults(sandbox, [{ match: 'bulkEnrich*', kind: 'latency', latencyMs: 400 }]);
    const input = `${s3Location('inputs')}companies.csv`;
    await uploadFile(defaultConfig, input, SAMPLE);
    const first = spawnWorker();
    const { runId } = await startRun(
      client,
      defaultConfig,
      validateJobSpec(
        {
          job_name: 'killed',
          input: { location: input },
          datasets: ['firmographics', 'technographics'],
          output: s3Location('enriched'),
          window_size: 2,
        },
        'test',
      ),
    );
    await waitFor(async () => {
      const progress = await client.workflow
        .getHandle(`${runId}/firmographics`)
        .query<StageProgress>(QUERY_PROGRESS);
      return progress.doneBatches >= 1 && progress.inFlight > 0;
    }, 90_000);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    spawnWorker();
    const summary = (await client.workflow.getHandle(runId).result()) as RunSummary;
    expect(summary.status).toBe('completed');
    for (const dataset of ['firmographics', 'technographics']) {
      const table = await readTable<{ n: string; d: string }>(
        defaultConfig,
        summary.outputPrefix,
        dataset,
        'SELECT count(*) AS n, count(DISTINCT business_id) AS d FROM t',
      );
      const stage = summary.stages.find((s) => s.stage === dataset)!;
      expect(Number(table.rows[0]?.n)).toBe(Number(table.rows[0]?.d));
      expect(Number(table.rows[0]?.n)).toBe(stage.records);
      expect(stage.records + stage.misses).toBe(summary.enrichPlan.uniqueIds);
    }
  },
);

test('SIGTERM: the worker shuts down gracefully and exits 0', { timeout: 60_000 }, async () => {
  // Task queues of its own, so only this worker's pollers count as ready.
  const config = testConfig(sandbox.url);
  const worker = spawnWorker(config);
  await waitFor(async () => {
    const described = await client.workflowService.describeTaskQueue({
      namespace: config.temporal.namespace,
      taskQueue: { name: config.temporal.apiTaskQueue },
      taskQueueType: 2,
    });
    return (described.pollers ?? []).length > 0;
  }, 45_000);
  const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
  worker.kill('SIGTERM');
  expect(await exited).toBe(0);
});
