// Errors of the Data Service client. Each has a stable `name` (what Temporal's
// `nonRetryableErrorTypes` matches) and `code`; none carries the API key or request headers.
import type { ValidationDetailItem } from '../contract/index.js';

export interface DataServiceErrorContext {
  /** Operation of the route table, e.g. `matchBusinesses` or `bulkEnrichFirmographics`. */
  operationId: string;
  status?: number | undefined;
  correlationId?: string | undefined;
  cause?: unknown;
}

/** Thrown when a Data Service call fails; the base of every client error. */
export class DataServiceError extends Error {
  override name: string = 'DataServiceError';
  readonly code: string = 'DATA_SERVICE_ERROR';
  readonly operationId: string;
  readonly status: number | undefined;
  readonly correlationId: string | undefined;
  /** Whether a later attempt of the same call can succeed (see `retryableErrorTypes`). */
  readonly retryable: boolean = false;

  constructor(message: string, context: DataServiceErrorContext) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.operationId = context.operationId;
    this.status = context.status;
    this.correlationId = context.correlationId;
  }
}

/** Thrown when the contract or the service (HTTP 422) rejects the request; `detail` says which field and why. */
export class ValidationError extends DataServiceError {
  override name = 'ValidationError' as const;
  override readonly code = 'VALIDATION_FAILED';
  /** FastAPI detail items: `loc`, `msg`, `type`, `ctx`. */
  readonly detail: ValidationDetailItem[];
  /** False when the client refused to send it (fail fast); true when the service answered 422. */
  readonly sent: boolean;

  constructor(detail: ValidationDetailItem[], sent: boolean, context: DataServiceErrorContext) {
    const first = detail[0];
    const where = first ? `${first.loc.join('.')}: ${first.msg}` : 'invalid request';
    const more = detail.length > 1 ? ` (+${detail.length - 1} more)` : '';
    super(
      `${context.operationId}: ${sent ? 'rejected by the service' : 'not sent'}: ${where}${more}`,
      context,
    );
    this.detail = detail;
    this.sent = sent;
  }
}

/** Thrown when the service refuses the API key: missing or unknown (401), or forbidden (403). */
export class AuthError extends DataServiceError {
  override name = 'AuthError' as const;
  override readonly code = 'UNAUTHORIZED';
}

/** Thrown when the key's credits are exhausted (HTTP 403 with the credits body). */
export class InsufficientCreditsError extends DataServiceError {
  override name = 'InsufficientCreditsError' as const;
  override readonly code = 'INSUFFICIENT_CREDITS';
}

/** Thrown when the enrollment or webhook does not exist for this key and tenant (HTTP 404). */
export class NotFoundError extends DataServiceError {
  override name = 'NotFoundError' as const;
  override readonly code = 'NOT_FOUND';
}

/** Thrown when the service answers another 4xx the contract does not declare (e.g. 400, 405, 413). */
export class RequestRejectedError extends DataServiceError {
  override name = 'RequestRejectedError' as const;
  override readonly code = 'REQUEST_REJECTED';
}

/** Thrown when the key is over its rate limit (HTTP 429); wait `retryAfterMs` before the next call. */
export class RateLimitedError extends DataServiceError {
  override name = 'RateLimitedError' as const;
  override readonly code = 'RATE_LIMITED';
  override readonly retryable = true;
  /** From `Retry-After` (seconds or HTTP date), else the body's `retry_after`, else `X-RateLimit-Reset`. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, retryAfterMs: number | undefined, context: DataServiceErrorContext) {
    super(message, context);
    this.retryAfterMs = retryAfterMs;
  }
}

/** Thrown when the service answers 5xx. */
export class ServerError extends DataServiceError {
  override name = 'ServerError' as const;
  override readonly code = 'SERVER_ERROR';
  override readonly retryable = true;
}

/** Which wait ran out: connecting, the response headers, the gap between body chunks, or an abort signal. */
export type TimeoutPhase = 'connect' | 'headers' | 'body' | 'aborted';

/** Thrown when a connect, headers or body timeout expires, or the call's signal aborts it. */
export class RequestTimeoutError extends DataServiceError {
  override name = 'RequestTimeoutError' as const;
  override readonly code = 'REQUEST_TIMEOUT';
  override readonly retryable = true;
  readonly phase: TimeoutPhase;

  constructor(message: string, phase: TimeoutPhase, context: DataServiceErrorContext) {
    super(message, context);
    this.phase = phase;
  }
}

/** Thrown when the service cannot be reached or drops the connection before the response headers. */
export class ConnectionError extends DataServiceError {
  override name = 'ConnectionError' as const;
  override readonly code = 'CONNECTION_FAILED';
  override readonly retryable = true;
}

/** What was wrong with a response body. */
export type MalformedReason = 'truncated' | 'invalid-json' | 'schema' | 'too-large' | 'protocol';

/** Thrown when a response is cut short, not JSON, too large, or not the contract's shape. */
export class MalformedResponseError extends DataServiceError {
  override name = 'MalformedResponseError' as const;
  override readonly code = 'MALFORMED_RESPONSE';
  override readonly retryable = true;
  readonly reason: MalformedReason;

  constructor(message: string, reason: MalformedReason, context: DataServiceErrorContext) {
    super(message, context);
    this.reason = reason;
  }
}

/** Error names worth another attempt: transient on the service's or the network's side. */
export const retryableErrorTypes = [
  'RateLimitedError',
  'ServerError',
  'RequestTimeoutError',
  'ConnectionError',
  'MalformedResponseError',
] as const;

/**
 * Error names a retry cannot fix, for Temporal's `RetryPolicy.nonRetryableErrorTypes`: the request or
 * the key is wrong, or the resource is gone.
 */
export const nonRetryableErrorTypes = [
  'ValidationError',
  'AuthError',
  'InsufficientCreditsError',
  'NotFoundError',
  'RequestRejectedError',
  'DataServiceError',
] as const;

export type DataServiceErrorName =
  (typeof retryableErrorTypes)[number] | (typeof nonRetryableErrorTypes)[number];
