// A cancelled run started again by the command that started it reuses what its first attempt finished:
// the batches whose results were written are not sent to the service again (they cost calls and
// credits), and the run's tables are the same as a run that never stopped.
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startRun } from '../../cli/start-run.js';
import type { EnrichflowConfig } from '../../config/index.js';
import { validateJobSpec } from '../../jobs/job-spec.js';
import type { RunSummary } from '../../pipeline/run-types.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import { runProgressQuery } from '../../workflows/enrich-run.js';
import {
  readTable,
  s3Location,
  setFaults,
  startPipelineStack,
  startTestWorker,
  testConfig,
  type PipelineStack,
  type TestWorker,
} from '../support/pipeline-harness.js';
import { startSandboxDoor, type SandboxDoor } from '../support/sandbox-door.js';

let stack: PipelineStack;
let sandbox: RunningSandbox;
let client: Client;
let door: SandboxDoor;
let config: EnrichflowConfig;
let worker: TestWorker;

beforeAll(async () => {
  stack = await startPipelineStack();
  ({ sandbox, client } = stack);
  // This file's worker reaches the sandbox through a door that counts what the service received.
  door = await startSandboxDoor(sandbox.url);
  config = testConfig(door.url);
  worker = await startTestWorker(config);
});

afterAll(async () => {
  await setFaults(sandbox, []);
  await worker?.stop();
  await door?.close();
  await stack?.stop();
});

const matchCalls = (from: number) =>
  door.requests.slice(from).filter((r) => r.path.startsWith('/v1/businesses/match')).length;

test(
  'a cancelled run started again takes the batches its first attempt finished and calls only the rest',
  { timeout: 180_000 },
  async () => {
    const spec = validateJobSpec(
      {
        job_name: 'restart-reuse',
        input: { location: stack.input },
        datasets: ['firmographics'],
        output: s3Location('restarted'),
      },
      'test',
    );
    // The first attempt matches every row, then hangs on firmographics until it is cancelled.
    await setFaults(sandbox, [{ match: 'bulkEnrichFirmographics', kind: 'hang' }]);
    const before = door.requests.length;
    const first = await startRun(client, config, spec);
    expect(first.started).toBe(true);
    const handle = client.workflow.getHandle(first.runId);
    await expect
      .poll(async () => (await handle.query(runProgressQuery)).stages.match?.doneBatches ?? 0, {
        timeout: 60_000,
        interval: 200,
      })
      .toBeGreaterThan(0);
    const matchedFirst = matchCalls(before);
    expect(matchedFirst).toBeGreaterThan(0);
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow();

    // The same command, once the service answers again: a new attempt under the same run id.
    await setFaults(sandbox, []);
    const between = door.requests.length;
    const again = await startRun(client, config, spec);
    expect(again).toMatchObject({ runId: first.runId, started: true, restartedAfter: 'cancelled' });
    const summary = (await client.workflow.getHandle(first.runId).result()) as RunSummary;
    expect(summary.status).toBe('completed');
    // No match batch went to the service again, and the run's counts say so.
    expect(matchCalls(between)).toBe(0);
    const match = summary.stages.find((s) => s.stage === 'match')!;
    expect(match.calls).toBe(0);
    expect(match.records + match.misses).toBe(summary.plan.uniqueKeys);
    // Every row is in matches, each matched id in firmographics once.
    const matches = await readTable<{ n: number }>(
      config,
      summary.outputPrefix,
      'matches',
      'SELECT count(*) AS n FROM t',
    );
    expect(Number(matches.rows[0]?.n)).toBe(summary.plan.inputRows - summary.plan.rejectedRows);
    const firmographics = await readTable<{ n: number; d: number }>(
      config,
      summary.outputPrefix,
      'firmographics',
      'SELECT count(*) AS n, count(DISTINCT business_id) AS d FROM t',
    );
    expect(Number(firmographics.rows[0]?.n)).toBe(Number(firmographics.rows[0]?.d));
    expect(Number(firmographics.rows[0]?.n)).toBe(
      summary.stages.find((s) => s.stage === 'firmographics')!.records,
    );
  },
);
