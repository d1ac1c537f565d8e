// Finishing a run: failed batches recorded as they happen, then the failures table, the manifest, the
// report and `_SUCCESS`.
import { cancellationSignal } from '../attempt.js';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describeBatch } from '../../pipeline/batch-queue.js';
import type {
  BatchFailure,
  EnrichPlanSummary,
  EnrichRunInput,
  PlanSummary,
  RunLocation,
  RunSummary,
  StageName,
  StageResult,
  TableSummary,
} from '../../pipeline/run-types.js';
import { sqlString } from '../../storage/duckdb.js';
import { writeParquetTable } from '../parquet-tables.js';
import { rejectReasonsOf, renderRunReport } from '../report.js';
import { runLayout } from '../../pipeline/run-layout.js';
import { RunFiles } from '../../storage/run-files.js';

import { duckFor, type ActivityDeps, type RunPlans } from '../run-plans.js';
import { toJsonLines } from '../run-plans.js';

export function createCommitRunActivities(deps: ActivityDeps, plans: RunPlans) {
  const { resolveStore, logger } = deps;
  const duck = duckFor(deps);
  const { failedItems } = plans;

  return {
    /** Appends failed batches to the run's failure records; returns the key written. */
    recordFailures: async ({
      run,
      stage,
      sequence,
      generation,
      failures,
    }: {
      run: RunLocation;
      stage: StageName;
      sequence: number;
      generation: number;
      failures: BatchFailure[];
    }): Promise<string> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const key = runLayout.failures(stage, generation, sequence);
      await files.putJson(key, { stage, failures });
      return key;
    },

    /** Writes the failures table, `manifest.json`, and finally `_SUCCESS`. */
    commitRun: async (input: {
      run: RunLocation;
      request: EnrichRunInput;
      retries?: string[];
      jobName: string;
      plan: PlanSummary;
      enrichPlan: EnrichPlanSummary;
      stages: StageResult[];
      datasetTables: TableSummary[];
      startedAt: string;
    }): Promise<RunSummary> => {
      const { run } = input;
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const rejects = await files.getJson<TableSummary>('_work/tables/rejects.json');
      // One DuckDB session for the failures table and the reasons rejects were given.
      const { failuresTable, rejectReasons } = await duck(async (connection, scratch) => {
        const rows: unknown[] = [];
        {
          for (const key of await files.list(runLayout.failuresPrefix)) {
            const record = await files.getJson<{ stage: StageName; failures: BatchFailure[] }>(key);
            for (const failure of record.failures) {
              const items = await failedItems(
                files,
                record.stage,
                failure.batch,
                [...input.enrichPlan.stages, ...(input.enrichPlan.employers?.stages ?? [])].find(
                  (s) => s.stage === record.stage,
                )?.idPlan,
              );
              rows.push({
                stage: record.stage,
                batch: describeBatch(failure.batch),
                error_type: failure.errorType,
                message: failure.message,
                attempts: failure.attempts,
                items,
              });
            }
          }
        }
        const jsonl = path.join(scratch, 'failures.jsonl');
        await writeFile(jsonl, toJsonLines(rows));
        const source = rows.length
          ? `read_json(${sqlString(jsonl)}, format = 'newline_delimited', columns = {stage: 'VARCHAR', batch: 'VARCHAR', error_type: 'VARCHAR', message: 'VARCHAR', attempts: 'INTEGER', items: 'VARCHAR[]'})`
          : `(SELECT NULL::VARCHAR AS stage, NULL::VARCHAR AS batch, NULL::VARCHAR AS error_type, NULL::VARCHAR AS message, NULL::INTEGER AS attempts, NULL::VARCHAR[] AS items WHERE false)`;
        return {
          failuresTable: await writeParquetTable(
            connection,
            files,
            'failures',
            `SELECT * FROM ${source} ORDER BY stage, batch`,
            scratch,
          ),
          rejectReasons: await rejectReasonsOf(connection, files, rejects, scratch),
        };
      });
      const matches = await files.getJson<TableSummary>(
        `_work/tables/${input.plan.entity === 'prospects' ? 'prospect_matches' : 'matches'}.json`,
      );
      const tables = [...input.datasetTables, matches, rejects, failuresTable];
      const finishedAt = new Date().toISOString();
      const failedBatches = failuresTable.rows;
      const unstartedBatches = input.stages.reduce((sum, s) => sum + (s.unstarted?.batches ?? 0), 0);
      const status: RunSummary['status'] =
        unstartedBatches > 0
          ? 'stopped_at_budget'
          : failedBatches > 0
            ? 'completed_with_failures'
            : 'completed';
      const manifest = {
        manifest_version: 1,
        run_id: run.runId,
        job_name: input.jobName,
        status,
        datasets: input.request.datasets,
        input: input.request.input.location,
        retries: input.retries ?? [],
        started_at: input.startedAt,
        finished_at: finishedAt,
        location: files.url,
        counts: {
          input_rows: input.plan.inputRows,
          rejected_rows: input.plan.rejectedRows,
          unique_match_keys: input.plan.idsProvided ? 0 : input.plan.uniqueKeys,
          matched_rows: input.enrichPlan.matchedRows,
          unmatched_rows: input.enrichPlan.unmatchedRows,
          unique_business_ids: input.enrichPlan.uniqueIds,
          ...(input.enrichPlan.employers
            ? {
                unique_employer_ids: input.enrichPlan.employers.uniqueIds,
                employer_from_input_rows: input.enrichPlan.employers.rowsFromInput,
                employer_from_profile_rows: input.enrichPlan.employers.rowsFromProfile,
                rows_without_employer: input.enrichPlan.employers.rowsWithout,
              }
            : {}),
          failed_batches: failedBatches,
          unstarted_batches: unstartedBatches,
          calls: input.stages.reduce((sum, s) => sum + s.calls, 0),
        },
        ...(input.request.maxCalls !== undefined ? { max_calls: input.request.maxCalls } : {}),
        stages: input.stages.map((s) => ({
          stage: s.stage,
          batches: s.totalBatches,
          done_batches: s.doneBatches,
          failed_batches: s.failedBatches,
          unstarted_batches: s.unstarted?.batches ?? 0,
          skipped_fresh:
            [...input.enrichPlan.stages, ...(input.enrichPlan.employers?.stages ?? [])].find(
              (p) => p.stage === s.stage,
            )?.skippedFresh ?? 0,
          records: s.records,
          misses: s.misses,
          calls: s.calls,
          started_at: new Date(s.startedAt).toISOString(),
          finished_at: new Date(s.updatedAt).toISOString(),
          seconds: Math.round((s.updatedAt - s.startedAt) / 100) / 10,
        })),
        tables: tables.map((t) => ({ name: t.table, rows: t.rows, files: t.files, columns: t.columns })),
      };
      const summary: RunSummary = {
        runId: run.runId,
        request: input.request,
        ...(input.retries?.length ? { retries: input.retries } : {}),
        jobName: input.jobName,
        status,
        outputPrefix: files.url,
        manifestKey: runLayout.manifest,
        plan: input.plan,
        enrichPlan: input.enrichPlan,
        stages: input.stages,
        tables,
        failedBatches,
        startedAt: input.startedAt,
        finishedAt,
      };
      await files.putJson(runLayout.runSummary, summary);
      await files.putJson(runLayout.manifest, manifest);
      // The analyst's view of the same facts, next to the manifest.
      await files.store.put(files.key(runLayout.report), renderRunReport(manifest, { rejectReasons }), {
        contentType: 'text/markdown; charset=utf-8',
      });
      // `_SUCCESS` means complete: a run with failed or unstarted batches gets none until `runs retry`
      // completes it, unless the job opted in to a marker for partial runs. Its body states the status.
      if (status === 'completed' || input.request.successMarker === 'always') {
        await files.putJson(runLayout.success, { run_id: run.runId, status, finished_at: finishedAt });
      } else {
        await files.store.delete(files.key(runLayout.success));
      }
      logger.info({ runId: run.runId, status, failedBatches, unstartedBatches }, 'committed run');
      return summary;
    },
  };
}
