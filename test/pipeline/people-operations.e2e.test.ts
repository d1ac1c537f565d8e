// People runs have what company runs have, through the same code, on one shared stack (the real
// Temporal dev server, S3 server and sandbox over HTTP) with the sample people list (300 rows) or its
// first half: a call budget stops a people run and `runs retry` under a new budget finishes it; a 403 for
// credits pauses it and `runs resume` completes it; `--max-age` skips the prospect ids a dataset's
// ledger holds fresh; a schedule of a people job runs and writes its tables; a worker killed mid-run
// loses nothing. Expectations come from the sample's generator: which prospect each row names.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { stringify } from 'yaml';
import { startRun } from '../../cli/start-run.js';
import type { EnrichflowConfig } from '../../config/index.js';
import { validateJobSpec } from '../../jobs/job-spec.js';
import {
  QUERY_PROGRESS,
  type RunProgress,
  type RunSummary,
  type StageProgress,
} from '../../pipeline/run-types.js';
import { samplePeople } from '../../sandbox/sample-people.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import {
  objectExists,
  readJson,
  readTable,
  s3Location,
  setFaults,
  spawnWorkerProcess,
  startPipelineStack,
  startTestWorker,
  testConfig,
  uploadFile,
  waitFor,
  type PipelineStack,
} from '../support/pipeline-harness.js';

/** The people datasets these runs enrich (the posts stay out: they add calls, not paths). */
const DATASETS = ['profiles', 'contacts_information'] as const;

const SAMPLE = fileURLToPath(new URL('../../samples/people.csv', import.meta.url));
const HALF_ROWS = 150;

let stack: PipelineStack;
/** The whole sample and its first half, uploaded. */
let full: string;
let half: string;
/** Row number → the prospect id the row names (null: unknown), for usable rows; per input. */
let fullExpected: Map<number, string | null>;
let halfExpected: Map<number, string | null>;
/** A worker process of its own task queues, started early (it bundles its workflows at start). */
let killConfig: EnrichflowConfig;
let doomed: ChildProcess | undefined;

const idsOf = (expected: Map<number, string | null>) =>
  new Set([...expected.values()].filter((id): id is string => id !== null));
const totalCalls = (summary: RunSummary) => summary.stages.reduce((sum, s) => sum + s.calls, 0);

beforeAll(async () => {
  stack = await startPipelineStack();
  killConfig = testConfig(stack.sandbox.url);
  doomed = spawnWorkerProcess(killConfig);
  const sample = samplePeople();
  const usable = (rows: typeof sample.rows) =>
    new Map(
      rows.flatMap((r, i) =>
        r.kind === 'unusable' ? [] : [[i + 1, r.prospectId] as [number, string | null]],
      ),
    );
  fullExpected = usable(sample.rows);
  halfExpected = usable(sample.rows.slice(0, HALF_ROWS));
  const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-people-ops-'));
  const lines = readFileSync(SAMPLE, 'utf8').trimEnd().split('\n');
  const halfFile = path.join(dir, 'people-half.csv');
  writeFileSync(halfFile, `${lines.slice(0, HALF_ROWS + 1).join('\n')}\n`);
  full = `${s3Location('inputs')}people.csv`;
  half = `${s3Location('inputs')}people-half.csv`;
  await uploadFile(stack.config, full, SAMPLE);
  await uploadFile(stack.config, half, halfFile);
});

afterAll(async () => {
  doomed?.kill('SIGKILL');
  if (stack) await setFaults(stack.sandbox, []);
  await stack?.stop();
});

function peopleSpec(input: string, output: string, extra: Record<string, unknown> = {}) {
  return validateJobSpec(
    {
      job_name: 'people-ops',
      input: { location: input, entity: 'prospects' },
      datasets: [...DATASETS],
      output,
      ...extra,
    },
    'test',
  );
}

/** prospect_matches as row number → prospect id. */
async function matchesOf(summary: RunSummary): Promise<Map<number, string | null>> {
  const { rows } = await readTable<{ row_number: bigint; prospect_id: string | null }>(
    stack.config,
    summary.outputPrefix,
    'prospect_matches',
  );
  return new Map(rows.map((r) => [Number(r.row_number), r.prospect_id]));
}

/** The prospect ids of a dataset table, checking that each appears once. */
async function tableIds(summary: RunSummary, dataset: string): Promise<Set<string>> {
  const { rows } = await readTable<{ prospect_id: string }>(stack.config, summary.outputPrefix, dataset);
  const ids = rows.map((r) => r.prospect_id);
  expect(new Set(ids).size, `${dataset}: one row per prospect id`).toBe(ids.length);
  return new Set(ids);
}

/** The stage's record and miss counts add up to the run's prospect ids, and its table holds the records. */
async function expectComplete(summary: RunSummary, expected: Map<number, string | null>): Promise<void> {
  expect(summary.status).toBe('completed');
  expect(summary.failedBatches).toBe(0);
  expect(await objectExists(stack.config, `${summary.outputPrefix}_SUCCESS`)).toBe(true);
  expect(await matchesOf(summary)).toEqual(expected);
  const ids = idsOf(expected);
  expect(summary.enrichPlan.uniqueIds).toBe(ids.size);
  // Every prospect has a profile; contact information only some.
  expect(await tableIds(summary, 'profiles')).toEqual(ids);
  const contacts = await tableIds(summary, 'contacts_information');
  expect([...contacts].every((id) => ids.has(id))).toBe(true);
  expect(contacts.size).toBe(summary.stages.find((s) => s.stage === 'contacts_information')!.records);
}

describe('a people run under a call budget', () => {
  test('stops at the budget mid-match, without _SUCCESS; runs retry --max-calls finishes it, each batch called once', async () => {
    const spec = peopleSpec(full, s3Location('people-budget'), { window_size: 2, max_calls: 3 });
    const { runId } = await startRun(stack.client, stack.config, spec);
    const stopped = (await stack.client.workflow.getHandle(runId).result()) as RunSummary;
    expect(stopped.status).toBe('stopped_at_budget');
    expect(totalCalls(stopped)).toBe(3);
    const match = stopped.stages.find((s) => s.stage === 'prospect_match')!;
    expect(match).toMatchObject({ doneBatches: 3, totalBatches: 6, unstarted: { batches: 3 } });
    expect(await objectExists(stack.config, `${stopped.outputPrefix}_SUCCESS`)).toBe(false);
    const manifest = await readJson<{ status: string }>(stack.config, `${stopped.outputPrefix}manifest.json`);
    expect(manifest.status).toBe('stopped_at_budget');

    const retried = await runCliInProcess(stack.config, ['runs', 'retry', runId, '--max-calls', '20']);
    expect(retried.code, retried.stderr).toBe(0);
    const retryId = / as (\S+\.retry-\w+)/.exec(retried.stderr)?.[1];
    expect(retryId).toBeDefined();
    const done = (await stack.client.workflow.getHandle(retryId!).result()) as RunSummary;
    await expectComplete(done, fullExpected);
    // 6 match calls and 6 per dataset in all, across the run and its retry: none twice, none left out.
    expect(done.stages.map((s) => [s.stage, s.calls, s.totalBatches])).toEqual([
      ['prospect_match', 6, 6],
      ['profiles', 6, 6],
      ['contacts_information', 6, 6],
    ]);
  });
});

describe('credits, then --max-age, into one output', () => {
  const output = s3Location('people-incremental');
  let first: RunSummary;

  test('a 403 for credits on profiles pauses the run with no failed batch; runs resume completes it', async () => {
    await setFaults(stack.sandbox, [{ match: 'bulkEnrichProspectProfiles', kind: 'no_credits' }]);
    const { runId } = await startRun(
      stack.client,
      stack.config,
      peopleSpec(half, output, { window_size: 2 }),
    );
    const handle = stack.client.workflow.getHandle(runId);
    let progress: RunProgress | undefined;
    await waitFor(async () => {
      progress = await handle.query<RunProgress>(QUERY_PROGRESS);
      return progress.paused !== undefined;
    }, 60_000);
    expect(progress?.stage).toBe('paused');
    expect(progress?.paused).toMatchObject({ stage: 'profiles' });
    expect(progress?.paused?.reason).toMatch(/insufficient credits/);
    const profiles = await stack.client.workflow
      .getHandle(`${runId}/profiles`)
      .query<StageProgress>(QUERY_PROGRESS);
    expect(profiles.failedBatches).toBe(0);

    await setFaults(stack.sandbox, []);
    const resumed = await runCliInProcess(stack.config, ['runs', 'resume', runId]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`resume sent to ${runId} (paused at profiles`);
    first = (await handle.result()) as RunSummary;
    await expectComplete(first, halfExpected);
  });

  test('a second run with --max-age skips the prospect ids each dataset ledger holds fresh', async () => {
    expect(first?.status).toBe('completed');
    const before = idsOf(halfExpected);
    const all = idsOf(fullExpected);
    const { runId } = await startRun(
      stack.client,
      stack.config,
      peopleSpec(full, output, { job_name: 'people-ops-2', max_age: '1h' }),
    );
    const second = (await stack.client.workflow.getHandle(runId).result()) as RunSummary;
    expect(second.status).toBe('completed');
    expect(await matchesOf(second)).toEqual(fullExpected);
    const fresh = [...all].filter((id) => !before.has(id));
    for (const dataset of DATASETS) {
      // Ids asked for in the first run count as seen, found or not.
      expect(second.enrichPlan.stages.find((s) => s.stage === dataset)?.skippedFresh, dataset).toBe(
        before.size,
      );
      const stage = second.stages.find((s) => s.stage === dataset)!;
      expect(stage.records + stage.misses, dataset).toBe(fresh.length);
      const ledger = await readTable<{ prospect_id: string; run_id: string }>(
        stack.config,
        output,
        `_ledger/${dataset}.parquet`,
      );
      expect(ledger.rows.length, `${dataset} ledger: one row per prospect id`).toBe(all.size);
      expect(new Set(ledger.rows.map((r) => r.prospect_id))).toEqual(all);
      expect(ledger.rows.filter((r) => r.run_id === runId).length).toBe(fresh.length);
    }
    // The dataset table of the second run holds only the ids enriched in it.
    expect(await tableIds(second, 'profiles')).toEqual(new Set(fresh));
  });
});

test('a schedule of a people job runs once when triggered and writes its tables', async () => {
  const suffix = Math.random().toString(36).slice(2, 7);
  const scheduleId = `people-daily-${suffix}`;
  const jobFile = path.join(mkdtempSync(path.join(tmpdir(), 'enrichflow-people-schedule-')), 'people.yaml');
  const output = s3Location('people-scheduled');
  writeFileSync(
    jobFile,
    stringify({
      job_name: scheduleId,
      input: { location: half, entity: 'prospects' },
      datasets: [...DATASETS],
      output,
    }),
  );
  const cli = (...args: string[]) => runCliInProcess(stack.config, args);
  const created = await cli('schedule', 'create', jobFile, '--every', '1d');
  expect(created.code, created.stderr).toBe(0);
  try {
    const triggered = await cli('schedule', 'trigger', scheduleId);
    expect(triggered.code, triggered.stderr).toBe(0);
    const runId = triggered.stdout.trim();
    expect(runId.startsWith(`${scheduleId}-`)).toBe(true);
    const summary = (await stack.client.workflow.getHandle(runId).result()) as RunSummary;
    expect(summary.outputPrefix).toBe(`${output}${runId}/`);
    await expectComplete(summary, halfExpected);
    expect(summary.tables.map((t) => t.table).sort()).toEqual(
      ['contacts_information', 'failures', 'profiles', 'prospect_matches', 'rejects'].sort(),
    );
  } finally {
    expect((await cli('schedule', 'delete', scheduleId)).code).toBe(0);
  }
});

test('a worker killed mid-run: a new worker finishes the run, one row per prospect id', async () => {
  // Slow dataset calls, so the kill lands while batches are in flight.
  await setFaults(stack.sandbox, [{ match: 'bulkEnrichProspect*', kind: 'latency', latencyMs: 400 }]);
  const { runId } = await startRun(
    stack.client,
    killConfig,
    peopleSpec(full, s3Location('people-killed'), { window_size: 2 }),
  );
  await waitFor(async () => {
    const progress = await stack.client.workflow
      .getHandle(`${runId}/profiles`)
      .query<StageProgress>(QUERY_PROGRESS);
    return progress.doneBatches >= 1 && progress.inFlight > 0;
  }, 60_000);
  const worker = doomed!;
  worker.kill('SIGKILL');
  await new Promise((resolve) => worker.once('exit', resolve));
  await setFaults(stack.sandbox, []);
  const replacement = await startTestWorker(killConfig);
  try {
    const summary = (await stack.client.workflow.getHandle(runId).result()) as RunSummary;
    await expectComplete(summary, fullExpected);
    for (const dataset of DATASETS) {
      const stage = summary.stages.find((s) => s.stage === dataset)!;
      expect(stage.records + stage.misses, dataset).toBe(summary.enrichPlan.uniqueIds);
    }
  } finally {
    await replacement.stop();
  }
});
