// Planning a run: reads the input, rejects unusable rows, and writes the match plan (or, with ids
// given, the row table).
import path from 'node:path';
import {
  runEntity,
  type EnrichDataset,
  type InputSpec,
  type PlanSummary,
  type RunLocation,
  type StagePlan,
} from '../../pipeline/run-types.js';
import { heartbeat, cancellationSignal } from '../attempt.js';
import { sqlString } from '../../storage/duckdb.js';
import { writeParquetTable } from '../parquet-tables.js';
import { checkRunDatasets, planInput, planLines } from '../../storage/plan-input.js';
import { BATCHES_PER_CHUNK, BATCH_SIZE, runLayout } from '../../pipeline/run-layout.js';
import { RunFiles } from '../../storage/run-files.js';
import { preflightRun } from '../preflight.js';

import { duckFor, type ActivityDeps, type RunPlans } from '../run-plans.js';
import { PLANNED_ROWS_GROUP } from '../run-plans.js';

export function createPlanRunActivities(deps: ActivityDeps, plans: RunPlans) {
  const { resolveStore, logger } = deps;
  const duck = duckFor(deps);
  const { writePlanFiles } = plans;

  return {
    /** Reads the input, rejects unusable rows, and writes the match plan (or, with ids given, the row table). */
    planRun: async ({
      run,
      input,
      datasets,
    }: {
      run: RunLocation;
      input: InputSpec;
      /** The run's datasets: people datasets need a people list and company datasets a company list. */
      datasets?: EnrichDataset[];
    }): Promise<PlanSummary> => {
      // The CLI's preflight again: a schedule's input or output may have broken since it was made,
      // and this fails at once (non-retryable) with the words the CLI would have printed.
      heartbeat({ step: 'preflight' });
      await preflightRun({ input, output: run.output }, resolveStore, {
        ...(deps.workDir ? { tempDir: deps.workDir } : {}),
      });
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const source = resolveStore(input.location);
      // One DuckDB thread: it only copies the planned rows and rejects from CSV to Parquet, and a
      // second thread doubles the memory of that copy (each holds a row group and a read buffer).
      return duck(
        async (connection, scratch) => {
          heartbeat({ step: 'reading input' });
          // A run that does not pass its datasets (one started before people lists) plans companies.
          const entity = datasets ? runEntity(input.entity, datasets) : (input.entity ?? 'businesses');
          const spec: InputSpec = { ...input, ...(entity ? { entity } : {}) };
          const planned = await planInput(connection, { store: source.store, key: source.prefix }, spec, {
            tempDir: scratch,
            onProgress: (records) => heartbeat({ step: 'reading input', records }),
          });
          const people = planned.entity === 'prospects';
          if (datasets) checkRunDatasets(input.location, datasets, planned);
          let match: StagePlan | undefined;
          if (!planned.idsProvided && planned.uniqueKeys > 0) {
            // The keys file's lines are the plan items, in key_id order. Plan files go first, while
            // DuckDB has not yet taken memory for the Parquet copies.
            const totalBatches = await writePlanFiles(
              files,
              planLines(planned.keysFile),
              planned.uniqueKeys,
              BATCH_SIZE,
              BATCHES_PER_CHUNK,
              runLayout.matchChunk,
            );
            match = {
              stage: people ? 'prospect_match' : 'match',
              totalBatches,
              batchesPerChunk: BATCHES_PER_CHUNK,
              totalItems: planned.uniqueKeys,
            };
          }
          const rowsFile = path.join(scratch, 'rows.parquet');
          await connection.run(
            `COPY rows TO ${sqlString(rowsFile)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${PLANNED_ROWS_GROUP})`,
          );
          await files.store.putFile(files.key(runLayout.plannedRows), rowsFile);
          // The rejects view is in row order already.
          await writeParquetTable(
            connection,
            files,
            'rejects',
            'SELECT row_number, reason, record FROM rejects',
            scratch,
          );
          const summary: PlanSummary = {
            inputRows: planned.inputRows,
            rejectedRows: planned.rejectedRows,
            uniqueKeys: planned.uniqueKeys,
            idsProvided: planned.idsProvided,
            ...(planned.entity === 'prospects' ? { entity: 'prospects' as const } : {}),
            ...(match ? { match } : {}),
          };
          await files.putJson(runLayout.planSummary, { ...summary, columns: planned.mapping });
          // Counts only (the summary): never the mapping's values or a row.
          logger.info({ runId: run.runId, ...summary }, 'planned run');
          return summary;
        },
        { threads: 1 },
      );
    },
  };
}
