// Writes a DuckDB query result as a run's output table: ZSTD Parquet files of up to 512 MB (one file
// for any table smaller than that), uploaded under deterministic names, with rows, bytes, checksum and
// column types recorded for the manifest. Stale parts of an earlier attempt are removed.
import type { DuckDBConnection } from '@duckdb/node-api';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { TableSummary } from '../pipeline/run-types.js';
import { queryRows, sqlString } from '../storage/duckdb.js';
import { runLayout } from '../pipeline/run-layout.js';
import { sha256File, type RunFiles } from '../storage/run-files.js';

/** Largest Parquet file written; warehouses prefer few large files (issue 4: ≥ 64 MB or the whole table). */
export const MAX_PARQUET_FILE_BYTES = '512MB';
const ROW_GROUP_ROWS = 122_880;

export interface ParquetTableOptions {
  /** Rows per row group; default 122,880. Wide records want fewer: the writer holds a whole group in memory. */
  rowGroupRows?: number;
}

/** The local folder `writeParquetTable` writes `table`'s parts to in `scratchDir`. */
const localTableDir = (scratchDir: string, table: string) => path.join(scratchDir, `table-${table}`);

/** `read_parquet` of the local parts of `table` that `writeParquetTable` left in `scratchDir`. */
export const readLocalTable = (scratchDir: string, table: string) =>
  `read_parquet(${sqlString(path.join(localTableDir(scratchDir, table), '*.parquet'))})`;

export async function writeParquetTable(
  connection: DuckDBConnection,
  files: RunFiles,
  table: string,
  selectSql: string,
  scratchDir: string,
  options: ParquetTableOptions = {},
): Promise<TableSummary> {
  // The local files stay in `<scratch>/table-<table>/` until the session ends (callers may check them);
  // a second write of the same table starts from an empty folder.
  const outDir = localTableDir(scratchDir, table);
  await rm(outDir, { recursive: true, force: true });
  await connection.run(
    `COPY (${selectSql}) TO ${sqlString(outDir)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${options.rowGroupRows ?? ROW_GROUP_ROWS},
       FILE_SIZE_BYTES '${MAX_PARQUET_FILE_BYTES}', FILENAME_PATTERN 'part-{i}')`,
  );
  const names = (await readdir(outDir)).filter((n) => n.endsWith('.parquet'));
  names.sort((a, b) => partIndex(a) - partIndex(b));
  const summary: TableSummary = { table, files: [], rows: 0, columns: [] };
  for (const [index, name] of names.entries()) {
    const local = path.join(outDir, name);
    const [count] = await queryRows<{ n: number }>(
      connection,
      `SELECT count(*) AS n FROM read_parquet(${sqlString(local)})`,
    );
    const rows = Number(count?.n ?? 0);
    const key = runLayout.tablePart(table, index);
    await files.store.putFile(files.key(key), local, { contentType: 'application/vnd.apache.parquet' });
    summary.files.push({ key, rows, bytes: (await stat(local)).size, sha256: await sha256File(local) });
    summary.rows += rows;
    if (index === 0) {
      const described = await queryRows<{ column_name: string; column_type: string }>(
        connection,
        `DESCRIBE SELECT * FROM read_parquet(${sqlString(local)})`,
      );
      summary.columns = described.map((c) => ({ name: c.column_name, type: c.column_type }));
    }
  }
  const keep = new Set(summary.files.map((f) => f.key));
  for (const existing of await files.list(runLayout.tablePrefix(table))) {
    if (!keep.has(existing)) await files.store.delete(files.key(existing));
  }
  await files.putJson(`_work/tables/${table}.json`, summary);
  return summary;
}

function partIndex(name: string): number {
  return Number(/part-(\d+)/.exec(name)?.[1] ?? 0);
}
