// Business ids from a Parquet table: a run's `matches` table or any Parquet file or folder with a
// `business_id` column, on S3 or a local disk. Read with DuckDB; used by the enrollment commands and by
// the events pull run's planning activity (so a large id list never passes through workflow history).
import path from 'node:path';
import { queryRows, sqlIdent, sqlString, withDuckDb } from './duckdb.js';
import type { StoreResolver } from './run-files.js';

/** Thrown when a location holds no Parquet files or they lack the id column. */
export class BusinessIdSourceError extends Error {
  override readonly name = 'BusinessIdSourceError';
  readonly code = 'BUSINESS_ID_SOURCE';
}

/** The Parquet objects a location names: the object itself, or every `.parquet` object under a folder. */
async function parquetKeys(resolve: StoreResolver, location: string) {
  const { store, prefix } = resolve(location);
  if (prefix !== '' && !prefix.endsWith('/') && (await store.head(prefix))) return { store, keys: [prefix] };
  const folder = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
  const keys: string[] = [];
  for await (const info of store.list(folder)) {
    // Working files of a run (`_work/`) are never part of a table.
    if (info.key.endsWith('.parquet') && !info.key.slice(folder.length).startsWith('_')) keys.push(info.key);
  }
  return { store, keys };
}

/**
 * Distinct non-null ids of `column` across the Parquet files at `location`, sorted (so the same table
 * always gives the same enrollments and batches).
 */
export async function readBusinessIds(
  resolve: StoreResolver,
  location: string,
  options: { column?: string; workDir?: string } = {},
): Promise<string[]> {
  const column = options.column ?? 'business_id';
  const { store, keys } = await parquetKeys(resolve, location);
  if (keys.length === 0) throw new BusinessIdSourceError(`${location}: no Parquet files there`);
  return withDuckDb({ workDir: options.workDir }, async (connection, scratch) => {
    const files: string[] = [];
    for (const [index, key] of keys.entries()) {
      let local = store.localPath(key);
      if (!local) {
        local = path.join(scratch, `part-${index}.parquet`);
        await store.downloadToFile(key, local);
      }
      files.push(local);
    }
    const source = `read_parquet([${files.map(sqlString).join(', ')}], union_by_name = true)`;
    const columns = await queryRows<{ column_name: string }>(connection, `DESCRIBE SELECT * FROM ${source}`);
    if (!columns.some((c) => c.column_name === column)) {
      throw new BusinessIdSourceError(
        `${location}: no "${column}" column (columns: ${columns.map((c) => c.column_name).join(', ')})`,
      );
    }
    const rows = await queryRows<{ id: string }>(
      connection,
      `SELECT DISTINCT CAST(${sqlIdent(column)} AS VARCHAR) AS id FROM ${source}
       WHERE ${sqlIdent(column)} IS NOT NULL ORDER BY id`,
    );
    return rows.map((row) => row.id);
  });
}
