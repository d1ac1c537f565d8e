// From matches to id batches: the `matches` table, each dataset's id plan (less what the freshness
// ledger finds fresh), and the batches a retry runs again.
import path from 'node:path';
import type {
  BatchFailure,
  BatchRef,
  EnrichDataset,
  EnrichPlanSummary,
  PendingBatches,
  RunLocation,
  StageName,
  StagePlan,
} from '../../pipeline/run-types.js';
import { heartbeat, cancellationSignal } from '../attempt.js';
import { queryRows, sqlString } from '../../storage/duckdb.js';
import { writeParquetTable } from '../parquet-tables.js';
import { ledgerKey, runLayout, stageBatching } from '../../pipeline/run-layout.js';
import { joinKey } from '../../storage/object-store.js';
import { gatherLines, RunFiles } from '../../storage/run-files.js';

import { duckFor, type ActivityDeps, type RunPlans } from '../run-plans.js';

export function createEnrichPlanActivities(deps: ActivityDeps, plans: RunPlans) {
  const { resolveStore } = deps;
  const duck = duckFor(deps);
  const { writeChunks, appendIdChunks } = plans;

  return {
    /** Joins match results to the input rows (the `matches` table) and plans the id batches of each dataset. */
    buildEnrichPlan: async ({
      run,
      datasets,
      idsProvided,
      entity,
      append = false,
      maxAgeMs,
      asOf,
    }: {
      run: RunLocation;
      datasets: EnrichDataset[];
      idsProvided: boolean;
      /** People: rows were matched to prospects (`prospect_matches`, `prospect_id`). */
      entity?: 'prospects';
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
      const idColumn = people ? 'prospect_id' : 'business_id';
      const matchStage: StageName = people ? 'prospect_match' : 'match';
      const matchesTable = people ? 'prospect_matches' : 'matches';
      return duck(async (connection, scratch) => {
        const rowsFile = path.join(scratch, 'rows.parquet');
        await files.store.downloadToFile(files.key(runLayout.plannedRows), rowsFile);
        await connection.run(`CREATE TABLE rows AS SELECT * FROM read_parquet(${sqlString(rowsFile)})`);
        const inputColumns = (await queryRows<{ column_name: string }>(connection, 'DESCRIBE rows'))
          .map((c) => c.column_name)
          .filter((c) => c.startsWith('input_'))
          .map((c) => `r."${c.replaceAll('"', '""')}"`);
        const inputs = inputColumns.length ? `${inputColumns.join(', ')}, ` : '';
        if (idsProvided) {
          await connection.run(
            `CREATE TABLE matched AS SELECT r.row_number, ${inputs}r.${idColumn}, 'provided' AS match_status FROM rows r`,
          );
        } else {
          const resultKeys = await files.list(runLayout.resultsPrefix(matchStage));
          const local = await gatherLines(files, resultKeys, path.join(scratch, 'match-results.jsonl'), (n) =>
            heartbeat({ gathered: n }),
          );
          const source = local
            ? `read_json(${sqlString(local)}, format = 'newline_delimited', columns = {key_id: 'BIGINT', ${idColumn}: 'VARCHAR'})`
            : `(SELECT NULL::BIGINT AS key_id, NULL::VARCHAR AS ${idColumn} WHERE false)`;
          await connection.run(`CREATE TABLE results AS SELECT DISTINCT key_id, ${idColumn} FROM ${source}`);
          await connection.run(
            `CREATE TABLE matched AS SELECT r.row_number, ${inputs}m.${idColumn},
               CASE WHEN m.key_id IS NULL THEN 'match_failed' WHEN m.${idColumn} IS NULL THEN 'unmatched' ELSE 'matched' END AS match_status
             FROM rows r LEFT JOIN results m ON m.key_id = r.key_id`,
          );
        }
        await writeParquetTable(
          connection,
          files,
          matchesTable,
          'SELECT * FROM matched ORDER BY row_number',
          scratch,
        );
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
        const stages: StagePlan[] = [];
        const appended: PendingBatches[] = [];
        const written = new Map<string, { totalBatches: number; added: BatchRef[] }>();
        const output = resolveStore(run.output);
        for (const dataset of datasets) {
          const { batchSize, batchesPerChunk } = stageBatching(dataset);
          // An incremental run plans each dataset apart: its ids minus those its ledger finds fresh.
          let idTable = 'ids';
          let idPlan: string | undefined;
          let items = uniqueIds;
          if (maxAgeMs !== undefined) {
            idPlan = `ids-${batchSize}-${dataset}`;
            idTable = `ids_${datasets.indexOf(dataset)}`;
            const ledger = joinKey(output.prefix, ledgerKey(dataset));
            const local = path.join(scratch, `ledger-${dataset}.parquet`);
            const fresh = (await output.store.exists(ledger))
              ? (await output.store.downloadToFile(ledger, local),
                `SELECT ${idColumn} AS id FROM read_parquet(${sqlString(local)})
                   WHERE checked_at >= to_timestamp(${((asOf ?? Date.now()) - maxAgeMs) / 1000})`)
              : 'SELECT NULL::VARCHAR AS id WHERE false';
            await connection.run(
              `CREATE TABLE ${idTable} AS SELECT id FROM ids
                 WHERE id NOT IN (${fresh}) ORDER BY rowid`,
            );
            const [kept] = await queryRows<{ n: number }>(connection, `SELECT count(*) AS n FROM ${idTable}`);
            items = Number(kept?.n ?? 0);
          }
          const planPrefix = runLayout.idPlanPrefix(batchSize, idPlan);
          let plan = written.get(planPrefix);
          if (!plan) {
            plan = append
              ? await appendIdChunks(connection, files, batchSize, batchesPerChunk, scratch, idTable, idPlan)
              : {
                  totalBatches: await writeChunks(
                    connection,
                    files,
                    `SELECT id FROM ${idTable} ORDER BY rowid`,
                    items,
                    batchSize,
                    batchesPerChunk,
                    (chunk) => runLayout.idChunk(batchSize, chunk, idPlan),
                    (row) => row.id,
                  ),
                  added: [],
                };
            written.set(planPrefix, plan);
          }
          stages.push({
            stage: dataset,
            totalBatches: plan.totalBatches,
            batchesPerChunk,
            totalItems: items,
            ...(idPlan ? { idPlan, skippedFresh: uniqueIds - items } : {}),
          });
          if (plan.added.length) appended.push({ stage: dataset, batches: plan.added });
        }
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
