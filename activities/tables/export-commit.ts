// An export's tables: the fetched pages merged into one record per id (the first fetched wins), and
// the posts of the exported prospects.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { columnsOfSchema } from '../../contract/columns.js';
import { NetworkPostsRecordSchema } from '../../contract/datasets.js';
import { exportLayout, POST_IDS_PER_CHUNK } from '../../pipeline/export-layout.js';
import type { ExportRecordsResult } from '../../pipeline/export-types.js';
import type { RunLocation, TableSummary } from '../../pipeline/run-types.js';
import { queryRows, sqlString, withDuckDb } from '../../storage/duckdb.js';
import { cancellationSignal, heartbeat } from '../attempt.js';
import { writeParquetTable } from '../parquet-tables.js';
import { downloadAll, RunFiles } from '../../storage/run-files.js';
import { runLayout } from '../../pipeline/run-layout.js';
import { duckDbType } from '../table-schema.js';

/** The calls of the Data Service an export makes (the undici client has them all). */
import type { ExportActivityDeps, ExportShared } from '../export-context.js';
import { COMMIT_DUCKDB, WIDE_ROW_GROUP_ROWS, ID_FIELD, recordStruct } from '../export-context.js';

export function createExportCommitActivities(deps: ExportActivityDeps, shared: ExportShared) {
  const { resolveStore } = deps;
  const { contextOf } = shared;

  return {
    /**
     * Merges the fetched pages into the output table: one row per id (the first fetched), excluded ids
     * left out, at most `limit` rows, in the service's order; queues the ids for posts when asked.
     */
    commitExportRecords: async ({
      run,
      limit,
      withPosts,
    }: {
      run: RunLocation;
      limit?: number;
      withPosts?: boolean;
    }): Promise<ExportRecordsResult> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      await files.store.delete(files.key(runLayout.success));
      const context = await contextOf(files);
      const idField = ID_FIELD[context.target];
      return withDuckDb(
        { ...COMMIT_DUCKDB(deps.workDir), signal: cancellationSignal() },
        async (connection, scratch) => {
          // Row order inside the file is not kept (sorting wide records would not fit the worker's
          // memory budget); which records are kept is: the first fetched of each id, in service order.
          await connection.run('SET preserve_insertion_order = false');
          const keys = (await files.list(exportLayout.pagesPrefix)).filter((k) => k.endsWith('.jsonl'));
          const local = await downloadAll(files, keys, path.join(scratch, 'pages'), (n) =>
            heartbeat({ downloaded: n }),
          );
          heartbeat({ pages: local.length });
          const struct = recordStruct(context.target);
          const pages = `[${local.map(sqlString).join(', ')}], format = 'newline_delimited'`;
          const idStruct = `STRUCT("${idField}" VARCHAR)`;
          // Ids first (small), to choose the rows to keep; the records are read once, when writing.
          const ids = local.length
            ? `read_json(${pages}, columns = {k: 'BIGINT', r: ${sqlString(idStruct)}})`
            : `(SELECT NULL::BIGINT AS k, NULL::${idStruct} AS r WHERE false)`;
          const records = local.length
            ? `read_json(${pages}, columns = {k: 'BIGINT', r: ${sqlString(struct)}})`
            : `(SELECT NULL::BIGINT AS k, NULL::${struct} AS r WHERE false)`;
          await connection.run(`CREATE TABLE fetched AS SELECT k, r."${idField}" AS id FROM ${ids}`);
          heartbeat({ step: 'ids loaded' });
          const excludeFile = path.join(scratch, 'exclude.json');
          await writeFile(
            excludeFile,
            JSON.stringify((await files.getJson<string[]>(exportLayout.exclude)).map((id) => ({ id }))),
          );
          await connection.run(
            `CREATE TABLE excluded AS SELECT DISTINCT id FROM read_json(${sqlString(excludeFile)}, format = 'array', columns = {id: 'VARCHAR'})`,
          );
          await connection.run(
            `CREATE TABLE keep AS SELECT min(k) AS k FROM fetched WHERE id NOT IN (SELECT id FROM excluded)
             GROUP BY id ORDER BY k ${limit !== undefined ? `LIMIT ${limit}` : ''}`,
          );
          const [counts] = await queryRows<{ fetched: number; unique_ids: number; excluded: number }>(
            connection,
            `SELECT count(*) AS fetched, count(DISTINCT id) AS unique_ids,
                  (SELECT count(DISTINCT f.id) FROM fetched f WHERE f.id IN (SELECT id FROM excluded)) AS excluded
           FROM fetched`,
          );
          // No join against the JSON scan: DuckDB cannot size it and would build its hash table from
          // the records. Rows up to the last kept one go through a plain filter; only when duplicates
          // or excluded ids sit among them does a second pass over a staged Parquet file drop them.
          const [kept] = await queryRows<{ n: number; last: number | null; upto: number }>(
            connection,
            `SELECT count(*) AS n, max(k) AS last,
                    (SELECT count(*) FROM fetched WHERE k <= (SELECT max(k) FROM keep)) AS upto
             FROM keep`,
          );
          const last = kept?.last === null || kept?.last === undefined ? -1 : Number(kept.last);
          let table: TableSummary;
          if (Number(kept?.upto ?? 0) === Number(kept?.n ?? 0)) {
            table = await writeParquetTable(
              connection,
              files,
              context.target,
              `SELECT r.* FROM ${records} WHERE k <= ${last}`,
              scratch,
              { rowGroupRows: WIDE_ROW_GROUP_ROWS },
            );
          } else {
            const staged = path.join(scratch, 'staged.parquet');
            await connection.run(
              `COPY (SELECT k, r.* FROM ${records} WHERE k <= ${last}) TO ${sqlString(staged)}
                 (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${WIDE_ROW_GROUP_ROWS})`,
            );
            heartbeat({ step: 'staged' });
            table = await writeParquetTable(
              connection,
              files,
              context.target,
              `SELECT * EXCLUDE (k) FROM read_parquet(${sqlString(staged)}) WHERE k IN (SELECT k FROM keep)`,
              scratch,
              { rowGroupRows: WIDE_ROW_GROUP_ROWS },
            );
          }
          let postIds = 0;
          if (withPosts) {
            const ids = await queryRows<{ id: string }>(
              connection,
              `SELECT f.id FROM fetched f JOIN keep USING (k) ORDER BY k`,
            );
            for (let chunk = 0; chunk * POST_IDS_PER_CHUNK < ids.length; chunk += 1) {
              const part = ids
                .slice(chunk * POST_IDS_PER_CHUNK, (chunk + 1) * POST_IDS_PER_CHUNK)
                .map((r) => r.id);
              await files.putJson(exportLayout.postIds(chunk), part);
            }
            postIds = ids.length;
          }
          const fetched = Number(counts?.fetched ?? 0);
          const unique = Number(counts?.unique_ids ?? 0);
          return {
            table,
            fetched,
            duplicates: fetched - unique,
            excluded: Number(counts?.excluded ?? 0),
            written: table.rows,
            postIds,
          };
        },
      );
    },

    /** The `prospect_posts` table: `prospect_id` and the fields of the posts record. */
    commitExportPosts: async ({ run }: { run: RunLocation }): Promise<TableSummary> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      return withDuckDb(
        { ...COMMIT_DUCKDB(deps.workDir), signal: cancellationSignal() },
        async (connection, scratch) => {
          await connection.run('SET preserve_insertion_order = false');
          const keys = await files.list(exportLayout.postsPrefix);
          const local = await downloadAll(files, keys, path.join(scratch, 'posts'), (n) =>
            heartbeat({ downloaded: n }),
          );
          const fields = columnsOfSchema(NetworkPostsRecordSchema);
          const struct = duckDbType({ kind: 'struct', fields });
          const source = local.length
            ? `read_json([${local.map(sqlString).join(', ')}], format = 'newline_delimited', columns = {k: 'BIGINT', prospect_id: 'VARCHAR', data: ${sqlString(struct)}})`
            : `(SELECT NULL::BIGINT AS k, NULL::VARCHAR AS prospect_id, NULL::${struct} AS data WHERE false)`;
          const projection = fields.map((f) => `data."${f.name}" AS "${f.name}"`).join(', ');
          return writeParquetTable(
            connection,
            files,
            'prospect_posts',
            `SELECT prospect_id, ${projection} FROM ${source} WHERE data IS NOT NULL`,
            scratch,
            { rowGroupRows: WIDE_ROW_GROUP_ROWS },
          );
        },
      );
    },
  };
}
