// How a run's end reaches the operator, against the real servers: the exit code of every outcome
// (0 done, 1 failed or completed with failures, 2 input, 3 stopped at budget or paused for credits,
// 130 interrupted), a failure as run id, status, where, the root cause in one line and the next command
// (never "Activity task failed", no stack unless --verbose), `runs show --json` in every state, and a
// cancelled run started again by the command that started it.
import type { Client } from '@temporalio/client';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { stringify } from 'yaml';
import type { EnrichflowConfig } from '../../config/index.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import { runCliInProcess, type CliResult } from '../support/cli-in-process.js';
import {
  cliEnv,
  runCli,
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

const cli = (...args: string[]) => runCliInProcess(config, args);

/** `runs show --json`, parsed, with its exit code. */
async function show(runId: string): Promise<{ code: number; json: Record<string, unknown> }> {
  const shown = await cli('runs', 'show', runId, '--json');
  return { code: shown.code, json: JSON.parse(shown.stdout) as Record<string, unknown> };
}

/** The CLI as a process of its own, as an operator runs it. */
async function child(cfg: EnrichflowConfig, ...args: string[]): Promise<CliResult> {
  const result = await runCli(cfg, ...args);
  return { ...result, code: result.code ?? -1 };
}

function expectNoStack(result: CliResult): void {
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stderr).not.toContain('Activity task failed');
  expect(result.stderr).not.toContain('unexpected error');
}

beforeAll(async () => {
  sandbox = await startTestSandbox();
  config = testConfig(sandbox.url);
  worker = await startTestWorker(config);
  client = await temporalClient();
  dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-outcomes-'));
  // 40 companies: a few calls per stage, so each run takes seconds.
  const lines = readFileSync(SAMPLE_COMPANIES, 'utf8').split('\n').slice(0, 41);
  const local = path.join(dir, 'companies.csv');
  writeFileSync(local, `${lines.join('\n')}\n`);
  input = `${s3Location('outcomes-in')}companies.csv`;
  await uploadFile(config, input, local);
});

afterEach(async () => setFaults(sandbox, []));

afterAll(async () => {
  await worker?.stop();
  await client?.connection.close();
  await sandbox?.close();
});

const enrich = (jobName: string, ...extra: string[]) => [
  'enrich',
  '--input',
  input,
  '--datasets',
  'firmographics',
  '--output',
  s3Location(jobName),
  '--job-name',
  jobName,
  ...extra,
];

async function waitForClose(runId: string): Promise<void> {
  await client.workflow
    .getHandle(runId)
    .result()
    .catch(() => undefined);
}

describe('exit codes and what is printed', () => {
  test('a completed run: 0, and `runs show --json` gives its summary', { timeout: 120_000 }, async () => {
    const done = await cli(...enrich('outcome-ok'));
    expect(done.code, done.stderr).toBe(0);
    const runId = /started run (\S+)/.exec(done.stderr)![1]!;
    const shown = await show(runId);
    expect(shown.code).toBe(0);
    expect(shown.json).toMatchObject({ runId, status: 'completed' });
    expect(shown.json.next).toBeUndefined();
    expect(shown.json.tables).toBeInstanceOf(Array);

    const listed = await cli('runs', 'list', '--json', '--limit', '100');
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(rows.find((r) => r.runId === runId)).toMatchObject({
      kind: 'enrich',
      status: 'COMPLETED',
      jobName: 'outcome-ok',
      datasets: ['firmographics'],
      input,
    });
  });

  test(
    'batches that fail after their retries: completed with failures, 1, and `runs retry` next',
    {
      timeout: 120_000,
    },
    async () => {
      await setFaults(sandbox, [{ match: 'bulkEnrichFirmographics', kind: 'error', status: 500 }]);
      const job = path.join(dir, 'failing.yaml');
      writeFileSync(
        job,
        stringify({
          job_name: 'outcome-failures',
          input: { location: input },
          datasets: ['firmographics'],
          output: s3Location('outcome-failures'),
          api_retry: { maximum_attempts: 1 },
        }),
      );
      const ran = await cli('run', job);
      expect(ran.code, ran.stderr).toBe(1);
      expect(ran.stdout).toContain('completed with failures');
      expect(ran.stdout).toContain('re-run them with: enrichflow runs retry');
      // Where and why, in one line: the stage, the batch and the service's answer.
      expect(ran.stdout).toMatch(
        /first failure: firmographics batch c\d+-b\d+, after 1 attempt: ServerError: /,
      );
      const runId = /started run (\S+)/.exec(ran.stderr)![1]!;
      const text = await cli('runs', 'show', runId);
      expect(text.stdout).toMatch(
        /first failure: firmographics batch c\d+-b\d+, after 1 attempt: ServerError: /,
      );
      const shown = await show(runId);
      expect(shown.code).toBe(1);
      expect(shown.json).toMatchObject({
        runId,
        status: 'completed_with_failures',
        next: `enrichflow runs retry ${runId}`,
      });
    },
  );

  test('a run stopped at its budget: 3', { timeout: 120_000 }, async () => {
    const stopped = await cli(...enrich('outcome-budget', '--max-calls', '1'));
    expect(stopped.code, stopped.stderr).toBe(3);
    expect(stopped.stdout).toContain('stopped at budget');
    const runId = /started run (\S+)/.exec(stopped.stderr)![1]!;
    const shown = await show(runId);
    expect(shown.code).toBe(3);
    expect(shown.json).toMatchObject({ runId, status: 'stopped_at_budget' });
    expect(String(shown.json.next)).toContain(`enrichflow runs retry ${runId}`);
  });

  test('a run paused for credits: 3, with `runs resume` next', { timeout: 120_000 }, async () => {
    await setFaults(sandbox, [{ match: 'bulkEnrichFirmographics', kind: 'no_credits' }]);
    // A child process: the in-process worker's own log lines would mix into this process's stderr.
    const paused = await child(config, ...enrich('outcome-paused'));
    expect(paused.code, paused.stderr).toBe(3);
    const runId = /started run (\S+)/.exec(paused.stderr)![1]!;
    expect(paused.stderr).toContain(`run ${runId}: paused at firmographics`);
    expect(paused.stderr).toContain(`enrichflow runs resume ${runId}`);
    expectNoStack(paused);
    const shown = await show(runId);
    expect(shown.code).toBe(3);
    expect(shown.json).toMatchObject({
      runId,
      status: 'paused',
      next: expect.stringContaining('runs resume') as unknown,
    });
    expect(shown.json.run).toMatchObject({ paused: { stage: 'firmographics' } });
    await setFaults(sandbox, []);
    const resumed = await cli('runs', 'resume', runId);
    expect(resumed.code, resumed.stderr).toBe(0);
    const watched = await cli('runs', 'watch', runId);
    expect(watched.code, watched.stdout).toBe(0);
  });

  test(
    'a run the service refuses the key of: 1, the cause in one line, the key named; a stack only with --verbose',
    {
      timeout: 120_000,
    },
    async () => {
      const badKey = testConfig(sandbox.url, { ENRICHFLOW_API_KEY: 'not-a-key' });
      const badWorker = await startTestWorker(badKey);
      try {
        const args = enrich('outcome-auth');
        const failed = await child(badKey, ...args);
        expect(failed.code, failed.stderr).toBe(1);
        const runId = /started run (\S+)/.exec(failed.stderr)![1]!;
        expect(failed.stderr).toContain(`run ${runId}: failed`);
        expect(failed.stderr).toMatch(/cause: AuthError: The Data Service rejected the API key/);
        expect(failed.stderr).toContain('next: fix ENRICHFLOW_API_KEY');
        expectNoStack(failed);

        const shown = await runCliInProcess(badKey, ['runs', 'show', runId, '--json']);
        expect(shown.code).toBe(1);
        expect(JSON.parse(shown.stdout)).toMatchObject({ runId, status: 'failed', type: 'AuthError' });

        const verbose = await runCliInProcess(badKey, ['runs', 'watch', runId, '--verbose']);
        expect(verbose.code).toBe(1);
        expect(verbose.stdout).toContain('cause: AuthError');
        const again = await child(badKey, ...args, '--verbose');
        expect(again.stderr).toMatch(/\n\s+at /);
      } finally {
        await badWorker.stop();
      }
    },
  );

  test(
    'a cancelled run: `runs show` says so and the same command starts it again under its id',
    {
      timeout: 180_000,
    },
    async () => {
      await setFaults(sandbox, [{ match: 'bulkEnrich*', kind: 'latency', latencyMs: 20_000 }]);
      const args = enrich('outcome-cancel');
      const started = await cli(...args, '--no-wait');
      expect(started.code, started.stderr).toBe(0);
      const runId = started.stdout.trim();
      const cancelled = await cli('runs', 'cancel', runId);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      await waitForClose(runId);
      const shown = await show(runId);
      expect(shown.code).toBe(1);
      expect(shown.json).toMatchObject({
        runId,
        status: 'cancelled',
        next: expect.stringContaining('start it again with the same command') as unknown,
      });

      await setFaults(sandbox, []);
      const again = await cli(...args);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(`run ${runId} had been cancelled; started it again`);
      expectNoStack(again);
      expect((await show(runId)).json).toMatchObject({ runId, status: 'completed' });
    },
  );
});

describe('processes', () => {
  test('Ctrl-C while following a run: 130, and the run goes on', { timeout: 120_000 }, async () => {
    await setFaults(sandbox, [{ match: 'bulkEnrich*', kind: 'latency', latencyMs: 20_000 }]);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bin/enrichflow-src.ts', ...enrich('outcome-interrupt')],
      { cwd: fileURLToPath(new URL('../..', import.meta.url)), env: cliEnv(config) },
    );
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) =>
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('started run')) resolve();
      }),
    );
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const runId = /started run (\S+)/.exec(stderr)![1]!;
    expect(stderr).toContain(`stopped following run ${runId}; it goes on`);
    const { status } = await client.workflow.getHandle(runId).describe();
    expect(status.name).toBe('RUNNING');
    await client.workflow.getHandle(runId).cancel();
    await waitForClose(runId);
  });

  test('Temporal unreachable: one line naming the address, no stack', { timeout: 60_000 }, async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const listed = await runCliInProcess(config, ['runs', 'list'], {
      ENRICHFLOW_TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    });
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain(`cannot reach Temporal at 127.0.0.1:${port}`);
    expect(listed.stderr.trim().split('\n')).toHaveLength(1);
    expectNoStack(listed);
  });
});
