// Exports through the `enrichflow` command itself, as an operator types it: a filters file that cannot
// be used is refused before any call with the filter named and exit code 2; `--dry-run` prints the
// plan (slices, pages, calls) and fetches no page; a truncated export says so loudly and exits 3.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EnrichflowConfig } from '../../config/index.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import {
  runCli,
  s3Location,
  startTestWorker,
  testConfig,
  type TestWorker,
} from '../support/pipeline-harness.js';
import { prospectIds, startCountingProxy, startExportSandbox, type CountingProxy } from './support.js';

const files = mkdtempSync(path.join(tmpdir(), 'enrichflow-export-cli-'));

let sandbox: RunningSandbox;
let proxy: CountingProxy;
let config: EnrichflowConfig;
let worker: TestWorker;

beforeAll(async () => {
  sandbox = await startExportSandbox('cli');
  proxy = await startCountingProxy(sandbox.url);
  config = testConfig(proxy.url);
  worker = await startTestWorker(config);
});

afterAll(async () => {
  await worker?.stop();
  await proxy?.close();
  await sandbox?.close();
});

const enrichflow = (...args: string[]) => runCli(config, ...args);

function filtersFile(name: string, text: string): string {
  const file = path.join(files, name);
  writeFileSync(file, text);
  return file;
}

describe('enrichflow prospects', () => {
  test.each([
    ['unknown filter', '{"job_levle": {"values": ["manager"]}}', /filters\.job_levle: unknown filter/],
    [
      'bad enum value',
      '{"filters": {"company_size": {"values": ["1-9"]}}}',
      /filters\.company_size\.values\[0\]: value is not a valid enumeration member/,
    ],
    [
      'gte > lte',
      '{"total_experience_months": {"gte": 60, "lte": 12}}',
      /filters\.total_experience_months: 'gte' must be less than or equal to 'lte'/,
    ],
  ])(
    'a filters file with a problem (%s) is refused before any call, naming the filter',
    { timeout: 60_000 },
    async (name, text, message) => {
      const before = proxy.calls.length;
      const file = filtersFile(`${name.replaceAll(' ', '-')}.json`, text);
      const run = await enrichflow('prospects', '--filters', file, '--output', s3Location('cli-bad'));
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).toContain(file);
      expect(proxy.calls.length).toBe(before);
    },
  );

  test('--dry-run prints the slices, pages and calls, and fetches no page', { timeout: 60_000 }, async () => {
    const want = await prospectIds(sandbox, `b.size_range IN ('51-200', '1001-5000')`);
    const file = filtersFile('over-cap.json', '{"company_size": {"values": ["51-200", "1001-5000"]}}');
    const before = proxy.calls.length;
    const run = await enrichflow(
      'prospects',
      '--filters',
      file,
      '--output',
      s3Location('cli-dry'),
      '--offset-cap',
      '1000',
      '--dry-run',
    );
    expect(run.code, run.stderr).toBe(0);
    const made = proxy.calls.slice(before);
    expect(made.length).toBeGreaterThan(0);
    expect(
      made.every((c) => c.body?.page_size === 1),
      'count probes only',
    ).toBe(true);
    const out = run.stdout;
    expect(out).toContain('dry run: no page fetched, nothing written');
    const total = want.length.toLocaleString('en-US');
    expect(out).toMatch(
      new RegExp(
        `search: ${total} records; \\d+ slices \\(cap 1,000\\), whose sum ${total} equals the count`,
      ),
    );
    const pages = /to fetch: ([\d,]+) records in ([\d,]+) pages of 100/.exec(out);
    expect(pages?.[1]).toBe(total);
    const calls = new RegExp(`calls: ${made.length} count calls \\(made\\) \\+ ${pages?.[2]} pages = `);
    expect(out).toMatch(calls);
    // One line per slice: index, records, method, pages, filters added; every slice under the cap.
    const rows = [...out.matchAll(/^\s+(\d+)\s+([\d,]+)\s+(offset|cursor|truncated)\s+(\d+)\s+\S/gm)];
    expect(rows.length).toBeGreaterThanOrEqual(4);
    const counts = rows.map((r) => Number(r[2]!.replaceAll(',', '')));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(want.length);
    expect(counts.every((n) => n <= 1_000)).toBe(true);
    expect(rows.reduce((sum, r) => sum + Number(r[4]), 0)).toBe(Number(pages?.[2]?.replaceAll(',', '')));
  });

  test('a truncated export is reported loudly and exits 3', { timeout: 120_000 }, async () => {
    const all = await prospectIds(sandbox, `b.size_range = '51-200'`);
    const file = filtersFile('unsplittable.json', '{"company_size": {"values": ["51-200"]}}');
    const run = await enrichflow(
      'prospects',
      '--filters',
      file,
      '--output',
      s3Location('cli-truncated'),
      '--offset-cap',
      '1000',
      '--split-by',
      'company_size',
      '--no-cursor',
    );
    expect(run.code, run.stderr).toBe(3);
    expect(run.stdout).toMatch(/: completed truncated/);
    expect(run.stdout).toMatch(
      new RegExp(`!! TRUNCATED: slice 0 .* ${all.length - 1_000} of its records are NOT in the output`),
    );
    expect(run.stdout).toMatch(/prospects\s+1000 rows/);
  });
});
