// The operator's view, through the `enrichflow` command itself: start a run without waiting, follow it,
// list it, show its summary, and see a wrong flag named in the error.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { EnrichflowConfig } from '../../config/index.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import {
  s3Location,
  startTestSandbox,
  startTestWorker,
  testConfig,
  uploadFile,
  type TestWorker,
  runCli,
} from '../support/pipeline-harness.js';

const SAMPLE = fileURLToPath(new URL('../../samples/companies.csv', import.meta.url));

let sandbox: RunningSandbox;
let config: EnrichflowConfig;
let worker: TestWorker;

const enrichflow = (...args: string[]) => runCli(config, ...args);

beforeAll(async () => {
  sandbox = await startTestSandbox();
  config = testConfig(sandbox.url);
  worker = await startTestWorker(config);
});

afterAll(async () => {
  await worker?.stop();
  await sandbox?.close();
});

test('enrich --no-wait, then runs watch, list and show', { timeout: 120_000 }, async () => {
  const input = `${s3Location('inputs')}companies.csv`;
  await uploadFile(config, input, SAMPLE);
  const output = s3Location('enriched');
  const started = await enrichflow(
    'enrich',
    '--input',
    input,
    '--datasets',
    'firmographics,technographics',
    '--output',
    output,
    '--job-name',
    'cli-run',
    '--no-wait',
  );
  expect(started.code, started.stderr).toBe(0);
  const runId = started.stdout.trim();
  expect(runId).toMatch(/^cli-run-[0-9a-f]{12}$/);

  const watched = await enrichflow('runs', 'watch', runId);
  expect(watched.code, watched.stderr).toBe(0);
  expect(watched.stdout).toContain(`run ${runId}: completed`);
  expect(watched.stdout).toMatch(/firmographics\s+\d+ rows\s+firmographics\/part-0\.parquet/);

  const listed = await enrichflow('runs', 'list');
  expect(listed.stdout).toMatch(new RegExp(`${runId}\\s+COMPLETED`));

  const shown = await enrichflow('runs', 'show', runId, '--json');
  const summary = JSON.parse(shown.stdout) as { status: string; outputPrefix: string };
  expect(summary.status).toBe('completed');
  expect(summary.outputPrefix).toContain(runId);

  const again = await enrichflow(
    'enrich',
    '--input',
    input,
    '--datasets',
    'firmographics,technographics',
    '--output',
    output,
    '--job-name',
    'cli-run',
    '--no-wait',
  );
  expect(again.stderr).toContain('already exists');
  expect(again.stdout.trim()).toBe(runId);
});

test('a wrong dataset or a missing input file is named, with exit code 2', async () => {
  const wrong = await enrichflow(
    'enrich',
    '--input',
    SAMPLE,
    '--datasets',
    'firmographic',
    '--output',
    '/tmp/x/',
  );
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toContain('datasets[0]: "firmographic" is not a dataset');
  const missing = await enrichflow(
    'enrich',
    '--input',
    '/nonexistent/companies.csv',
    '--datasets',
    'firmographics',
    '--output',
    '/tmp/x/',
  );
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('/nonexistent/companies.csv: no such file');
  const unknown = await enrichflow('runs', 'show', 'no-such-run');
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('no run with id "no-such-run"');
});
