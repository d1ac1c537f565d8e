// The run report: `report.md` next to a run's manifest, what an analyst reads instead of the JSON —
// rows per table, coverage per dataset, calls, misses, failures, throughput and timings per stage,
// the main reasons rows were rejected, and where every file is. Rendering is a pure function of the
// manifest (plus the reject reasons, which the manifest does not carry).
import type { DuckDBConnection } from '@duckdb/node-api';
import path from 'node:path';
import { queryRows, sqlString } from '../storage/duckdb.js';
import type { RunFiles } from '../storage/run-files.js';
import { isPeopleDataset } from '../pipeline/run-types.js';

/** The manifest `commitRun` writes (fields the report reads; any others are ignored or listed). */
export interface RunManifest {
  manifest_version: number;
  run_id: string;
  job_name: string;
  status: string;
  datasets: string[];
  input: string;
  retries?: string[];
  started_at: string;
  finished_at: string;
  /** The run's folder: `s3://bucket/prefix/<run>/` or `file:///…/<run>/`. */
  location: string;
  /** Known counts are labelled; any other numeric count is listed under its own name. */
  counts: Record<string, number | undefined> & {
    input_rows: number;
    rejected_rows: number;
    unique_match_keys?: number;
    matched_rows: number;
    unmatched_rows: number;
    unique_business_ids: number;
    failed_batches: number;
  };
  stages: ManifestStage[];
  tables: ManifestTable[];
}

export interface ManifestStage {
  stage: string;
  batches: number;
  done_batches: number;
  failed_batches: number;
  records: number;
  misses: number;
  calls: number;
  started_at: string;
  finished_at: string;
  seconds: number;
}

export interface ManifestTable {
  name: string;
  rows: number;
  files: { key: string; rows: number; bytes: number; sha256?: string }[];
  columns?: { name: string; type: string }[];
}

/** One kind of reject reason (values in it replaced by `…`), how many rows had it, and the first one. */
export interface RejectReason {
  reason: string;
  rows: number;
  firstRow: number;
}

export interface RunReportExtras {
  /** Top reject reasons, most frequent first (see `rejectReasonsOf`). */
  rejectReasons?: RejectReason[];
}

const COUNT_LABELS: Record<string, string> = {
  input_rows: 'Input rows',
  rejected_rows: 'Rejected rows',
  unique_match_keys: 'Unique match keys (calls were made per key)',
  matched_rows: 'Matched rows',
  unmatched_rows: 'Unmatched rows',
  unique_business_ids: 'Unique business ids',
  unique_employer_ids: 'Unique employers (business ids) of the matched people',
  employer_from_input_rows: "Matched rows whose employer is the row's business_id",
  employer_from_profile_rows: "Matched rows whose employer is the profile's",
  rows_without_employer: 'Matched rows with no employer known',
  failed_batches: 'Failed batches',
};

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const percent = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '-');

function cell(value: string | number): string {
  return String(value)
    .replace(/\|/g, '\\|')
    .replace(/[\r\n]+/g, ' ');
}

function table(header: string[], rows: (string | number)[][], align?: ('l' | 'r')[]): string {
  const rule = header.map((_, i) => ((align?.[i] ?? 'l') === 'r' ? '---:' : '---'));
  return [header, rule, ...rows].map((r) => `| ${r.map(cell).join(' | ')} |`).join('\n');
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '-';
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h} h ${m} min` : `${m} min ${s} s`;
}

function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

const clock = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

/** Renders a run's `report.md` from its manifest. */
export function renderRunReport(manifest: RunManifest, extras: RunReportExtras = {}): string {
  const { counts } = manifest;
  const location = manifest.location.endsWith('/') ? manifest.location : `${manifest.location}/`;
  const seconds = (Date.parse(manifest.finished_at) - Date.parse(manifest.started_at)) / 1000;
  const status = manifest.status.replaceAll('_', ' ');
  const usable = counts.input_rows - counts.rejected_rows;
  const out: string[] = [];

  out.push(`# Run report: ${manifest.run_id}`, '');
  out.push(
    `**${status[0]?.toUpperCase() ?? ''}${status.slice(1)}** — job \`${manifest.job_name}\`, ` +
      `${manifest.datasets.length} dataset${manifest.datasets.length === 1 ? '' : 's'} ` +
      `(${manifest.datasets.join(', ')}).`,
    '',
  );
  out.push(
    table(
      ['', ''],
      [
        ['Input', `\`${manifest.input}\``],
        ['Output', `\`${location}\``],
        ['Started', clock(manifest.started_at)],
        ['Finished', clock(manifest.finished_at)],
        ['Duration', formatDuration(seconds)],
        ...(manifest.retries?.length ? [['Retries', manifest.retries.join(', ')]] : []),
      ],
    ),
    '',
  );
  if (counts.failed_batches > 0) {
    out.push(
      `> **${int(counts.failed_batches)} batch${counts.failed_batches === 1 ? '' : 'es'} failed** after their retries; ` +
        `their ids are in the \`failures\` table. Re-run only those with \`enrichflow runs retry ${manifest.run_id}\`.`,
      '',
    );
  }

  // A people run's ids are prospect ids (the manifest keeps the one count name for both).
  const ids = manifest.tables.some((t) => t.name === 'prospect_matches') ? 'prospect ids' : 'business ids';
  out.push('## Rows', '');
  const countRows: (string | number)[][] = [];
  for (const [key, value] of Object.entries(counts)) {
    if (typeof value !== 'number') continue;
    if (key === 'unique_match_keys' && value === 0) continue;
    const label =
      key === 'unique_business_ids'
        ? `Unique ${ids}`
        : (COUNT_LABELS[key] ?? key.replaceAll('_', ' ').replace(/^./, (c) => c.toUpperCase()));
    const share =
      key === 'rejected_rows'
        ? percent(value, counts.input_rows) + ' of input rows'
        : key === 'matched_rows' || key === 'unmatched_rows'
          ? percent(value, usable) + ' of usable rows'
          : '';
    countRows.push([label, int(value), share]);
  }
  out.push(table(['', 'Count', 'Share'], countRows, ['l', 'r', 'r']), '');

  const datasetStages = manifest.stages.filter((s) => s.stage !== 'match' && s.stage !== 'prospect_match');
  if (datasetStages.length > 0) {
    out.push('## Coverage per dataset', '');
    out.push(
      `Coverage is the share of the run's ${int(counts.unique_business_ids)} unique ${ids} for which the dataset has a record.`,
      '',
    );
    out.push(
      table(
        ['Dataset', 'Records', 'Unique ids', 'Coverage', 'Misses', 'Rows in table'],
        datasetStages.map((s) => {
          // The employers of a people run are counted apart from the people.
          const unique =
            counts.unique_employer_ids !== undefined && !isPeopleDataset(s.stage)
              ? counts.unique_employer_ids
              : counts.unique_business_ids;
          return [
            s.stage,
            int(s.records),
            int(unique),
            percent(s.records, unique),
            int(s.misses),
            int(manifest.tables.find((t) => t.name === s.stage)?.rows ?? 0),
          ];
        }),
        ['l', 'r', 'r', 'r', 'r', 'r'],
      ),
      '',
    );
  }

  if (manifest.stages.length > 0) {
    out.push('## Calls and throughput per stage', '');
    out.push(
      'Calls count every attempt, retries included; a batch is one call of up to 50 ids (one id for hierarchies).',
      '',
    );
    out.push(
      table(
        [
          'Stage',
          'Batches',
          'Failed',
          'Calls',
          'Records',
          'Misses',
          'Time',
          'Calls/s',
          'Started',
          'Finished',
        ],
        manifest.stages.map((s) => [
          s.stage,
          `${int(s.done_batches)} / ${int(s.batches)}`,
          int(s.failed_batches),
          int(s.calls),
          int(s.records),
          int(s.misses),
          formatDuration(s.seconds),
          s.seconds > 0 ? (s.calls / s.seconds).toFixed(1) : '-',
          clock(s.started_at),
          clock(s.finished_at),
        ]),
        ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'l'],
      ),
      '',
    );
    const calls = manifest.stages.reduce((sum, s) => sum + s.calls, 0);
    out.push(
      `In all: ${int(calls)} calls in ${formatDuration(seconds)}` +
        (seconds > 0 ? ` (${(calls / seconds).toFixed(1)} calls/s over the whole run).` : '.'),
      '',
    );
  }

  out.push('## Rejected rows', '');
  if (counts.rejected_rows === 0) {
    out.push('No input row was rejected.', '');
  } else if (extras.rejectReasons?.length) {
    out.push(
      `${int(counts.rejected_rows)} rows could not be used; the \`rejects\` table has each one with its row number and reason.`,
      '',
    );
    out.push(
      table(
        ['Reason', 'Rows', 'First row'],
        extras.rejectReasons.map((r) => [r.reason, int(r.rows), r.firstRow]),
        ['l', 'r', 'r'],
      ),
      '',
    );
    const shown = extras.rejectReasons.reduce((sum, r) => sum + r.rows, 0);
    if (shown < counts.rejected_rows)
      out.push(`…and ${int(counts.rejected_rows - shown)} rows with other reasons.`, '');
  } else {
    out.push(
      `${int(counts.rejected_rows)} rows could not be used; the \`rejects\` table has each one with its row number and reason.`,
      '',
    );
  }

  out.push('## Files', '');
  out.push(
    `Everything is under \`${location}\`: one folder of Parquet files per table, \`manifest.json\` ` +
      '(schema, row counts and checksums), this report, and `_SUCCESS`, written last.',
    '',
  );
  out.push(
    table(
      ['Table', 'Rows', 'Files', 'Size', 'Path'],
      manifest.tables.map((t) => [
        t.name,
        int(t.rows),
        t.files.length,
        formatBytes(t.files.reduce((sum, f) => sum + f.bytes, 0)),
        t.files.length === 1 ? `\`${location}${t.files[0]!.key}\`` : `\`${location}${t.name}/\``,
      ]),
      ['l', 'r', 'r', 'r', 'l'],
    ),
    '',
  );
  out.push(`Manifest: \`${location}manifest.json\``, '');
  return out.join('\n');
}

/** Groups reasons that differ only in the values they quote or count (`domain "x.y" is …`). */
export const REJECT_REASON_CLASS_SQL = `regexp_replace(regexp_replace(reason, '"[^"]*"', '"…"', 'g'), '\\b[0-9]+\\b', 'N', 'g')`;

/**
 * The most frequent reject reasons of a run's `rejects` table, read with DuckDB from its Parquet parts
 * (downloaded to `scratch`). For `renderRunReport`'s extras; call it where the table was committed.
 */
export async function rejectReasonsOf(
  connection: DuckDBConnection,
  files: RunFiles,
  rejects: { files: { key: string }[] },
  scratch: string,
  limit = 10,
): Promise<RejectReason[]> {
  if (rejects.files.length === 0) return [];
  const local: string[] = [];
  for (const [i, file] of rejects.files.entries()) {
    const target = path.join(scratch, `rejects-report-${i}.parquet`);
    await files.store.downloadToFile(files.key(file.key), target);
    local.push(target);
  }
  const rows = await queryRows<{ reason: string; rows: number; first_row: number }>(
    connection,
    `SELECT ${REJECT_REASON_CLASS_SQL} AS reason, count(*) AS rows, min(row_number) AS first_row
       FROM read_parquet([${local.map(sqlString).join(', ')}])
      GROUP BY 1 ORDER BY rows DESC, first_row LIMIT ${Math.max(1, Math.floor(limit))}`,
  );
  return rows.map((r) => ({ reason: r.reason, rows: Number(r.rows), firstRow: Number(r.first_row) }));
}
