// Run states mean what they say, against the real servers: `_SUCCESS` only for a complete run (a run
// completed with failures gets its manifest and report, and its `_SUCCESS` once `runs retry` completes
// it), the opt-in marker for partial runs (flag and job-spec field) whose body states the status, and a
// failed run started again by the command that started it.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { stringify } from 'yaml';
import type { EnrichflowConfig } from '../../config/index.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import { storeResolverFor } from '../../workers/worker.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import {
  readJson,
  s3Location,
  SAMPLE_COMPANIES,
  setFaults,
  startTestSandbox,
  startTestWorker,
  testConfig,
  uploadFile,
  type TestWorker,
} from '../support/pipeline-harness.js';

let sandbox: RunningSandbox;
let config: EnrichflowConfig;
let worker: TestWorker;
let dir: string;
let input: string;

const cli = (...args: string[]) => runCliInProcess(config, args);
const FAIL_FIRMOGRAPHICS = [{ match: 'bulkEnrichFirmographics', kind: 'error', status: 500 }];

beforeAll(async () => {
  sandbox = await startTestSandbox();
  config = testConfig(sandbox.url);
  worker = await startTestWorker(config);
  dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-states-'));
  const lines = readFileSync(SAMPLE_COMPANIES, 'utf8').split('\n').slice(0, 31);
  const local = path.join(dir, 'companies.csv');
  writeFileSync(local, `${lines.join('\n')}\n`);
  input = `${s3Location('states-in')}companies.csv`;
  await uploadFile(config, input, local);
});

afterEach(async () => setFaults(sandbox, []));

afterAll(async () => {
  await worker?.stop();
  await sandbox?.close();
});

/** A job spec file whose firmographics calls are tried once, so failures are quick. */
function jobFile(name: string, extra: Record<string, unknown> = {}): { file: string; output: string } {
  const output = s3Location(name);
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    stringify({
      job_name: name,
      input: { location: input },
      datasets: ['firmographics'],
      output,
      api_retry: { maximum_attempts: 1 },
      ...extra,
    }),
  );
  return { file, output };
}

async function exists(location: string): Promise<boolean> {
  const { store, prefix } = storeResolverFor(config)(location);
  return store.exists(prefix);
}

function runIdOf(stderr: string): string {
  return /started run (\S+)/.exec(stderr)![1]!;
}

test(
  'completed with failures: manifest and report, no _SUCCESS until runs retry completes it',
  {
    timeout: 180_000,
  },
  async () => {
    await setFaults(sandbox, FAIL_FIRMOGRAPHICS);
    const { file, output } = jobFile('states-partial');
    const ran = await cli('run', file);
    expect(ran.code, ran.stderr).toBe(1);
    const runId = runIdOf(ran.stderr);
    const prefix = `${output}${runId}/`;
    const manifest = await readJson<{ status: string }>(config, `${prefix}manifest.json`);
    expect(manifest.status).toBe('completed_with_failures');
    expect(await exists(`${prefix}report.md`)).toBe(true);
    expect(await exists(`${prefix}_SUCCESS`)).toBe(false);

    await setFaults(sandbox, []);
    const retried = await cli('runs', 'retry', runId);
    expect(retried.code, retried.stderr).toBe(0);
    expect(await readJson(config, `${prefix}_SUCCESS`)).toMatchObject({ run_id: runId, status: 'completed' });
    expect((await readJson<{ status: string }>(config, `${prefix}manifest.json`)).status).toBe('completed');
  },
);

test(
  'opting in: a _SUCCESS for a partial run states its status (flag and job-spec field)',
  {
    timeout: 180_000,
  },
  async () => {
    await setFaults(sandbox, FAIL_FIRMOGRAPHICS);
    const { file, output } = jobFile('states-optin-spec', { success_marker: 'always' });
    const bySpec = await cli('run', file);
    expect(bySpec.code, bySpec.stderr).toBe(1);
    const specRun = runIdOf(bySpec.stderr);
    expect(await readJson(config, `${output}${specRun}/_SUCCESS`)).toMatchObject({
      run_id: specRun,
      status: 'completed_with_failures',
    });

    const flagOutput = s3Location('states-optin-flag');
    const byFlag = await cli(
      'enrich',
      '--input',
      input,
      '--datasets',
      'firmographics',
      '--output',
      flagOutput,
      '--job-name',
      'states-optin-flag',
      '--max-calls',
      '1',
      '--success-marker',
      'always',
    );
    expect(byFlag.code, byFlag.stderr).toBe(3);
    const flagRun = runIdOf(byFlag.stderr);
    expect(await readJson(config, `${flagOutput}${flagRun}/_SUCCESS`)).toMatchObject({
      status: 'stopped_at_budget',
    });

    const wrong = await cli('run', jobFile('states-bad-marker', { success_marker: 'sometimes' }).file);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('success_marker');
  },
);

test(
  'a failed run is started again by the same command, under its run id',
  { timeout: 180_000 },
  async () => {
    // A worker with a key the service refuses fails the run; then the same command, with a worker that
    // has the right key on the same task queues, starts a new attempt that completes.
    const badKey = testConfig(sandbox.url, { ENRICHFLOW_API_KEY: 'not-a-key' });
    const queues = {
      ENRICHFLOW_TASK_QUEUE: badKey.temporal.taskQueue,
      ENRICHFLOW_API_TASK_QUEUE: badKey.temporal.apiTaskQueue,
    };
    const { file, output } = jobFile('states-restart');
    const badWorker = await startTestWorker(badKey);
    let failed;
    try {
      failed = await runCliInProcess(badKey, ['run', file]);
    } finally {
      await badWorker.stop();
    }
    expect(failed.code, failed.stderr).toBe(1);
    const runId = runIdOf(failed.stderr);
    expect(failed.stderr).toContain(`run ${runId}: failed`);

    const goodConfig = testConfig(sandbox.url, queues);
    const goodWorker = await startTestWorker(goodConfig);
    try {
      const again = await runCliInProcess(goodConfig, ['run', file]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(
        `run ${runId} had failed; started it again (a new attempt under the same run id)`,
      );
      expect(await readJson(config, `${output}${runId}/_SUCCESS`)).toMatchObject({ status: 'completed' });
    } finally {
      await goodWorker.stop();
    }
  },
);
