// The id plan of each dataset of a run: the ids of a DuckDB table in batches of the dataset's size,
// less, for an incremental run, the ids its freshness ledger saw within the run's max age. Shared by
// the datasets of people or companies (`buildEnrichPlan`) and by the employers of people
// (`buildEmployerPlan`).
import type { DuckDBConnection } from '@duckdb/node-api';
import path from 'node:path';
import type { BatchRef, EnrichDataset, PendingBatches, StagePlan } from '../../pipeline/run-types.js';
import { queryRows, sqlString } from '../../storage/duckdb.js';
import { ledgerKey, runLayout, stageBatching } from '../../pipeline/run-layout.js';
import { joinKey } from '../../storage/object-store.js';
import type { RunFiles, StoreResolver } from '../../storage/run-files.js';
import type { RunPlans } from '../run-plans.js';

export interface DatasetIdsOptions {
  datasets: readonly EnrichDataset[];
  /** The ledger's key column: what the ids are. */
  idColumn: 'business_id' | 'prospect_id';
  /** A table with one column `id`, in the order batches should take them. */
  idTable: string;
  uniqueIds: number;
  /** The run's output prefix, where the freshness ledgers live. */
  output: ReturnType<StoreResolver>;
  /** Plan files under `_work/plan/<name>-<batch size>…/`; the shared `ids` plans by default. */
  planName?: string;
  maxAgeMs?: number;
  asOf?: number;
  /** Keep the existing plan files and add batches for ids they lack. */
  append: boolean;
}

export async function planDatasetIds(
  connection: DuckDBConnection,
  files: RunFiles,
  scratch: string,
  plans: RunPlans,
  options: DatasetIdsOptions,
): Promise<{ stages: StagePlan[]; appended: PendingBatches[] }> {
  const { datasets, idColumn, uniqueIds, output, planName = 'ids', maxAgeMs, asOf, append } = options;
  const stages: StagePlan[] = [];
  const appended: PendingBatches[] = [];
  const written = new Map<string, { totalBatches: number; added: BatchRef[] }>();
  for (const [index, dataset] of datasets.entries()) {
    const { batchSize, batchesPerChunk } = stageBatching(dataset);
    // The shared `ids-50` plan keeps its name (runs planned before employers read it so); other plans
    // and each dataset of an incremental run have their own.
    let idPlan: string | undefined = planName === 'ids' ? undefined : `${planName}-${batchSize}`;
    let idTable = options.idTable;
    let items = uniqueIds;
    if (maxAgeMs !== undefined) {
      // An incremental run plans each dataset apart: its ids minus those its ledger finds fresh.
      idPlan = `${planName}-${batchSize}-${dataset}`;
      idTable = `${options.idTable}_${index}`;
      const ledger = joinKey(output.prefix, ledgerKey(dataset));
      const local = path.join(scratch, `ledger-${dataset}.parquet`);
      const fresh = (await output.store.exists(ledger))
        ? (await output.store.downloadToFile(ledger, local),
          `SELECT ${idColumn} AS id FROM read_parquet(${sqlString(local)})
             WHERE checked_at >= to_timestamp(${((asOf ?? Date.now()) - maxAgeMs) / 1000})`)
        : 'SELECT NULL::VARCHAR AS id WHERE false';
      await connection.run(
        `CREATE OR REPLACE TABLE ${idTable} AS SELECT id FROM ${options.idTable}
           WHERE id NOT IN (${fresh}) ORDER BY rowid`,
      );
      const [kept] = await queryRows<{ n: number }>(connection, `SELECT count(*) AS n FROM ${idTable}`);
      items = Number(kept?.n ?? 0);
    }
    const planPrefix = runLayout.idPlanPrefix(batchSize, idPlan);
    let plan = written.get(planPrefix);
    if (!plan) {
      plan = append
        ? await plans.appendIdChunks(connection, files, batchSize, batchesPerChunk, scratch, idTable, idPlan)
        : {
            totalBatches: await plans.writeChunks(
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
      ...(idPlan ? { idPlan } : {}),
      ...(maxAgeMs !== undefined ? { skippedFresh: uniqueIds - items } : {}),
    });
    if (plan.added.length) appended.push({ stage: dataset, batches: plan.added });
  }
  return { stages, appended };
}
