// Finishing an export: the failures table, the manifest, the report and `_SUCCESS`.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MAX_FETCH_SIZE } from '../../contract/limits.js';
import { exportLayout } from '../../pipeline/export-layout.js';
import { truncatedRecords } from '../../pipeline/export-plan.js';
import type {
  ExportCounts,
  ExportPlan,
  ExportRecordsResult,
  ExportRunInput,
  ExportStageProgress,
  ExportSummary,
  PageFailure,
  SliceOutcome,
} from '../../pipeline/export-types.js';
import type { RunLocation, TableSummary } from '../../pipeline/run-types.js';
import { sqlString, withDuckDb } from '../../storage/duckdb.js';
import { cancellationSignal } from '../attempt.js';
import { writeParquetTable } from '../parquet-tables.js';
import { RunFiles } from '../../storage/run-files.js';
import { runLayout } from '../../pipeline/run-layout.js';

/** The calls of the Data Service an export makes (the undici client has them all). */
import type { ExportActivityDeps, ExportShared } from '../export-context.js';
import { toJsonLines } from '../export-context.js';

export function createExportFinishActivities(deps: ExportActivityDeps, _shared: ExportShared) {
  const { resolveStore, logger } = deps;

  return {
    /** Writes the failures table, `manifest.json`, and finally `_SUCCESS`. */
    commitExport: async (input: {
      run: RunLocation;
      request: ExportRunInput;
      plan: ExportPlan;
      slices: SliceOutcome[];
      records: ExportRecordsResult;
      posts?: ExportSummary['posts'];
      postsTable?: TableSummary;
      failures: PageFailure[];
      stages: ExportStageProgress[];
      probeCalls: number;
      startedAt: string;
    }): Promise<ExportSummary> => {
      const { run, plan, records } = input;
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const failuresTable = await withDuckDb(
        { workDir: deps.workDir, signal: cancellationSignal() },
        async (connection, scratch) => {
          const jsonl = path.join(scratch, 'failures.jsonl');
          await writeFile(
            jsonl,
            toJsonLines(
              input.failures.map((f) => ({
                stage: f.stage,
                slice: f.slice,
                page: f.page,
                error_type: f.errorType,
                message: f.message,
                attempts: f.attempts,
              })),
            ),
          );
          const source = input.failures.length
            ? `read_json(${sqlString(jsonl)}, format = 'newline_delimited', columns = {stage: 'VARCHAR', slice: 'INTEGER', page: 'INTEGER', error_type: 'VARCHAR', message: 'VARCHAR', attempts: 'INTEGER'})`
            : `(SELECT NULL::VARCHAR AS stage, NULL::INTEGER AS slice, NULL::INTEGER AS page, NULL::VARCHAR AS error_type, NULL::VARCHAR AS message, NULL::INTEGER AS attempts WHERE false)`;
          return writeParquetTable(
            connection,
            files,
            'failures',
            `SELECT * FROM ${source} ORDER BY stage, slice, page`,
            scratch,
          );
        },
      );
      const tables = [records.table, ...(input.postsTable ? [input.postsTable] : []), failuresTable];
      const truncated = plan.slices.filter((s) => s.method === 'truncated');
      const overCap = input.slices.filter((s) => s.overCap);
      const failedPages = input.failures.filter((f) => f.stage === 'pages').length;
      const failedPosts = input.failures.length - failedPages;
      const pageCalls = input.slices.reduce((sum, s) => sum + s.calls, 0);
      const counts: ExportCounts = {
        searchTotal: plan.total.n,
        searchTotalExact: plan.total.exact,
        sliceSum: plan.sliceSum,
        fetched: records.fetched,
        duplicates: records.duplicates,
        excluded: records.excluded,
        written: records.written,
        truncatedSlices: truncated.length + overCap.length,
        missingFromTruncated: truncatedRecords(plan),
        failedPages,
        calls: input.probeCalls + pageCalls + (input.posts?.calls ?? 0),
        probes: plan.probes,
      };
      const warnings: string[] = [];
      for (const slice of truncated) {
        warnings.push(
          `TRUNCATED: slice ${slice.index} (${slice.description}) holds ${slice.count} records and no filter splits it under the cap of ${plan.cap}; ${slice.count - plan.cap} of its records are NOT in the output (cursor mode was off)`,
        );
      }
      for (const slice of overCap) {
        warnings.push(
          `TRUNCATED: slice ${slice.index} reached the cap of ${plan.cap} records while it was fetched (planned with ${plan.slices[slice.index]?.count ?? '?'}); records beyond the cap are missing — run the export again`,
        );
      }
      if (plan.total.exact && plan.sliceSum !== plan.total.n) {
        warnings.push(`the slices hold ${plan.sliceSum} records but the search counts ${plan.total.n}`);
      }
      if (!plan.total.exact) {
        warnings.push(
          `the search's full count is unknown (at least ${plan.total.n}; without cursor mode counts stop at ${MAX_FETCH_SIZE}), so the slices' sum could not be checked against it`,
        );
      }
      const grown = input.slices.filter((s) => !s.overCap && s.maxTotal > (plan.slices[s.index]?.count ?? 0));
      if (grown.length > 0) {
        warnings.push(
          `${grown.length} slices gained records while they were fetched; the added records were fetched too`,
        );
      }
      if (failedPages > 0)
        warnings.push(`${failedPages} pages failed after their retries; see the failures table`);
      if (failedPosts > 0)
        warnings.push(`${failedPosts} posts calls failed after their retries; see the failures table`);
      const status: ExportSummary['status'] =
        input.failures.length > 0
          ? 'completed_with_failures'
          : counts.truncatedSlices > 0
            ? 'completed_truncated'
            : 'completed';
      const finishedAt = new Date().toISOString();
      const manifest = {
        manifest_version: 1,
        kind: 'export',
        run_id: run.runId,
        job_name: input.request.jobName,
        target: plan.target,
        status,
        filters: input.request.filters,
        size: input.request.size ?? null,
        exclude: input.request.exclude ?? null,
        with_posts: input.request.withPosts ?? false,
        started_at: input.startedAt,
        finished_at: finishedAt,
        location: files.url,
        warnings,
        counts: {
          search_total: counts.searchTotal,
          search_total_exact: counts.searchTotalExact,
          slice_sum: counts.sliceSum,
          slices_match_search: plan.total.exact ? plan.sliceSum === plan.total.n : null,
          fetched: counts.fetched,
          duplicates: counts.duplicates,
          excluded: counts.excluded,
          written: counts.written,
          truncated_slices: counts.truncatedSlices,
          missing_from_truncated: counts.missingFromTruncated,
          failed_pages: counts.failedPages,
          calls: counts.calls,
          probes: counts.probes,
          ...(input.posts ? { posts_records: input.posts.records, posts_misses: input.posts.misses } : {}),
        },
        plan: {
          cap: plan.cap,
          page_size: plan.pageSize,
          exclude_ids: plan.exclude.ids,
          exclude_sent_to_service: plan.exclude.sent,
          rejected_splits: plan.rejected,
          slices: plan.slices.map((s) => {
            const outcome = input.slices.find((o) => o.index === s.index);
            return {
              index: s.index,
              filters: s.description,
              bounds: s.constraints,
              count: s.count,
              method: s.method,
              truncated: s.method === 'truncated' || (outcome?.overCap ?? false),
              planned_records: s.planned,
              fetched_records: outcome?.records ?? 0,
              pages: outcome?.pages ?? 0,
              failed_pages: outcome?.failedPages ?? 0,
            };
          }),
        },
        stages: input.stages.map((s) => ({
          stage: s.stage,
          units: s.totalBatches,
          done: s.doneBatches,
          failed: s.failedBatches,
          records: s.records,
          misses: s.misses,
          calls: s.calls,
          seconds: Math.round((s.updatedAt - s.startedAt) / 100) / 10,
        })),
        tables: tables.map((t) => ({ name: t.table, rows: t.rows, files: t.files, columns: t.columns })),
      };
      const summary: ExportSummary = {
        kind: 'export',
        runId: run.runId,
        jobName: input.request.jobName,
        target: plan.target,
        request: input.request,
        status,
        outputPrefix: files.url,
        manifestKey: runLayout.manifest,
        plan,
        slices: input.slices,
        counts,
        ...(input.posts ? { posts: input.posts } : {}),
        stages: input.stages,
        tables,
        warnings,
        startedAt: input.startedAt,
        finishedAt,
      };
      await files.putJson(exportLayout.summary, summary);
      await files.putJson(runLayout.manifest, manifest);
      await files.putJson(runLayout.success, { run_id: run.runId, finished_at: finishedAt });
      const log = warnings.length ? logger.warn.bind(logger) : logger.info.bind(logger);
      log({ runId: run.runId, status, written: counts.written, warnings }, 'committed export');
      return summary;
    },
  };
}
