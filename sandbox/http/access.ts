// Who may call the sandbox and how often: named API keys (the `api_key` header), and a sliding-window
// rate limit per key shared by all endpoints, reported in `X-RateLimit-*` headers on every response.
import { timingSafeEqual } from 'node:crypto';

/** The key a local sandbox accepts when none is configured; named in the README for local use. */
export const DEV_API_KEY = 'dev-key-enrichflow';
export const DEV_API_KEY_NAME = 'dev';

export interface ApiKey {
  /** Stable name of the key's owner; scopes enrollments and webhooks, keys the rate limit, appears in logs. */
  name: string;
  key: string;
}

/** Thrown when an `--api-key` value cannot be read. */
export class ApiKeySpecError extends Error {
  override readonly name = 'ApiKeySpecError';
  readonly code = 'API_KEY_SPEC';
}

/**
 * `name:key` or just `key` (named `key-1`, `key-2`, … by position). Keys may not contain whitespace.
 */
export function parseApiKeySpec(spec: string, position: number): ApiKey {
  const text = spec.trim();
  const colon = text.indexOf(':');
  const name = colon > 0 ? text.slice(0, colon) : `key-${position + 1}`;
  const key = colon > 0 ? text.slice(colon + 1) : text;
  if (key.length === 0 || /\s/.test(key))
    throw new ApiKeySpecError(`api key #${position + 1} is empty or contains whitespace`);
  return { name, key };
}

export class ApiKeyRing {
  private readonly keys: { name: string; key: Buffer }[];

  constructor(keys: readonly ApiKey[]) {
    this.keys = keys.map((k) => ({ name: k.name, key: Buffer.from(k.key) }));
  }

  /** The name of the key, or undefined when it is unknown. Compares in constant time per key. */
  identify(given: string | undefined): string | undefined {
    if (!given) return undefined;
    const candidate = Buffer.from(given);
    for (const entry of this.keys) {
      if (entry.key.length === candidate.length && timingSafeEqual(entry.key, candidate)) return entry.name;
    }
    return undefined;
  }
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds at which the window frees a request. */
  resetSeconds: number;
  /** Seconds to wait before retrying (allowed = false). */
  retryAfterSeconds: number;
}

const WINDOW_MS = 60_000;

/** Sliding 60-second window: a request is allowed while fewer than `limit` were allowed in the last 60 s. */
export class SlidingWindowLimiter {
  private readonly windows = new Map<string, number[]>();

  constructor(
    readonly limit: number,
    private readonly clock: () => number = Date.now,
  ) {}

  take(bucket: string): RateDecision {
    const now = this.clock();
    let times = this.windows.get(bucket);
    if (!times) {
      times = [];
      this.windows.set(bucket, times);
    }
    let expired = 0;
    while (expired < times.length && (times[expired] as number) <= now - WINDOW_MS) expired += 1;
    if (expired > 0) times.splice(0, expired);
    const allowed = times.length < this.limit;
    if (allowed) times.push(now);
    const oldest = times[0] ?? now;
    const freesAt = oldest + WINDOW_MS;
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - times.length),
      resetSeconds: Math.ceil(freesAt / 1000),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((freesAt - now) / 1000)),
    };
  }

  /** Forgets every window (admin reset, tests). */
  reset(): void {
    this.windows.clear();
  }
}
