// What the export workflows share: their activity proxies (each kind's options from
// pipeline/attempts.ts), their defaults, progress queries and how a failure is read.
import { ActivityFailure, ApplicationFailure, defineQuery, proxyActivities } from '@temporalio/workflow';
import type { ExportActivities } from '../activities/export.js';
import { ACTIVITY_KINDS, activityOptions, isRetryable } from '../pipeline/attempts.js';
import type { ExportProgress, ExportStageProgress } from '../pipeline/export-types.js';
import { QUERY_PROGRESS, type ApiRetryPolicy } from '../pipeline/run-types.js';

/** Errors that stop the whole export: nothing else can succeed either. */
export const FATAL_ERRORS = new Set([
  'AuthError',
  'InsufficientCreditsError',
  'ExportSpecError',
  'JobSpecError',
  'CursorUnsupportedError',
]);
/** Business filters whose split counts come from one `stats` call instead of a probe per value. */
export const STATS_FIELDS = ['company_size', 'company_revenue'];

export const DEFAULT_ATTEMPTS = ACTIVITY_KINDS.pageFetch.retry.maximumAttempts;
export const DEFAULT_WINDOW = 64;
export const DEFAULT_PAGE_SIZE = 100;
/** Page activities completed per workflow run before continuing as new. */
export const UNITS_PER_GENERATION = 1_000;
/** Failures kept in detail; beyond this only counted (the failures table lists the first ones). */
export const MAX_FAILURE_DETAILS = 1_000;

export const { prepareExport } = proxyActivities<ExportActivities>(activityOptions('tablePlanning'));
export const { commitExportRecords, commitExportPosts, commitExport } = proxyActivities<ExportActivities>(
  activityOptions('tableCommit'),
);
export const { saveExportPlan, finishSlice } = proxyActivities<ExportActivities>(
  activityOptions('bookkeeping'),
);

// Calls to the service, one per activity on the API task queue (the shared rate budget): backoff for
// timeouts, 5xx and 429 (after its Retry-After); a call still failing is recorded.
export function apiActivities(taskQueue: string, retry: ApiRetryPolicy = {}, callTimeoutMs = 60_000) {
  return proxyActivities<ExportActivities>(
    activityOptions('pageFetch', { taskQueue, retry, startToCloseTimeoutMs: callTimeoutMs }),
  );
}

export const exportProgressQuery = defineQuery<ExportProgress>(QUERY_PROGRESS);
export const exportStageProgressQuery = defineQuery<ExportStageProgress>(QUERY_PROGRESS);

export function newStage(stage: string): ExportStageProgress {
  const now = Date.now();
  return {
    stage,
    totalBatches: 0,
    doneBatches: 0,
    failedBatches: 0,
    inFlight: 0,
    records: 0,
    misses: 0,
    calls: 0,
    startedAt: now,
    updatedAt: now,
  };
}

export interface FailureInfo {
  type: string;
  message: string;
  retriedOut: boolean;
  failure: ApplicationFailure | undefined;
}

export function failureInfo(error: unknown): FailureInfo {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  const app = cause instanceof ApplicationFailure ? cause : undefined;
  const type = app?.type ?? (cause instanceof Error ? cause.name : 'Error');
  const message = cause instanceof Error ? cause.message : String(cause);
  return {
    type,
    message: message.slice(0, 500),
    retriedOut: isRetryable(type),
    failure: app,
  };
}

export function fatalFailure(info: FailureInfo): ApplicationFailure {
  return ApplicationFailure.create({ type: info.type, message: info.message, nonRetryable: true });
}

// ---- the run -------------------------------------------------------------------------------------
