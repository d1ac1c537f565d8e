// The documented `--json` shapes (README, "Machine-readable output"), parsed as a script would: the
// dry-run plan, `runs list`, `runs show` of a running run, `schedule list` and `schedule describe`.
// (`runs show --json` of the closed states is in outcomes.e2e.test.ts.)
import type { Client } from '@temporalio/client';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { stringify } from 'yaml';
import type { EnrichflowConfig } from '../../config/index.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import {
  s3Location,
  SAMPLE_COMPANIES,
  setFaults,
  startTestSandbox,
  startTestWorker,
  temporalClient,
  testConfig,
  uploadFile,
  type TestWorker,
} from '../support/pipeline-harness.js';

let sandbox: RunningSandbox;
let config: EnrichflowConfig;
let worker: TestWorker;
let client: Client;
let dir: string;
let input: string;
const suffix = Math.random().toString(36).slice(2, 7);

const cli = (...args: string[]) => runCliInProcess(config, args);

async function json<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const result = await cli(...args);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

const keys = (value: object) => Object.keys(value).sort();

beforeAll(async () => {
  sandbox = await startTestSandbox();
  config = testConfig(sandbox.url);
  worker = await startTestWorker(config);
  client = await temporalClient();
  dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-json-'));
  const lines = readFileSync(SAMPLE_COMPANIES, 'utf8').split('\n').slice(0, 21);
  const local = path.join(dir, 'companies.csv');
  writeFileSync(local, `${lines.join('\n')}\n`);
  input = `${s3Location('json-in')}companies.csv`;
  await uploadFile(config, input, local);
});

afterAll(async () => {
  await setFaults(sandbox, []);
  await worker?.stop();
  await client?.connection.close();
  await sandbox?.close();
});

test('the dry-run plan', async () => {
  const plan = await json(
    'enrich',
    '--input',
    input,
    '--datasets',
    'firmographics,company_hierarchies',
    '--output',
    s3Location('json-plan'),
    '--max-calls',
    '3',
    '--dry-run',
    '--json',
  );
  expect(keys(plan)).toEqual(
    [
      'dryRun',
      'job',
      'input',
      'output',
      'inputRows',
      'rejectedRows',
      'uniqueKeys',
      'idsProvided',
      'stages',
      'maxCalls',
      'maxCredits',
      'prices',
      'budget',
      'notes',
    ].sort(),
  );
  expect(plan).toMatchObject({ dryRun: true, inputRows: 20, idsProvided: false, budget: { maxCalls: 3 } });
  const stages = plan.stages as Record<string, unknown>[];
  expect(stages.map((s) => s.stage)).toEqual(['match', 'firmographics', 'company_hierarchies']);
  for (const stage of stages) {
    expect(keys(stage)).toEqual(
      ['stage', 'items', 'batchSize', 'calls', 'exact', 'creditsPerRecord', 'maxCredits'].sort(),
    );
  }
});

test('runs list and runs show of a running run', { timeout: 120_000 }, async () => {
  await setFaults(sandbox, [{ match: 'bulkEnrich*', kind: 'latency', latencyMs: 30_000 }]);
  const started = await cli(
    'enrich',
    '--input',
    input,
    '--datasets',
    'firmographics',
    '--output',
    s3Location('json-running'),
    '--job-name',
    `json-running-${suffix}`,
    '--no-wait',
    '--json',
  );
  expect(started.code, started.stderr).toBe(0);
  const { runId } = JSON.parse(started.stdout) as { runId: string };
  const handle = client.workflow.getHandle(runId);
  try {
    const shown = await json('runs', 'show', runId, '--json');
    expect(shown).toMatchObject({ runId, status: 'running' });
    expect(keys(shown)).toEqual(['runId', 'status', 'run', 'stages'].sort());
    expect(shown.run).toMatchObject({ runId });
    expect(shown.stages).toBeInstanceOf(Array);

    // Visibility lags a start by a moment: wait for the run to be listed.
    let listed: Record<string, unknown>[] = [];
    for (let tries = 0; tries < 100; tries++) {
      listed = await json<Record<string, unknown>[]>('runs', 'list', '--json', '--limit', '200');
      if (listed.some((r) => r.runId === runId)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const row = listed.find((r) => r.runId === runId)!;
    expect(keys(row)).toEqual(
      ['runId', 'kind', 'status', 'startTime', 'closeTime', 'jobName', 'datasets', 'input', 'output'].sort(),
    );
    expect(row).toMatchObject({
      kind: 'enrich',
      status: 'RUNNING',
      closeTime: null,
      datasets: ['firmographics'],
    });
    expect(Number.isNaN(Date.parse(String(row.startTime)))).toBe(false);
  } finally {
    await handle.cancel();
    await handle.result().catch(() => undefined);
  }
});

test('schedule list and describe', { timeout: 60_000 }, async () => {
  const id = `json-schedule-${suffix}`;
  const job = path.join(dir, 'job.yaml');
  writeFileSync(
    job,
    stringify({
      job_name: id,
      input: { location: input },
      datasets: ['firmographics'],
      output: s3Location('json-sched'),
    }),
  );
  const created = await cli('schedule', 'create', job, '--cron', '0 6 * * *', '--paused', '--note', 'json');
  expect(created.code, created.stderr).toBe(0);
  try {
    const described = await json('schedule', 'describe', id, '--json');
    const documented = [
      'scheduleId',
      'paused',
      'note',
      'timing',
      'overlap',
      'catchupWindowSeconds',
      'pauseOnFailure',
      'job',
      'nextActionTimes',
      'recentRuns',
    ].sort();
    expect(keys(described)).toEqual(documented);
    expect(described).toMatchObject({
      scheduleId: id,
      paused: true,
      note: 'json',
      timing: 'cron "0 6 * * *" (UTC)',
      overlap: 'SKIP',
      catchupWindowSeconds: 86_400,
      pauseOnFailure: false,
      job: { jobName: id, input, datasets: ['firmographics'] },
      recentRuns: [],
    });
    expect(Number.isNaN(Date.parse((described.nextActionTimes as string[])[0]!))).toBe(false);

    const listed = await json<Record<string, unknown>[]>('schedule', 'list', '--json');
    const entry = listed.find((s) => s.scheduleId === id)!;
    expect(keys(entry)).toEqual(documented);
    expect(entry).toMatchObject({ paused: true, job: { jobName: id } });
  } finally {
    await client.schedule.getHandle(id).delete();
  }
});
