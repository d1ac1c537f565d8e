// What the client reads off the wire: the rate-limit and retry headers, and how a failure to send a
// request or read its response becomes one of the named errors of ./errors.ts.
import type { IncomingHttpHeaders } from 'undici/types/header.js';
import {
  RATE_LIMIT_LIMIT_HEADER,
  RATE_LIMIT_REMAINING_HEADER,
  RATE_LIMIT_RESET_HEADER,
  RETRY_AFTER_HEADER,
} from '../contract/index.js';
import type { DataServiceError } from './errors.js';
import {
  ConnectionError,
  MalformedResponseError,
  RequestTimeoutError,
  type DataServiceErrorContext,
} from './errors.js';

/** The `X-RateLimit-*` headers of a response. */
export interface RateLimitInfo {
  /** Requests allowed per window. */
  limit: number;
  /** Requests left in the window. */
  remaining: number;
  /** Unix seconds at which the window frees a request. */
  resetAt: number;
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Parses `X-RateLimit-Limit/Remaining/Reset`; undefined unless all three are integers. */
export function parseRateLimit(headers: IncomingHttpHeaders): RateLimitInfo | undefined {
  const [limit, remaining, resetAt] = [
    RATE_LIMIT_LIMIT_HEADER,
    RATE_LIMIT_REMAINING_HEADER,
    RATE_LIMIT_RESET_HEADER,
  ].map((name) => Number(headerValue(headers, name) ?? Number.NaN));
  if (![limit, remaining, resetAt].every((n) => Number.isInteger(n))) return undefined;
  return { limit: limit as number, remaining: remaining as number, resetAt: resetAt as number };
}

/** Milliseconds to wait after a 429: `Retry-After` (seconds or HTTP date), else the body, else the reset time. */
export function retryAfterMs(
  headers: IncomingHttpHeaders,
  body: unknown,
  now = Date.now(),
): number | undefined {
  const header = headerValue(headers, RETRY_AFTER_HEADER)?.trim();
  if (header) {
    if (/^\d+(\.\d+)?$/.test(header)) return Math.round(Number(header) * 1000);
    const date = Date.parse(header);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const fromBody = (body as { retry_after?: unknown } | undefined)?.retry_after;
  if (typeof fromBody === 'number' && fromBody >= 0) return Math.round(fromBody * 1000);
  const reset = parseRateLimit(headers)?.resetAt;
  return reset === undefined ? undefined : Math.max(0, reset * 1000 - now);
}

export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isAbort(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError' || errorCode(error) === 'UND_ERR_ABORTED';
}

/** A stalled body or an aborted request (cancellation or deadline), in either phase of a call. */
function stalledOrAborted(
  error: unknown,
  code: string | undefined,
  label: string,
  ctx: DataServiceErrorContext & { cause: unknown },
): DataServiceError | undefined {
  if (code === 'UND_ERR_BODY_TIMEOUT')
    return new RequestTimeoutError(`${label}: response body stalled`, 'body', ctx);
  if (isAbort(error)) return new RequestTimeoutError(`${label}: aborted`, 'aborted', ctx);
  return undefined;
}

/** Classifies a failure of sending the request or waiting for its headers. */
export function requestFailure(
  error: unknown,
  label: string,
  context: DataServiceErrorContext,
): DataServiceError {
  const code = errorCode(error);
  const ctx = { ...context, cause: error };
  if (code === 'UND_ERR_CONNECT_TIMEOUT')
    return new RequestTimeoutError(`${label}: connect timeout`, 'connect', ctx);
  if (code === 'UND_ERR_HEADERS_TIMEOUT')
    return new RequestTimeoutError(`${label}: no response headers in time`, 'headers', ctx);
  const timedOut = stalledOrAborted(error, code, label, ctx);
  if (timedOut) return timedOut;
  if (code?.startsWith('HPE_'))
    return new MalformedResponseError(`${label}: invalid HTTP response`, 'protocol', ctx);
  const message = error instanceof Error ? error.message : String(error);
  return new ConnectionError(`${label}: connection failed (${code ?? message})`, ctx);
}

/** Classifies a failure while reading a response body whose headers arrived. */
export function bodyFailure(
  error: unknown,
  label: string,
  context: DataServiceErrorContext,
): DataServiceError {
  const code = errorCode(error);
  const ctx = { ...context, cause: error };
  const timedOut = stalledOrAborted(error, code, label, ctx);
  if (timedOut) return timedOut;
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE')
    return new MalformedResponseError(`${label}: response too large`, 'too-large', ctx);
  return new MalformedResponseError(
    `${label}: response body cut short (${code ?? 'read error'})`,
    'truncated',
    ctx,
  );
}

/** Text of a path or query value (the contract allows only scalars there). */
export function scalarText(value: unknown): string {
  return typeof value === 'object' && value !== null
    ? JSON.stringify(value)
    : `${value as string | number | boolean | undefined}`;
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
