// The posts of an export's prospects: one call per prospect in a sliding window, under the same
// rate budget as the pages.
import { condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ExportStageProgress, PageFailure, PostsResult } from '../pipeline/export-types.js';
import { requestsOfFailure } from '../pipeline/attempts.js';
import { type ApiRetryPolicy, type RunLocation } from '../pipeline/run-types.js';
import {
  FATAL_ERRORS,
  DEFAULT_ATTEMPTS,
  UNITS_PER_GENERATION,
  MAX_FAILURE_DETAILS,
  apiActivities,
  exportStageProgressQuery,
  newStage,
  type FailureInfo,
  failureInfo,
  fatalFailure,
} from './export-shared.js';

export interface ExportPostsInput {
  run: RunLocation;
  /** Exported prospects, in the order of the posts plan files. */
  total: number;
  apiTaskQueue: string;
  windowSize: number;
  apiRetry?: ApiRetryPolicy;
  callTimeoutMs?: number;
  carry?: { next: number; failures: PageFailure[]; progress: ExportStageProgress };
}

/** One posts call per exported prospect, in a sliding window under the same rate budget as the pages. */
export async function exportPostsWorkflow(input: ExportPostsInput): Promise<PostsResult> {
  const { run } = input;
  const api = apiActivities(input.apiTaskQueue, input.apiRetry, input.callTimeoutMs);
  const attempts = input.apiRetry?.maximumAttempts ?? DEFAULT_ATTEMPTS;
  let next = input.carry?.next ?? 0;
  const failures: PageFailure[] = [...(input.carry?.failures ?? [])];
  const progress: ExportStageProgress = input.carry?.progress ?? {
    ...newStage('posts'),
    totalBatches: input.total,
  };
  setHandler(exportStageProgressQuery, () => progress);
  let inFlight = 0;
  let completed = 0;
  let version = 0;
  let fatal: FailureInfo | undefined;

  const launch = (index: number) => {
    inFlight += 1;
    void api
      .fetchPosts({ run, index })
      .then(
        (result) => {
          progress.doneBatches += 1;
          progress.records += result.records;
          progress.misses += result.misses;
          progress.calls += result.calls;
        },
        (error: unknown) => {
          const info = failureInfo(error);
          const tries = info.retriedOut ? attempts : 1;
          progress.calls += requestsOfFailure(error, tries);
          if (FATAL_ERRORS.has(info.type)) {
            fatal ??= info;
            return;
          }
          progress.failedBatches += 1;
          if (failures.length < MAX_FAILURE_DETAILS) {
            failures.push({
              stage: 'posts',
              slice: null,
              page: index,
              errorType: info.type,
              message: info.message,
              attempts: tries,
            });
          }
        },
      )
      .finally(() => {
        inFlight -= 1;
        completed += 1;
        version += 1;
        progress.inFlight = inFlight;
        progress.updatedAt = Date.now();
      });
  };

  const generationFull = () => completed >= UNITS_PER_GENERATION || workflowInfo().continueAsNewSuggested;
  for (;;) {
    while (!fatal && inFlight < input.windowSize && next < input.total && !generationFull()) launch(next++);
    if (fatal) break;
    if (inFlight === 0 && (next >= input.total || generationFull())) break;
    const seen = version;
    await condition(() => version !== seen || fatal !== undefined);
  }
  if (fatal) throw fatalFailure(fatal);
  if (next < input.total) {
    return await continueAsNew<typeof exportPostsWorkflow>({ ...input, carry: { next, failures, progress } });
  }
  return {
    total: input.total,
    records: progress.records,
    misses: progress.misses,
    calls: progress.calls,
    failed: progress.failedBatches,
    failures,
    progress,
  };
}
