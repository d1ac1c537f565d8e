// Preflight against the real servers: an input or output that cannot work stops `enrich`, `run`,
// `schedule create` and the export commands with exit code 2 and one line naming the file, column or
// location — no workflow started, nothing written — in the words `--dry-run` prints; and a worker
// whose run reaches it anyway (a schedule whose input or output broke since) fails at once, same words.
import type { Client } from '@temporalio/client';
import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { stringify } from 'yaml';
import type { EnrichflowConfig } from '../../config/index.js';
import { toRunInput, validateJobSpec } from '../../jobs/job-spec.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import { withDuckDb, sqlString } from '../../storage/duckdb.js';
import { enrichRunWorkflow } from '../../workflows/index.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import {
  s3Location,
  SAMPLE_COMPANIES,
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

const cli = (...args: string[]) => runCliInProcess(config, args);

beforeAll(async () => {
  sandbox = await startTestSandbox();
  config = testConfig(sandbox.url);
  worker = await startTestWorker(config);
  client = await temporalClient();
  dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-preflight-'));
});

afterAll(async () => {
  await worker?.stop();
  await client?.connection.close();
  await sandbox?.close();
});

function file(name: string, content: string): string {
  const target = path.join(dir, name);
  writeFileSync(target, content);
  return target;
}

async function parquet(name: string, select: string): Promise<string> {
  const target = path.join(dir, name);
  await withDuckDb({}, (connection) =>
    connection.run(`COPY (${select}) TO ${sqlString(target)} (FORMAT PARQUET)`),
  );
  return target;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The one line a refused command prints: exit code 2, no stack, no run started. */
function expectRefused(result: { code: number; stderr: string; stdout: string }, words: string): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).toContain(words);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stderr).not.toContain('started run');
}

describe('bad inputs: every format, refused before anything starts, in the dry run’s words', () => {
  type MadeInput = { input: string; map?: string };
  const cases: [string, () => MadeInput | Promise<MadeInput>, string][] = [
    ['a 0-byte CSV', () => ({ input: file('empty.csv', '') }), 'empty.csv: is empty (0 bytes)'],
    [
      'a header-only CSV',
      () => ({ input: file('header.csv', 'Company,Website\n') }),
      'header.csv: the file has no data rows',
    ],
    [
      'a CSV with no usable column',
      () => ({ input: file('nocol.csv', 'foo,bar\n1,2\n') }),
      'nocol.csv: no usable column; expected business_id or one of name, domain, url, network_url',
    ],
    [
      'a --map column the CSV lacks',
      () => ({ input: file('ok.csv', 'Company,Website\nAcme,acme.com\n'), map: 'name=Firm' }),
      'ok.csv: column "Firm" given for name is not in the file (columns: Company, Website)',
    ],
    ['a 0-byte JSON Lines file', () => ({ input: file('empty.jsonl', '') }), 'empty.jsonl: is empty'],
    [
      'a JSON Lines file with no usable key',
      () => ({ input: file('nocol.jsonl', '{"foo":1,"bar":"x"}\n') }),
      'nocol.jsonl: no usable column',
    ],
    [
      'a Parquet file with no rows',
      async () => ({ input: await parquet('norows.parquet', "SELECT 'a' AS name WHERE false") }),
      'norows.parquet: the file has no data rows',
    ],
    [
      'a Parquet file with no usable column',
      async () => ({ input: await parquet('nocol.parquet', 'SELECT 1 AS foo') }),
      'nocol.parquet: no usable column',
    ],
    ['a missing file', () => ({ input: path.join(dir, 'missing.csv') }), 'missing.csv: no such file'],
    [
      'an unknown format',
      () => ({ input: file('companies.xlsx', 'x') }),
      'companies.xlsx: cannot tell the format',
    ],
  ];

  test.each(cases)('%s', { timeout: 60_000 }, async (_name, make, words) => {
    const { input, map } = await make();
    const output = path.join(dir, `out-${path.basename(input)}`);
    const args = ['enrich', '--input', input, '--datasets', 'firmographics', '--output', output];
    if (map) args.push('--map', map);
    const refused = await cli(...args);
    expectRefused(refused, words);
    const dryRun = await cli(...args, '--dry-run');
    expectRefused(dryRun, words);
    expect(dryRun.stderr).toBe(refused.stderr);
    // Nothing was written: not even the output folder.
    expect(existsSync(output)).toBe(false);
  });

  test('`run job.yaml` and `schedule create` refuse the same input with the same words', async () => {
    const input = file('header-2.csv', 'name,domain\n');
    const job = file(
      'job.yaml',
      stringify({
        job_name: 'preflight-job',
        input: { location: input },
        datasets: ['firmographics'],
        output: path.join(dir, 'job-out'),
      }),
    );
    const words = 'header-2.csv: the file has no data rows';
    expectRefused(await cli('run', job), words);
    expectRefused(await cli('schedule', 'create', job, '--every', '1d'), words);
    expect(existsSync(path.join(dir, 'job-out'))).toBe(false);
    await expect(client.schedule.getHandle('preflight-job').describe()).rejects.toThrow();
  });
});

test('`schedule create`: a missing input is refused unless --input-later names it a drop location', async () => {
  const id = `preflight-later-${Math.random().toString(36).slice(2, 7)}`;
  const missing = path.join(dir, 'drop', 'tomorrow.csv');
  const job = file(
    `${id}.yaml`,
    stringify({
      job_name: id,
      input: { location: missing },
      datasets: ['firmographics'],
      output: s3Location(id),
    }),
  );
  expectRefused(
    await cli('schedule', 'create', job, '--every', '1d', '--paused'),
    'tomorrow.csv: no such file; if runs will find it there later, pass --input-later',
  );
  const created = await cli('schedule', 'create', job, '--every', '1d', '--paused', '--input-later');
  try {
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain(`note: ${missing} is not there yet; runs fail until it is`);
  } finally {
    await client.schedule.getHandle(id).delete();
  }
  // The output is still checked.
  const blocked = file(
    `${id}-blocked.yaml`,
    stringify({
      job_name: `${id}-b`,
      input: { location: missing },
      datasets: ['firmographics'],
      output: `${file(`${id}-file`, 'x')}/out/`,
    }),
  );
  expectRefused(
    await cli('schedule', 'create', blocked, '--every', '1d', '--input-later'),
    'is a file, not a folder (ENOTDIR)',
  );
});

describe('outputs that cannot be written: named for what they are', () => {
  let input: string;
  beforeAll(() => {
    input = file('good.csv', 'Company,Website\nAcme,acme.com\n');
  });

  test('a local output under a regular file', async () => {
    const blocker = file('blocker', 'a regular file\n');
    const words = `${blocker} is a file, not a folder (ENOTDIR)`;
    const args = ['enrich', '--input', input, '--datasets', 'firmographics', '--output', `${blocker}/out/`];
    expectRefused(await cli(...args), words);
    expectRefused(await cli(...args, '--dry-run'), words);
  });

  test('a virtual file system, named directly or through a link', async () => {
    const direct = [
      'enrich',
      '--input',
      input,
      '--datasets',
      'firmographics',
      '--output',
      '/proc/enrichflow/',
    ];
    expectRefused(await cli(...direct), '/proc is a virtual file system');
    const link = path.join(dir, 'to-proc');
    symlinkSync('/proc/self', link);
    const linked = ['enrich', '--input', input, '--datasets', 'firmographics', '--output', `${link}/out/`];
    expectRefused(await cli(...linked), 'a virtual file system, not a place to write tables');
  });

  test('a dry run leaves a new local output folder as it found it', async () => {
    const output = path.join(dir, 'fresh', 'deeper');
    const planned = await cli(
      'enrich',
      '--input',
      input,
      '--datasets',
      'firmographics',
      '--output',
      output,
      '--dry-run',
    );
    expect(planned.code, planned.stderr).toBe(0);
    expect(existsSync(path.join(dir, 'fresh'))).toBe(false);
  });

  test(
    'S3: a missing bucket, denied access and an unreachable endpoint, each named',
    { timeout: 90_000 },
    async () => {
      const s3Input = `${s3Location('preflight-in')}companies.csv`;
      await uploadFile(config, s3Input, SAMPLE_COMPANIES);
      const enrich = (output: string) => [
        'enrich',
        '--input',
        s3Input,
        '--datasets',
        'firmographics',
        '--output',
        output,
      ];

      expectRefused(
        await cli(...enrich('s3://enrichflow-no-such-bucket/out/')),
        's3://enrichflow-no-such-bucket/out/: the bucket "enrichflow-no-such-bucket" does not exist',
      );
      const denied = await runCliInProcess(config, enrich(s3Location('out')), {
        ENRICHFLOW_S3_SECRET_ACCESS_KEY: 'not-the-secret',
      });
      expectRefused(denied, 'access denied to the bucket');
      const port = await closedPort();
      const unreachable = await runCliInProcess(config, enrich(s3Location('out')), {
        ENRICHFLOW_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      });
      expectRefused(unreachable, 'cannot reach the S3 endpoint (ECONNREFUSED)');
      // An export checks its output the same way.
      const filters = file('filters.json', JSON.stringify({ country_code: { values: ['us'] } }));
      expectRefused(
        await cli('businesses', '--filters', filters, '--output', 's3://enrichflow-no-such-bucket/exports/'),
        'the bucket "enrichflow-no-such-bucket" does not exist',
      );
    },
  );
});

describe('a run that reaches a worker anyway fails at once, in the same words', () => {
  async function startDirectly(jobName: string, inputLocation: string, output: string) {
    const spec = validateJobSpec(
      { job_name: jobName, input: { location: inputLocation }, datasets: ['firmographics'], output },
      'the test',
    );
    const runId = `${jobName}-${Math.random().toString(36).slice(2, 8)}`;
    const handle = await client.workflow.start(enrichRunWorkflow, {
      workflowId: runId,
      taskQueue: config.temporal.taskQueue,
      args: [{ ...toRunInput(spec, runId), apiTaskQueue: config.temporal.apiTaskQueue }],
    });
    const started = Date.now();
    const error = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    return { error, seconds: (Date.now() - started) / 1000 };
  }

  function rootMessage(error: unknown): { type?: string; message: string } {
    let current = error as { cause?: unknown; type?: string; message: string };
    let found = current;
    while (current) {
      if (current.type) found = current;
      current = current.cause as typeof current;
    }
    return { type: found.type, message: found.message };
  }

  test(
    'an output under a regular file: OutputLocationError on the first attempt',
    { timeout: 60_000 },
    async () => {
      const blocker = file('worker-blocker', 'x');
      const input = file('worker.csv', 'Company,Website\nAcme,acme.com\n');
      const { error, seconds } = await startDirectly('worker-blocked', input, `${blocker}/out/`);
      const root = rootMessage(error);
      expect(root.type).toBe('OutputLocationError');
      expect(root.message).toContain(`${blocker} is a file, not a folder (ENOTDIR)`);
      // One attempt, not retries over minutes (the planning kind's first retry alone waits 2 s).
      expect(seconds).toBeLessThan(15);
    },
  );

  test('an input emptied since the schedule was made: the CLI’s words', { timeout: 60_000 }, async () => {
    const input = file('emptied.csv', 'Company,Website\n');
    mkdirSync(path.join(dir, 'worker-out'));
    const { error, seconds } = await startDirectly('worker-emptied', input, path.join(dir, 'worker-out'));
    const root = rootMessage(error);
    expect(root.type).toBe('InputFileError');
    expect(root.message).toBe(`${input}: the file has no data rows`);
    expect(seconds).toBeLessThan(15);
  });
});
