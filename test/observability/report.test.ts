// The run report from a manifest written by a real run (test/fixtures/run-manifest.json: the sample
// companies plus three unusable rows, firmographics and technographics, two 429s retried), and from
// variants of it with failed batches, retries and counts the report does not know by name.
import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { queryRows, sqlString, withDuckDb } from '../../storage/duckdb.js';
import {
  formatDuration,
  rejectReasonsOf,
  renderRunReport,
  type RunManifest,
} from '../../activities/report.js';
import { RunFiles } from '../../storage/run-files.js';
import { openObjectStore } from '../../storage/open-store.js';

const manifest = JSON.parse(
  readFileSync(new URL('../fixtures/run-manifest.json', import.meta.url), 'utf8'),
) as RunManifest;

/** The rows of the Markdown table that follows a `## heading`. */
function section(report: string, heading: string): string[] {
  const start = report.indexOf(`## ${heading}\n`);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const rest = report.slice(start + heading.length + 4);
  const end = rest.indexOf('\n## ');
  return (end < 0 ? rest : rest.slice(0, end)).split('\n').filter((l) => l.startsWith('| '));
}

describe('renderRunReport', () => {
  const report = renderRunReport(manifest, {
    rejectReasons: [
      { reason: 'no usable field: name, domain, url and network_url are all empty', rows: 7, firstRow: 15 },
      { reason: 'domain "…" is not a valid domain name', rows: 2, firstRow: 302 },
    ],
  });

  test('opens with the run, its status, datasets, input, output and timings', () => {
    expect(report.startsWith('# Run report: observed-ad9d4fb3cb9d\n')).toBe(true);
    expect(report).toContain('**Completed** — job `observed`, 2 datasets (firmographics, technographics).');
    expect(report).toContain('| Input | `s3://enrichflow-test/inputs-mwrbl44ylx7g/companies.csv` |');
    expect(report).toContain(
      '| Output | `s3://enrichflow-test/observed-mwrbl4silfw0/observed-ad9d4fb3cb9d/` |',
    );
    expect(report).toContain('| Started | 2026-11-22 04:11:41Z |');
    expect(report).toContain('| Duration | 4.1 s |');
    expect(report).not.toContain('failed** after their retries');
  });

  test('rows: counts with their shares', () => {
    expect(section(report, 'Rows')).toEqual([
      '|  | Count | Share |',
      '| --- | ---: | ---: |',
      '| Input rows | 303 |  |',
      '| Rejected rows | 9 | 3.0% of input rows |',
      '| Unique match keys (calls were made per key) | 294 |  |',
      '| Matched rows | 276 | 93.9% of usable rows |',
      '| Unmatched rows | 18 | 6.1% of usable rows |',
      '| Unique business ids | 276 |  |',
      '| Failed batches | 0 |  |',
    ]);
  });

  test('coverage per dataset: records over unique ids, misses, rows in the table', () => {
    expect(section(report, 'Coverage per dataset').slice(2)).toEqual([
      '| firmographics | 275 | 276 | 99.6% | 1 | 275 |',
      '| technographics | 240 | 276 | 87.0% | 36 | 240 |',
    ]);
  });

  test('calls and throughput per stage, retried calls included', () => {
    expect(section(report, 'Calls and throughput per stage').slice(2)).toEqual([
      '| match | 6 / 6 | 0 | 6 | 276 | 18 | 0.5 s | 12.0 | 2026-11-22 04:11:42Z | 2026-11-22 04:11:43Z |',
      '| firmographics | 6 / 6 | 0 | 6 | 275 | 1 | 0.5 s | 12.0 | 2026-11-22 04:11:43Z | 2026-11-22 04:11:44Z |',
      '| technographics | 6 / 6 | 0 | 8 | 240 | 36 | 1.1 s | 7.3 | 2026-11-22 04:11:43Z | 2026-11-22 04:11:44Z |',
    ]);
    expect(report).toContain('In all: 20 calls in 4.1 s (4.8 calls/s over the whole run).');
  });

  test('rejects by reason, and where every file is', () => {
    expect(section(report, 'Rejected rows').slice(2)).toEqual([
      '| no usable field: name, domain, url and network_url are all empty | 7 | 15 |',
      '| domain "…" is not a valid domain name | 2 | 302 |',
    ]);
    const files = section(report, 'Files');
    expect(files.slice(2).map((l) => l.split(' | ')[0])).toEqual([
      '| firmographics',
      '| technographics',
      '| matches',
      '| rejects',
      '| failures',
    ]);
    expect(files[2]).toBe(
      '| firmographics | 275 | 1 | 37.0 KB | `s3://enrichflow-test/observed-mwrbl4silfw0/observed-ad9d4fb3cb9d/firmographics/part-0.parquet` |',
    );
    expect(report).toContain(
      'Manifest: `s3://enrichflow-test/observed-mwrbl4silfw0/observed-ad9d4fb3cb9d/manifest.json`',
    );
  });

  test('failed batches, retries, unknown counts, many files, and text that would break a table', () => {
    const failed: RunManifest = {
      ...manifest,
      status: 'completed_with_failures',
      retries: ['observed-ad9d4fb3cb9d-retry-1'],
      counts: { ...manifest.counts, failed_batches: 2, skipped_fresh: 40 },
      stages: manifest.stages.map((s) =>
        s.stage === 'technographics'
          ? { ...s, done_batches: 4, failed_batches: 2, records: 160, calls: 20 }
          : s,
      ),
      tables: manifest.tables.map((t) =>
        t.name === 'firmographics'
          ? { ...t, files: [t.files[0]!, { ...t.files[0]!, key: 'firmographics/part-1.parquet' }] }
          : t,
      ),
    };
    const text = renderRunReport(failed, {
      rejectReasons: [{ reason: 'malformed record at line N: a | b\nc', rows: 4, firstRow: 9 }],
    });
    expect(text).toContain('**Completed with failures**');
    expect(text).toContain('> **2 batches failed** after their retries;');
    expect(text).toContain('enrichflow runs retry observed-ad9d4fb3cb9d');
    expect(text).toContain('| Retries | observed-ad9d4fb3cb9d-retry-1 |');
    expect(text).toContain('| Skipped fresh | 40 |  |');
    expect(text).toContain('| technographics | 4 / 6 | 2 | 20 | 160 | 36 |');
    expect(text).toContain('| malformed record at line N: a \\| b c | 4 | 9 |');
    expect(text).toContain('…and 5 rows with other reasons.');
    expect(text).toContain(
      '| firmographics | 275 | 2 | 73.9 KB | `s3://enrichflow-test/observed-mwrbl4silfw0/observed-ad9d4fb3cb9d/firmographics/` |',
    );
  });

  test('a run without rejects or match stage says so plainly', () => {
    const text = renderRunReport({
      ...manifest,
      counts: { ...manifest.counts, rejected_rows: 0, unique_match_keys: 0 },
      stages: manifest.stages.filter((s) => s.stage !== 'match'),
    });
    expect(text).toContain('No input row was rejected.');
    expect(text).not.toContain('Unique match keys');
    expect(text).not.toContain('| match |');
  });

  test('durations read as people say them', () => {
    expect(formatDuration(0.46)).toBe('0.5 s');
    expect(formatDuration(42.4)).toBe('42 s');
    expect(formatDuration(83)).toBe('1 min 23 s');
    expect(formatDuration(7_380)).toBe('2 h 3 min');
  });
});

describe('rejectReasonsOf', () => {
  test('groups reasons that differ only in quoted values or numbers, most frequent first', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-report-'));
    const { store, prefix } = openObjectStore(dir);
    const files = new RunFiles(store, prefix, 'run-1');
    const reasons = await withDuckDb({}, async (connection, scratch) => {
      const local = path.join(scratch, 'rejects.parquet');
      await connection.run(
        `COPY (SELECT * FROM (VALUES
            (3, 'domain "a..b" is not a valid domain name', 'x'),
            (7, 'malformed record at line 9: expected 5 fields, got 3', 'y'),
            (8, 'domain "c d" is not a valid domain name', 'z'),
            (12, 'domain "e!" is not a valid domain name', 'w'),
            (15, 'malformed record at line 17: expected 5 fields, got 2', 'v'),
            (20, 'no usable field: name, domain, url and network_url are all empty', ''))
          AS t(row_number, reason, record)) TO ${sqlString(local)} (FORMAT PARQUET)`,
      );
      await store.putFile(files.key('rejects/part-0.parquet'), local);
      const [check] = await queryRows<{ n: number }>(
        connection,
        `SELECT count(*) AS n FROM read_parquet(${sqlString(local)})`,
      );
      expect(Number(check!.n)).toBe(6);
      return rejectReasonsOf(connection, files, { files: [{ key: 'rejects/part-0.parquet' }] }, scratch);
    });
    expect(reasons).toEqual([
      { reason: 'domain "…" is not a valid domain name', rows: 3, firstRow: 3 },
      { reason: 'malformed record at line N: expected N fields, got N', rows: 2, firstRow: 7 },
      { reason: 'no usable field: name, domain, url and network_url are all empty', rows: 1, firstRow: 20 },
    ]);
  });
});
