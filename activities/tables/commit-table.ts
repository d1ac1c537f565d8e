// Committing one dataset: its batch results merged into a Parquet table typed from the contract, and
// the freshness ledger updated with the ids asked for.
import path from 'node:path';
import type { EnrichDataset, RunLocation, TableSummary } from '../../pipeline/run-types.js';
import { heartbeat, cancellationSignal } from '../attempt.js';
import { queryRows, sqlString } from '../../storage/duckdb.js';
import { readLocalTable, writeParquetTable } from '../parquet-tables.js';
import { ledgerKey, runLayout } from '../../pipeline/run-layout.js';
import { joinKey } from '../../storage/object-store.js';
import { gatherLineParts, RunFiles } from '../../storage/run-files.js';
import { datasetColumns, datasetKey, datasetRecordStruct } from '../table-schema.js';

import { duckFor, type ActivityDeps, type RunPlans } from '../run-plans.js';
import { RESULT_PART_BYTES } from '../run-plans.js';

export function createCommitTableActivities(deps: ActivityDeps, _plans: RunPlans) {
  const { resolveStore, logger } = deps;
  const duck = duckFor(deps);

  return {
    /** Merges a dataset's batch results into its Parquet table, typed from the contract. */
    commitTable: async ({
      run,
      dataset,
    }: {
      run: RunLocation;
      dataset: EnrichDataset;
    }): Promise<TableSummary> => {
      const output = resolveStore(run.output);
      const ledger = joinKey(output.prefix, ledgerKey(dataset));
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      // Any rewrite of a table invalidates a previous commit of this run.
      await files.store.delete(files.key(runLayout.success));
      return duck(
        async (connection, scratch, reopen) => {
          const keys = await files.list(runLayout.resultsPrefix(dataset));
          // In files of ~4 MB: DuckDB's JSON reader needs less memory for them than for one large file.
          const parts = await gatherLineParts(
            files,
            keys,
            path.join(scratch, 'results'),
            RESULT_PART_BYTES,
            (gathered) => heartbeat({ dataset, gathered }),
          );
          const local = parts.length ? `[${parts.map(sqlString).join(', ')}]` : undefined;
          // The table's key: business_id, or prospect_id for a prospect dataset (ledger included).
          const id = datasetKey(dataset);
          const columns = datasetColumns(dataset).slice(1);
          const struct = datasetRecordStruct(dataset);
          const source = local
            ? `read_json(${local}, format = 'newline_delimited', columns = {${id}: 'VARCHAR', data: ${sqlString(struct)}})`
            : `(SELECT NULL::VARCHAR AS ${id}, NULL::${struct} AS data WHERE false)`;
          const projection = columns.map((c) => `data."${c.name}" AS "${c.name}"`).join(', ');
          heartbeat({ dataset, files: keys.length });
          // Streamed rather than held, in file order (sorting wide records costs more memory than a
          // warehouse gains), in row groups of 4,096 rows (the writer holds a group in memory: 100k
          // firmographics rows take +52 MB at 4,096, +90 MB at 16,384, at the same speed). Batches
          // never overlap, so an id comes once; should results ever overlap, the table is written again
          // with one row per id (checked on the written file's id column, which is cheap to read).
          await connection.run('SET preserve_insertion_order = false');
          const write = (dedupe: boolean) =>
            writeParquetTable(
              connection,
              files,
              dataset,
              `SELECT ${id}${projection ? ', ' + projection : ''} FROM ${source} WHERE data IS NOT NULL
               ${dedupe ? `QUALIFY row_number() OVER (PARTITION BY ${id}) = 1` : ''}`,
              scratch,
              { rowGroupRows: 4_096 },
            );
          let table = await write(false);
          const [ids] = await queryRows<{ n: number; d: number }>(
            connection,
            `SELECT count(*) AS n, count(DISTINCT ${id}) AS d FROM ${readLocalTable(scratch, dataset)}`,
          );
          if (Number(ids?.n ?? 0) !== Number(ids?.d ?? 0)) {
            logger.warn(
              { dataset, rows: ids?.n, ids: ids?.d },
              'overlapping batch results: writing one row per id',
            );
            table = await write(true);
          }
          // The freshness ledger: this run's ids replace their earlier rows, in one object written whole.
          const previous = path.join(scratch, 'ledger-before.parquet');
          const hasPrevious = await output.store.exists(ledger);
          if (hasPrevious) await output.store.downloadToFile(ledger, previous);
          const next = path.join(scratch, 'ledger.parquet');
          // Found = in the table just written; the results are read again for their ids only, with the
          // same columns as the write (naming only the id column made the scan of the parts 5 x slower
          // and +120 MB), by a new instance: the write's freed memory goes back with the old one
          // instead of adding to this.
          const written = readLocalTable(scratch, dataset);
          const fresh = await reopen();
          await fresh.run('SET preserve_insertion_order = false');
          await fresh.run(
            `COPY (
             WITH checked AS (
               SELECT ${id}, ${id} IN (SELECT ${id} FROM ${written}) AS found
               FROM (SELECT DISTINCT ${id} FROM ${source})
             )
             SELECT ${id}, found, now()::TIMESTAMPTZ AS checked_at, ${sqlString(run.runId)} AS run_id FROM checked
             ${
               hasPrevious
                 ? `UNION ALL SELECT ${id}, found, checked_at, run_id FROM read_parquet(${sqlString(previous)})
                    WHERE ${id} NOT IN (SELECT ${id} FROM checked)`
                 : ''
             }
             ORDER BY ${id}
           ) TO ${sqlString(next)} (FORMAT parquet, COMPRESSION zstd)`,
          );
          await output.store.putFile(ledger, next);
          return table;
        },
        // One thread: the JSON reader's buffers are per thread, and a second one barely speeds this up
        // (100k firmographics: 1.0 s and +150 MB with one, 1.4 s and +200 MB with two).
        { threads: 1 },
      );
    },
  };
}
