// The attempt discipline's activity half: every activity runs inside `inAttempt`, which heartbeats on a
// fixed cadence (a dead worker is noticed within its kind's heartbeat timeout), hands the work one
// AbortSignal that fires on cancellation or a stall (and reaches HTTP, S3 and DuckDB), abandons an
// attempt that will not return so its task slot and memory permit free up, and turns every error into
// the ApplicationFailure its class calls for, with the cause kept.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import {
  ERROR_CLASSES,
  HEARTBEAT_EVERY_MS,
  isRetryable,
  LEND_PERMIT_AFTER_MS,
  stallLimitMs,
  type ActivityKind,
} from '../pipeline/attempts.js';

interface AttemptState {
  controller: AbortController;
  lastProgress: number;
  details: unknown;
  /** Requests sent so far over every attempt, once this attempt has sent one (see `countRequest`). */
  requests?: number;
  /** Whether a failure reports the requests sent (activities that call the Data Service). */
  countsRequests: boolean;
}

const attempts = new WeakMap<Context, AttemptState>();

/** The kinds that call the Data Service, whose failures carry the requests the service received. */
const CALLING_KINDS = new Set<ActivityKind>(['apiCall', 'pageFetch']);

function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // Called directly (tests, benchmarks, the CLI's dry run): nobody to tell.
  }
}

/**
 * Reports progress: heartbeats with `details` (what a retried attempt resumes from; see
 * `resumeDetails`) and restarts the stall clock.
 */
export function heartbeat(details?: unknown): void {
  const context = currentContext();
  if (!context) return;
  const state = attempts.get(context);
  if (state) {
    state.lastProgress = Date.now();
    if (details !== undefined) state.details = details;
  }
  context.heartbeat(details ?? state?.details);
}

/** The progress details the previous attempt last reported, for a retry to resume from. */
export function resumeDetails<T>(): T | undefined {
  return currentContext()?.info.heartbeatDetails as T | undefined;
}

/**
 * Counts a request about to go to the service. The running total (this attempt's requests and the
 * earlier attempts') rides on the heartbeat details, so a retry starts from what the service may have
 * received. A retried attempt heartbeats it at once, before the request leaves, so one that dies before
 * sending counts nothing; a first attempt leaves it to the next timed heartbeat (one heartbeat per call
 * more costs the Temporal server a write per call: 20 % of the dev server's throughput under load), and
 * a retry presumes a first attempt that never said otherwise did send.
 */
export function countRequest(): void {
  const context = currentContext();
  if (!context) return;
  const state = attempts.get(context);
  if (!state) return;
  state.requests = requestsSent() + 1;
  state.details = { ...(isRecord(state.details) ? state.details : {}), requests: state.requests };
  if (context.info.attempt > 1) context.heartbeat(state.details);
}

/**
 * Requests the service has been sent for this activity, over all its attempts so far (1 outside an
 * activity, where nothing counts them). This is what results and failures report as `calls`.
 */
export function requestsSent(): number {
  const context = currentContext();
  if (!context) return 1;
  const state = attempts.get(context);
  if (state?.requests !== undefined) return state.requests;
  const earlier = context.info.heartbeatDetails as { requests?: unknown } | undefined;
  if (typeof earlier?.requests === 'number') return earlier.requests;
  // Nothing heartbeated: any retries died before sending; the first attempt is presumed to have sent.
  return context.info.attempt > 1 ? 1 : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** This attempt's number, 1 for the first (and outside an activity). */
export function attemptNumber(): number {
  return currentContext()?.info.attempt ?? 1;
}

const never = new AbortController().signal;

/** Fires when this attempt is cancelled, timed out by the server, or abandoned as stalled. */
export function cancellationSignal(): AbortSignal {
  const context = currentContext();
  if (!context) return never;
  return attempts.get(context)?.controller.signal ?? context.cancellationSignal;
}

/** Thrown when an attempt made no progress for its kind's stall limit. */
export class StalledError extends Error {
  override readonly name = 'StalledError';
}

/** Thrown when the file system refuses a path for good (see ERROR_CLASSES.LocalPathError). */
export class LocalPathError extends Error {
  override readonly name = 'LocalPathError';
}

const FATAL_FS_CODES = new Set(['ENOTDIR', 'EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EISDIR']);

/**
 * The file-system refusal behind an error, however deeply wrapped: the stores wrap errno errors (a
 * local put under a regular file surfaces as "does not exist", ENOTDIR only in its cause).
 */
function fatalFsError(error: Error): (NodeJS.ErrnoException & { code: string }) | undefined {
  // The deepest match: the errno error itself, with its path, rather than a wrapper repeating its code.
  let found: (NodeJS.ErrnoException & { code: string }) | undefined;
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 8; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (code && FATAL_FS_CODES.has(code)) found = current as NodeJS.ErrnoException & { code: string };
    current = current.cause;
  }
  return found;
}

/** Turns an error into the failure Temporal's retry policy classifies by its `type`, keeping the cause. */
export function toActivityFailure(error: unknown, details?: Record<string, unknown>): unknown {
  if (!(error instanceof Error) || error instanceof ApplicationFailure || error instanceof CancelledFailure)
    return error;
  const fsError = fatalFsError(error);
  if (fsError) {
    const { code, path: where } = fsError;
    return ApplicationFailure.create({
      type: 'LocalPathError',
      message: `${where ?? 'a local path'}: ${code} (${fsError.message.split(':')[0] ?? code})`,
      nonRetryable: true,
      cause: error,
    });
  }
  // The requests the service received for this activity, for the workflow's call count.
  const context = currentContext();
  if (context && attempts.get(context)?.countsRequests) details = { ...details, calls: requestsSent() };
  const type = error.name in ERROR_CLASSES ? error.name : error.name || 'Error';
  const retryAfterMs = (error as { retryAfterMs?: number }).retryAfterMs;
  return ApplicationFailure.create({
    type,
    message: error.message,
    nonRetryable: !isRetryable(type),
    ...(type === 'RateLimitedError' && typeof retryAfterMs === 'number'
      ? { nextRetryDelay: Math.max(retryAfterMs, 100) }
      : {}),
    ...(details ? { details: [details] } : {}),
    cause: error,
  });
}

/** A process-wide limit on memory-heavy attempts (DuckDB work), whose permits an abandoned attempt returns. */
export class MemoryGate {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(permits: number) {
    this.free = Math.max(1, permits);
  }

  async acquire(signal: AbortSignal): Promise<() => void> {
    if (this.free > 0) {
      this.free -= 1;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = this.waiting.indexOf(grant);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal.reason as Error);
      };
      const grant = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    };
  }
}

export interface AttemptOptions {
  /** Hold a permit of this gate while the work runs (DuckDB activities). */
  gate?: MemoryGate;
  /** Overrides the kind's stall limit (tests). */
  stallAfterMs?: number;
  /** Overrides LEND_PERMIT_AFTER_MS (tests). */
  lendPermitAfterMs?: number;
}

/**
 * Wraps an activity function in the discipline for its kind. Outside an activity it just runs `work`.
 * The work's promise is raced against the attempt's signal: when the attempt is cancelled or stalls,
 * the activity returns at once (the slot and gate permit free up) even if an operation ignores the
 * signal; whatever it still holds is abandoned.
 */
export function inAttempt<A extends unknown[], O>(
  kind: ActivityKind,
  work: (...args: A) => Promise<O>,
  options: AttemptOptions = {},
): (...args: A) => Promise<O> {
  const stallAfter = options.stallAfterMs ?? stallLimitMs(kind);
  const lendAfter = options.lendPermitAfterMs ?? LEND_PERMIT_AFTER_MS;
  // The stall check and the permit's lending ride on the heartbeat timer, so short limits tick faster.
  const tickMs = Math.min(
    HEARTBEAT_EVERY_MS,
    stallAfter ? Math.max(10, stallAfter / 2) : HEARTBEAT_EVERY_MS,
    options.gate ? Math.max(10, lendAfter / 2) : HEARTBEAT_EVERY_MS,
  );
  return async (...args: A): Promise<O> => {
    const context = currentContext();
    if (!context) return work(...args);
    const controller = new AbortController();
    const state: AttemptState = {
      controller,
      lastProgress: Date.now(),
      details: undefined,
      countsRequests: CALLING_KINDS.has(kind),
    };
    attempts.set(context, state);
    const onCancel = () => controller.abort(context.cancellationSignal.reason);
    if (context.cancellationSignal.aborted) onCancel();
    else context.cancellationSignal.addEventListener('abort', onCancel, { once: true });
    let waitingForGate = Boolean(options.gate);
    let release: (() => void) | undefined;
    const timer = setInterval(() => {
      context.heartbeat(state.details);
      if (release && Date.now() - state.lastProgress > lendAfter) {
        // Waiting on something other than memory (a store that does not answer): its permit goes back
        // so other runs' heavy work goes on, until the stall limit abandons this attempt.
        release();
        release = undefined;
      }
      if (stallAfter && !waitingForGate && Date.now() - state.lastProgress > stallAfter) {
        controller.abort(
          new StalledError(
            `no progress for ${stallAfter >= 10_000 ? Math.round(stallAfter / 1000) : (stallAfter / 1000).toFixed(1)} s${state.details ? ` (last: ${JSON.stringify(state.details)})` : ''}`,
          ),
        );
      }
    }, tickMs);
    const abandoned = new Promise<never>((_, reject) => {
      const fail = () => reject(controller.signal.reason as Error);
      if (controller.signal.aborted) fail();
      else controller.signal.addEventListener('abort', fail, { once: true });
    });
    abandoned.catch(() => undefined);
    try {
      if (options.gate) {
        release = await Promise.race([options.gate.acquire(controller.signal), abandoned]);
        waitingForGate = false;
        state.lastProgress = Date.now();
      }
      const running = work(...args);
      running.catch(() => undefined);
      return await Promise.race([running, abandoned]);
    } catch (error) {
      if (controller.signal.aborted && context.cancellationSignal.aborted) {
        throw new CancelledFailure(String(context.cancellationSignal.reason ?? 'cancelled'));
      }
      throw toActivityFailure(error);
    } finally {
      clearInterval(timer);
      release?.();
      context.cancellationSignal.removeEventListener('abort', onCancel);
      attempts.delete(context);
    }
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- activities take one typed input object each
type ActivityFunctions = Record<string, (...args: any[]) => Promise<unknown>>;

/**
 * Puts a factory's activities under the discipline: each one's kind must be named (the compiler checks
 * that none is missing), and those in `heavy` share the process's memory gate.
 */
export function disciplined<T extends ActivityFunctions>(
  activities: T,
  kinds: { [K in keyof T]: ActivityKind },
  heavy: (keyof T)[] = [],
  gate?: MemoryGate,
): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    const useGate = gate && heavy.includes(name) ? { gate } : {};
    wrapped[name] = inAttempt(kinds[name as keyof T], fn, useGate);
  }
  return wrapped as T;
}
