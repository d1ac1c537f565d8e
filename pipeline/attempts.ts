// The attempt discipline's policy half, in one place: the error classes activities fail with (whether a
// retry can help), and each activity kind's timeouts and retry policy, each figure with its reason.
// Workflow-safe: workflows declare their activity proxies from `activityOptions`, and activities
// classify failures from `ERROR_CLASSES`, so the two can never disagree.
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import type { ActivityOptions, RetryPolicy } from '@temporalio/common';

/**
 * Every error class name an activity can fail with, and whether another attempt can succeed. The name
 * is the failure's `type`, which `nonRetryableErrorTypes` matches: renaming a class changes retries.
 */
export const ERROR_CLASSES = {
  // The Data Service (client/errors.ts).
  RateLimitedError: { retry: true, why: '429: the window frees up; retried after its Retry-After' },
  ServerError: { retry: true, why: '5xx: transient on the service side' },
  RequestTimeoutError: { retry: true, why: 'no answer within the deadline; the next attempt may get one' },
  ConnectionError: { retry: true, why: 'the connection failed or reset' },
  MalformedResponseError: { retry: true, why: 'a truncated or garbled body; sent again it is whole' },
  ValidationError: { retry: false, why: '422: the same request is refused again (stages split the batch)' },
  AuthError: { retry: false, why: 'the API key is wrong or revoked: every call fails alike' },
  InsufficientCreditsError: { retry: false, why: 'no credits: the stage pauses until an operator resumes' },
  NotFoundError: { retry: false, why: 'the resource is gone' },
  RequestRejectedError: { retry: false, why: 'the service refused this request for good' },
  DataServiceError: { retry: false, why: 'a refusal the client has no class for: sent again, refused again' },
  // The pipeline's own.
  BatchPlanError: { retry: false, why: 'a batch outside its plan file: a defect, not a passing fault' },
  InputFileError: { retry: false, why: 'the input is unreadable or unusable until someone fixes it' },
  InvalidLocationError: { retry: false, why: 'the location cannot name a store' },
  OutputLocationError: { retry: false, why: 'the output cannot be written (no bucket, no access, a file)' },
  JobSpecError: { retry: false, why: 'the job spec is invalid' },
  ExportSpecError: { retry: false, why: 'the export spec is invalid' },
  CursorUnsupportedError: { retry: false, why: 'the service does not page this search by cursor' },
  BusinessIdSourceError: { retry: false, why: 'the id list is unreadable or unusable' },
  LocalPathError: {
    retry: false,
    why: 'the file system refused the path (ENOTDIR, EACCES, EROFS, ENOSPC, a virtual file system)',
  },
  StalledError: { retry: true, why: 'an attempt made no progress for its kind’s stall limit; a new one may' },
} as const satisfies Record<string, { retry: boolean; why: string }>;

export type ErrorClassName = keyof typeof ERROR_CLASSES;

/** The error class names no retry can fix: the source of every `nonRetryableErrorTypes`. */
export const NON_RETRYABLE_ERRORS: string[] = Object.entries(ERROR_CLASSES)
  .filter(([, c]) => !c.retry)
  .map(([name]) => name);

/** Whether a failure of this type is worth another attempt (unknown types are: they are defects or I/O). */
export function isRetryable(type: string | undefined): boolean {
  return !type || !NON_RETRYABLE_ERRORS.includes(type);
}

/**
 * The requests the service received for an activity that failed for good, as its last attempt reported
 * them (activities count each request before it leaves, over every attempt); `otherwise` when the
 * failure carries no count (a timeout, a failure from outside the discipline).
 */
export function requestsOfFailure(error: unknown, otherwise: number): number {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (!(cause instanceof ApplicationFailure)) return otherwise;
  const first: unknown = cause.details?.[0];
  const calls = first && typeof first === 'object' ? (first as { calls?: unknown }).calls : undefined;
  return typeof calls === 'number' ? calls : otherwise;
}

/**
 * How often a running activity heartbeats while it lives, whatever it is doing (activities/attempt.ts).
 * A cancellation reaches an activity only in the answer to a heartbeat, so this (with the worker's
 * heartbeat throttle set to it) bounds how long a cancelled run's calls go on: 2 s.
 */
export const HEARTBEAT_EVERY_MS = 2_000;

/**
 * A memory-heavy attempt that reports no progress for this long gives its memory permit back (it is
 * waiting on a store, not using memory), so a stuck run holds up other runs' planning and commits for
 * 15 s, not until its stall limit abandons it. Planning and commits report progress per chunk or file,
 * seconds apart even in million-row runs, so a working attempt keeps its permit.
 */
export const LEND_PERMIT_AFTER_MS = 15_000;

interface KindPolicy {
  startToCloseTimeout: string;
  /** Absent for activities short enough that start-to-close already notices a dead worker soon. */
  heartbeatTimeout?: string;
  /** An attempt that reports no progress for this long is abandoned as stalled (activities/attempt.ts). */
  stallAfterMs?: number;
  retry: RetryPolicy;
  why: string;
}

/**
 * The activity kinds. Heartbeat timeouts are sized to the 2 s cadence: 10 missed heartbeats (20 s) or 15
 * (30 s) mean the worker is gone, and the attempt runs again elsewhere within 30 s of its death.
 */
export const ACTIVITY_KINDS = {
  apiCall: {
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout: '20 seconds',
    retry: {
      initialInterval: '250 milliseconds',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: 8,
    },
    why: 'one call, bounded by its learned deadline (activities/api-pacing.ts); a quick first retry (the rate budget, not the backoff, paces calls), then backoff; 429 waits its Retry-After',
  },
  tablePlanning: {
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '30 seconds',
    stallAfterMs: 180_000,
    retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
    why: 'reads a whole input (1M rows in ~10 s); reports progress, so a stuck read is a stall, not a wait',
  },
  tableCommit: {
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '30 seconds',
    stallAfterMs: 180_000,
    retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
    why: 'rewrites whole tables (100k rows in ~1 s); outputs are deterministic, so a retry overwrites them',
  },
  bookkeeping: {
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
    why: 'one small object-store write: short, and retried until the store answers',
  },
  pageFetch: {
    startToCloseTimeout: '1 minute',
    heartbeatTimeout: '20 seconds',
    retry: {
      initialInterval: '250 milliseconds',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: 8,
    },
    why: 'one search page or posts call and its write; backoff for 5xx, 429 and timeouts',
  },
  eventWindow: {
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '30 seconds',
    stallAfterMs: 180_000,
    retry: { initialInterval: '2 seconds', maximumInterval: '1 minute' },
    why: 'merges a window of inbox batches into its table; a retry rewrites the same window',
  },
} as const satisfies Record<string, KindPolicy>;

export type ActivityKind = keyof typeof ACTIVITY_KINDS;

/** Per-run overrides of an API kind's retry (job spec `api_retry`). */
export interface RetryOverrides {
  initialIntervalMs?: number;
  maximumIntervalMs?: number;
  maximumAttempts?: number;
}

/**
 * The `proxyActivities` options of an activity kind: its timeouts, and its retry policy with every
 * non-retryable class from `ERROR_CLASSES`.
 */
export function activityOptions(
  kind: ActivityKind,
  extra: { taskQueue?: string; retry?: RetryOverrides; startToCloseTimeoutMs?: number } = {},
): ActivityOptions {
  const policy: KindPolicy = ACTIVITY_KINDS[kind];
  const retry: RetryPolicy = { ...policy.retry, nonRetryableErrorTypes: NON_RETRYABLE_ERRORS };
  if (extra.retry?.initialIntervalMs !== undefined) retry.initialInterval = extra.retry.initialIntervalMs;
  if (extra.retry?.maximumIntervalMs !== undefined) retry.maximumInterval = extra.retry.maximumIntervalMs;
  if (extra.retry?.maximumAttempts !== undefined) retry.maximumAttempts = extra.retry.maximumAttempts;
  return {
    ...(extra.taskQueue ? { taskQueue: extra.taskQueue } : {}),
    startToCloseTimeout: extra.startToCloseTimeoutMs ?? policy.startToCloseTimeout,
    ...(policy.heartbeatTimeout ? { heartbeatTimeout: policy.heartbeatTimeout } : {}),
    retry,
  };
}

/** The stall limit of a kind, for the activity side (activities/attempt.ts). */
export function stallLimitMs(kind: ActivityKind): number | undefined {
  const policy: KindPolicy = ACTIVITY_KINDS[kind];
  return policy.stallAfterMs;
}
