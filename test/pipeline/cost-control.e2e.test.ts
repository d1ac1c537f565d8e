// Cost control on the real stack: a call budget stops a run ("stopped at budget", no `_SUCCESS`) and a
// retry resumes it to the same output a run without a budget gives; a 403 for credits pauses the run
// instead of failing batches, and `resume` after a top-up finishes it.
import type { Client } from '@temporalio/client';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { DataServiceClient } from '../../client/index.js';
import type { EnrichflowConfig } from '../../config/index.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import { validateJobSpec } from '../../jobs/job-spec.js';
import { startRun } from '../../cli/start-run.js';
import {
  QUERY_PROGRESS,
  SIGNAL_RESUME,
  type RunProgress,
  type RunSummary,
} from '../../pipeline/run-types.js';
import {
  matchedIds,
  objectExists,
  readJson,
  readTable,
  s3Location,
  setFaults,
  uploadFile,
  SAMPLE_COMPANIES,
  startPipelineStack,
  type PipelineStack,
} from '../support/pipeline-harness.js';

const SAMPLE = SAMPLE_COMPANIES;

let stack: PipelineStack;
let sandbox: RunningSandbox;
let config: EnrichflowConfig;
let client: Client;
let service: DataServiceClient;
let input: string;

beforeAll(async () => {
  stack = await startPipelineStack();
  ({ sandbox, config, client, service, input } = stack);
});

afterAll(async () => stack?.stop());

const exists = (location: string) => objectExists(config, location);

/** The service's firmographics ids for every business id the run's matches table holds. */
async function expectedFirmographics(outputPrefix: string): Promise<string[]> {
  const ids = await matchedIds(config, outputPrefix);
  const found: string[] = [];
  for (let i = 0; i < ids.length; i += 50) {
    const { body } = await service.bulkEnrich('firmographics', { business_ids: ids.slice(i, i + 50) });
    found.push(...(body.data ?? []).map((d) => d.business_id));
  }
  return found.sort();
}

async function firmographicsIds(outputPrefix: string): Promise<string[]> {
  const table = await readTable<{ business_id: string }>(
    config,
    outputPrefix,
    'firmographics',
    'SELECT business_id FROM t ORDER BY business_id',
  );
  return table.rows.map((r) => r.business_id);
}

const totalCalls = (summary: RunSummary) => summary.stages.reduce((sum, s) => sum + s.calls, 0);

describe('--max-calls', () => {
  test('stops the run at the budget (even mid-match), and a retry resumes it to a complete output', async () => {
    const spec = validateJobSpec(
      {
        job_name: 'budget',
        input: { location: input },
        datasets: ['firmographics'],
        output: s3Location('budget'),
        window_size: 2,
        max_calls: 3,
      },
      'test',
    );
    const { runId } = await startRun(client, config, spec);
    const stopped = (await client.workflow.getHandle(runId).result()) as RunSummary;
    expect(stopped.status).toBe('stopped_at_budget');
    expect(totalCalls(stopped)).toBe(3);
    const match = stopped.stages.find((s) => s.stage === 'match')!;
    expect(match.doneBatches).toBe(3);
    expect(match.unstarted).toMatchObject({ next: 3, batches: match.totalBatches - 3 });
    const firmographics = stopped.stages.find((s) => s.stage === 'firmographics')!;
    expect(firmographics.calls).toBe(0);
    expect(firmographics.unstarted?.batches).toBe(firmographics.totalBatches);
    // Incomplete output: a manifest that says so, and no `_SUCCESS` for readers to trust.
    expect(await exists(`${stopped.outputPrefix}_SUCCESS`)).toBe(false);
    const manifest = await readJson<{ status: string; counts: { unstarted_batches: number; calls: number } }>(
      config,
      `${stopped.outputPrefix}manifest.json`,
    );
    expect(manifest.status).toBe('stopped_at_budget');
    expect(manifest.counts.calls).toBe(3);
    expect(manifest.counts.unstarted_batches).toBeGreaterThan(0);

    // Resume under a budget that is still too small, then without one.
    const second = (await client.workflow.execute('retryRunWorkflow', {
      workflowId: `${runId}.resume-1`,
      taskQueue: config.temporal.taskQueue,
      args: [{ previous: stopped, apiTaskQueue: config.temporal.apiTaskQueue, maxCalls: 4 }],
    })) as RunSummary;
    expect(second.status).toBe('stopped_at_budget');
    expect(totalCalls(second) - totalCalls(stopped)).toBe(4);
    const done = (await client.workflow.execute('retryRunWorkflow', {
      workflowId: `${runId}.resume-2`,
      taskQueue: config.temporal.taskQueue,
      args: [{ previous: second, apiTaskQueue: config.temporal.apiTaskQueue }],
    })) as RunSummary;
    expect(done.status).toBe('completed');
    expect(done.stages.every((s) => s.unstarted === undefined)).toBe(true);
    // Every batch was called once across the three executions: no batch twice, none left out.
    const doneMatch = done.stages.find((s) => s.stage === 'match')!;
    const doneFirmo = done.stages.find((s) => s.stage === 'firmographics')!;
    expect(doneMatch.calls).toBe(doneMatch.totalBatches);
    expect(doneFirmo.calls).toBe(doneFirmo.totalBatches);
    expect(await exists(`${done.outputPrefix}_SUCCESS`)).toBe(true);
    expect(done.enrichPlan.matchedRows).toBeGreaterThan(240);
    expect(await firmographicsIds(done.outputPrefix)).toEqual(await expectedFirmographics(done.outputPrefix));
  }, 180_000);
});

describe('insufficient credits', () => {
  afterAll(async () => setFaults(sandbox, []));

  test('a 403 for credits pauses the run without failing batches; resume after a top-up finishes it', async () => {
    await setFaults(sandbox, [{ match: 'bulkEnrichFirmographics', kind: 'no_credits' }]);
    const spec = validateJobSpec(
      {
        job_name: 'credits',
        input: { location: input },
        datasets: ['firmographics'],
        output: s3Location('credits'),
        window_size: 2,
      },
      'test',
    );
    const { runId } = await startRun(client, config, spec);
    const handle = client.workflow.getHandle(runId);
    let progress: RunProgress | undefined;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      progress = await handle.query<RunProgress>(QUERY_PROGRESS);
      if (progress.paused) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(progress?.stage).toBe('paused');
    expect(progress?.paused).toMatchObject({ stage: 'firmographics' });
    expect(progress?.paused?.reason).toMatch(/insufficient credits/);
    // Paused, not retrying: no batch is recorded as failed, and no call is made while the run waits.
    const stageProgress = () =>
      client.workflow
        .getHandle(`${runId}/firmographics`)
        .query<{ calls: number; failedBatches: number; inFlight: number }>(QUERY_PROGRESS);
    await new Promise((r) => setTimeout(r, 1_000));
    const first = await stageProgress();
    await new Promise((r) => setTimeout(r, 2_000));
    const second = await stageProgress();
    expect(first.failedBatches).toBe(0);
    expect(first.inFlight).toBe(0);
    expect(first.calls).toBeLessThanOrEqual(2);
    expect(second.calls).toBe(first.calls);

    await setFaults(sandbox, []);
    await handle.signal(SIGNAL_RESUME);
    const summary = (await handle.result()) as RunSummary;
    expect(summary.status).toBe('completed');
    expect(summary.failedBatches).toBe(0);
    expect(await firmographicsIds(summary.outputPrefix)).toEqual(
      await expectedFirmographics(summary.outputPrefix),
    );
  });
});

describe('incremental runs (--max-age)', () => {
  test('a second run into the same output calls the service only for ids the ledger does not hold fresh', async () => {
    const output = s3Location('incremental');
    // The first run sees the first half of the sample; the second the whole sample.
    const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-incremental-'));
    const lines = readFileSync(SAMPLE, 'utf8').trimEnd().split('\n');
    const half = path.join(dir, 'half.csv');
    writeFileSync(half, `${lines.slice(0, 151).join('\n')}\n`);
    const halfInput = `${s3Location('inputs')}half.csv`;
    await uploadFile(config, halfInput, half);
    rmSync(dir, { recursive: true, force: true });
    const run = async (location: string, jobName: string) => {
      const { runId } = await startRun(
        client,
        config,
        validateJobSpec(
          { job_name: jobName, input: { location }, datasets: ['firmographics'], output, max_age: '30d' },
          'test',
        ),
      );
      return (await client.workflow.getHandle(runId).result()) as RunSummary;
    };
    const first = await run(halfInput, 'incremental-a');
    expect(first.status).toBe('completed');
    expect(first.enrichPlan.stages[0]?.skippedFresh).toBe(0);
    const firstIds = new Set(await matchedIds(config, first.outputPrefix));

    const second = await run(input, 'incremental-b');
    expect(second.status).toBe('completed');
    const secondIds = await matchedIds(config, second.outputPrefix);
    const fresh = secondIds.filter((id) => firstIds.has(id));
    const newIds = secondIds.filter((id) => !firstIds.has(id));
    expect(fresh.length).toBeGreaterThan(100);
    expect(newIds.length).toBeGreaterThan(100);
    const stage = second.stages.find((s) => s.stage === 'firmographics')!;
    expect(second.enrichPlan.stages[0]?.skippedFresh).toBe(fresh.length);
    expect(stage.calls).toBe(Math.ceil(newIds.length / 50));
    expect(stage.records + stage.misses).toBe(newIds.length);
    // The second run's table holds the new ids the service has data for, and nothing else.
    const table = await firmographicsIds(second.outputPrefix);
    expect(table.every((id) => newIds.includes(id))).toBe(true);
    expect(table.length).toBe(stage.records);
    // The ledger next to the outputs now knows every id of both runs, each once.
    const ledger = await readTable<{ n: string; d: string }>(
      config,
      output,
      '_ledger',
      'SELECT count(*) AS n, count(DISTINCT business_id) AS d FROM t',
    );
    expect(Number(ledger.rows[0]?.n)).toBe(new Set([...firstIds, ...secondIds]).size);
    expect(ledger.rows[0]?.d).toBe(ledger.rows[0]?.n);
  }, 180_000);
});
