// From matches to id batches: each dataset's id plan (less what the freshness ledger finds fresh), the
// `matches` table, and the batches a retry runs again.
import type { DuckDBConnection } from '@duckdb/node-api';
import path from 'node:path';
import {
  isPeopleDataset,
  type BatchFailure,
  type BatchRef,
  type EnrichDataset,
  type EnrichPlanSummary,
  type PendingBatches,
  type RunLocation,
  type StageName,
  type TableSummary,
} from '../../pipeline/run-types.js';
import { heartbeat, cancellationSignal } from '../attempt.js';
import { queryRows, sqlString } from '../../storage/duckdb.js';
import { writeParquetTable } from '../parquet-tables.js';
import { runLayout } from '../../pipeline/run-layout.js';
import { downloadAll, gatherLines, RunFiles } from '../../storage/run-files.js';
import { planDatasetIds } from './dataset-ids.js';

import { duckFor, type ActivityDeps, type RunPlans } from '../run-plans.js';

/** What a run's rows were matched by: the key of each, or the id it gave. */
interface MatchSource {
  idsProvided: boolean;
  /** People: rows were matched to prospects (`prospect_matches`, `prospect_id`). */
  entity?: 'prospects';
}

function matchNames({ entity }: MatchSource): {
  idColumn: 'prospect_id' | 'business_id';
  matchStage: StageName;
  matchesTable: string;
} {
  const people = entity === 'prospects';
  return {
    idColumn: people ? 'prospect_id' : 'business_id',
    matchStage: people ? 'prospect_match' : 'match',
    matchesTable: people ? 'prospect_matches' : 'matches',
  };
}

/**
 * Creates the table `matched` in `connection`: each planned row's number, its input columns when
 * `inputs` is set, the id it was matched to (or gave) and its match status, from the planned rows and
 * the match stage's results.
 */
async function loadMatched(
  connection: DuckDBConnection,
  files: RunFiles,
  scratch: string,
  source: MatchSource,
  inputs: boolean,
): Promise<void> {
  const { idColumn, matchStage } = matchNames(source);
  const [rowsFile] = await downloadAll(files, [runLayout.plannedRows], path.join(scratch, 'rows'));
  const rows = `read_parquet(${sqlString(rowsFile!)})`;
  const inputColumns = inputs
    ? (await queryRows<{ column_name: string }>(connection, `DESCRIBE SELECT * FROM ${rows}`))
        .map((c) => c.column_name)
        .filter((c) => c.startsWith('input_'))
        .map((c) => `r."${c.replaceAll('"', '""')}"`)
    : [];
  const columns = inputColumns.length ? `${inputColumns.join(', ')}, ` : '';
  if (source.idsProvided) {
    await connection.run(
      `CREATE TABLE matched AS SELECT r.row_number, ${columns}r.${idColumn}, 'provided' AS match_status FROM ${rows} r`,
    );
    return;
  }
  const resultKeys = await files.list(runLayout.resultsPrefix(matchStage));
  const local = await gatherLines(files, resultKeys, path.join(scratch, 'match-results.jsonl'), (n) =>
    heartbeat({ gathered: n }),
  );
  const results = local
    ? `read_json(${sqlString(local)}, format = 'newline_delimited', columns = {key_id: 'BIGINT', ${idColumn}: 'VARCHAR'})`
    : `(SELECT NULL::BIGINT AS key_id, NULL::VARCHAR AS ${idColumn} WHERE false)`;
  await connection.run(`CREATE TABLE results AS SELECT DISTINCT key_id, ${idColumn} FROM ${results}`);
  await connection.run(
    `CREATE TABLE matched AS SELECT r.row_number, ${columns}m.${idColumn},
       CASE WHEN m.key_id IS NULL THEN 'match_failed' WHEN m.${idColumn} IS NULL THEN 'unmatched' ELSE 'matched' END AS match_status
     FROM ${rows} r LEFT JOIN results m ON m.key_id = r.key_id`,
  );
}

export function createEnrichPlanActivities(deps: ActivityDeps, plans: RunPlans) {
  const { resolveStore } = deps;
  const duck = duckFor(deps);

  return {
    /**
     * Plans the id batches of each dataset from the match results (or the ids the rows gave), with
     * the matched and unmatched row counts. Only row numbers, keys and ids are read: the `matches`
     * table, with the input columns, is written apart (`writeMatchesTable`) while the datasets run.
     */
    buildEnrichPlan: async ({
      run,
      datasets,
      idsProvided,
      entity,
      append = false,
      maxAgeMs,
      asOf,
    }: MatchSource & {
      run: RunLocation;
      datasets: EnrichDataset[];
      /** Incremental: leave out, per dataset, ids the output's ledger saw less than this long before `asOf`. */
      maxAgeMs?: number;
      /** The run's start, epoch ms: freshness is judged against it (the same on every attempt). */
      asOf?: number;
      /**
       * Keep the existing id plan and add batches only for ids it lacks (after a retry matched more
       * rows); the added batches are returned per stage.
       */
      append?: boolean;
    }): Promise<EnrichPlanSummary & { appended: PendingBatches[] }> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const people = entity === 'prospects';
      const source = { idsProvided, ...(entity ? { entity } : {}) };
      const { idColumn } = matchNames(source);
      return duck(async (connection, scratch) => {
        await loadMatched(connection, files, scratch, source, false);
        await connection.run(
          `CREATE TABLE ids AS SELECT ${idColumn} AS id FROM matched WHERE ${idColumn} IS NOT NULL
             GROUP BY ${idColumn} ORDER BY min(row_number)`,
        );
        const [counts] = await queryRows<{ matched: number; unmatched: number; ids: number }>(
          connection,
          `SELECT count(*) FILTER (WHERE ${idColumn} IS NOT NULL) AS matched, count(*) FILTER (WHERE ${idColumn} IS NULL) AS unmatched,
                  (SELECT count(*) FROM ids) AS ids FROM matched`,
        );
        const uniqueIds = Number(counts?.ids ?? 0);
        // The employers of people are planned once the profiles are in (buildEmployerPlan).
        const { stages, appended } = await planDatasetIds(connection, files, scratch, plans, {
          datasets: people ? datasets.filter(isPeopleDataset) : datasets,
          idColumn,
          idTable: 'ids',
          uniqueIds,
          output: resolveStore(run.output),
          append,
          ...(maxAgeMs !== undefined ? { maxAgeMs } : {}),
          ...(asOf !== undefined ? { asOf } : {}),
        });
        return {
          matchedRows: Number(counts?.matched ?? 0),
          unmatchedRows: Number(counts?.unmatched ?? 0),
          uniqueIds,
          stages,
          appended,
        };
      });
    },

    /**
     * Writes the `matches` table (`prospect_matches` for people): each input row with its input
     * columns, the id it was matched to and its match status, in row order.
     */
    writeMatchesTable: async ({
      run,
      idsProvided,
      entity,
    }: MatchSource & { run: RunLocation }): Promise<TableSummary> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const source = { idsProvided, ...(entity ? { entity } : {}) };
      // One DuckDB thread: this runs beside the dataset stages, whose calls need the worker's CPU more.
      return duck(
        async (connection, scratch) => {
          await loadMatched(connection, files, scratch, source, true);
          return writeParquetTable(
            connection,
            files,
            matchNames(source).matchesTable,
            'SELECT * FROM matched ORDER BY row_number',
            scratch,
          );
        },
        { threads: 1 },
      );
    },

    /**
     * Gathers the failed batches recorded for a run and moves their records aside (under
     * `_work/failures-retried/<retryId>/`), so the batches that fail again are the only ones recorded.
     */
    planRetry: async ({ run, retryId }: { run: RunLocation; retryId: string }): Promise<PendingBatches[]> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const byStage = new Map<StageName, BatchRef[]>();
      for (const key of await files.list(runLayout.failuresPrefix)) {
        const record = await files.getJson<{ stage: StageName; failures: BatchFailure[] }>(key);
        const refs = byStage.get(record.stage) ?? [];
        refs.push(...record.failures.map((f) => f.batch));
        byStage.set(record.stage, refs);
        await files.store.put(
          files.key(`_work/failures-retried/${retryId}/${key.slice(runLayout.failuresPrefix.length)}`),
          JSON.stringify(record),
        );
        await files.store.delete(files.key(key));
      }
      return [...byStage.entries()].map(([stage, batches]) => ({ stage, batches }));
    },
  };
}
