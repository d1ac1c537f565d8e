// Bad values are rejects, not failures, against the real servers: a name longer than the service
// accepts is caught at planning (a reject with its reason; before, its whole batch failed with a 422),
// and every reject keeps its record exactly as the file had it — the CSV line, the JSON text — so a
// fixed file can be produced from the rejects table.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { MAX_NAME_LENGTH } from '../../contract/limits.js';
import type { EnrichflowConfig } from '../../config/index.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import type { RunSummary } from '../../pipeline/run-types.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import {
  readTable,
  s3Location,
  startTestSandbox,
  startTestWorker,
  testConfig,
  type TestWorker,
} from '../support/pipeline-harness.js';

let sandbox: RunningSandbox;
let config: EnrichflowConfig;
let worker: TestWorker;
let dir: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  config = testConfig(sandbox.url);
  worker = await startTestWorker(config);
  dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-rejects-'));
});

afterAll(async () => {
  await worker?.stop();
  await sandbox?.close();
});

const longName = 'Very Long Holdings '.repeat(20).trim(); // 379 characters

async function enrich(file: string, jobName: string) {
  const result = await runCliInProcess(config, [
    'enrich',
    '--input',
    file,
    '--datasets',
    'firmographics',
    '--output',
    s3Location(jobName),
    '--job-name',
    jobName,
    '--json',
  ]);
  expect(result.code, result.stderr).toBe(0);
  const summary = JSON.parse(result.stdout) as RunSummary;
  const rejects = await readTable<{ row_number: bigint; reason: string; record: string }>(
    config,
    summary.outputPrefix,
    'rejects',
    'SELECT * FROM t ORDER BY row_number',
  );
  return { summary, rejects: rejects.rows };
}

test(
  'CSV: an over-long name is a reject with its reason; rejects keep the raw CSV record',
  {
    timeout: 120_000,
  },
  async () => {
    expect(longName.length).toBeGreaterThan(MAX_NAME_LENGTH);
    const lines = [
      'Company;Website;Note',
      'Acme;acme.com;"kept"',
      `${longName};longname.example;x`,
      '"Quoted; with ""quotes""";not a domain;"two\nlines"',
      'Too;many;fields;here',
    ];
    const file = path.join(dir, 'companies.csv');
    writeFileSync(file, `${lines.join('\r\n')}\r\n`);
    const { summary, rejects } = await enrich(file, 'rejects-csv');
    expect(summary.status).toBe('completed');
    expect(summary.failedBatches).toBe(0);
    expect(rejects.map((r) => [Number(r.row_number), r.reason, r.record])).toEqual([
      [
        2,
        `name is ${longName.length} characters long; the service accepts at most ${MAX_NAME_LENGTH}`,
        lines[2],
      ],
      [3, 'url "not a domain" has no valid host name', lines[3]],
      [4, 'malformed record at line 6: expected 3 fields, found 4', lines[4]],
    ]);
  },
);

test(
  'JSON Lines: rejects keep the line as written (numbers, missing keys, spacing)',
  { timeout: 120_000 },
  async () => {
    const lines = [
      '{"company": "Acme", "domain": "acme.com", "employees": 12}',
      `{"company":${JSON.stringify(longName)},"employees":3.50}`,
      '{"company": null,   "domain": "not a domain", "extra": [1, 2]}',
      '[1, 2, 3]',
    ];
    const file = path.join(dir, 'companies.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { summary, rejects } = await enrich(file, 'rejects-jsonl');
    expect(summary.failedBatches).toBe(0);
    expect(rejects.map((r) => [Number(r.row_number), r.record])).toEqual([
      [2, lines[1]],
      [3, lines[2]],
      [4, lines[3]],
    ]);
    expect(rejects[0]!.reason).toContain('the service accepts at most 256');
  },
);
