// How a call to the Data Service is paced and bounded: its deadline follows the latency this process
// has seen for the operation (a hung call costs a few seconds, not the client's 30 s), its signal is
// the attempt's (a cancelled run stops its calls), and a nearly spent rate window slows the next call.
import { setTimeout as delay } from 'node:timers/promises';
import { cancellationSignal } from './attempt.js';
import type { CallOptions, RateLimitInfo } from './client-port.js';

/** Successful latencies kept per operation. */
const WINDOW = 256;
/** Samples needed before the deadline follows them; until then it is the ceiling. */
const MIN_SAMPLES = 20;

/**
 * Per-operation call deadlines: 4 x the p99 of recent successful calls, at least `floorMs` (a slow but
 * live call must not be cut) and at most `ceilingMs` (the client's own timeouts).
 */
export class CallDeadlines {
  private readonly samples = new Map<string, number[]>();

  constructor(
    private readonly floorMs = 3_000,
    private readonly ceilingMs = 30_000,
  ) {}

  record(operation: string, ms: number): void {
    let list = this.samples.get(operation);
    if (!list) this.samples.set(operation, (list = []));
    list.push(ms);
    if (list.length > WINDOW) list.shift();
  }

  timeoutFor(operation: string): number {
    const list = this.samples.get(operation);
    if (!list || list.length < MIN_SAMPLES) return this.ceilingMs;
    const sorted = [...list].sort((a, b) => a - b);
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? this.ceilingMs;
    return Math.round(Math.min(this.ceilingMs, Math.max(this.floorMs, p99 * 4)));
  }
}

/** The worker process's deadlines (every attempt on it learns from the others). */
export const callDeadlines = new CallDeadlines();

/** Runs one call with the attempt's signal and the operation's deadline, and learns from its latency. */
export async function pacedCall<T>(
  operation: string,
  call: (options: CallOptions) => Promise<T>,
  deadlines: CallDeadlines = callDeadlines,
): Promise<T> {
  const started = performance.now();
  const result = await call({ signal: cancellationSignal(), timeoutMs: deadlines.timeoutFor(operation) });
  deadlines.record(operation, performance.now() - started);
  return result;
}

/** Waits a little when the service says the key's window is nearly used up, instead of running into 429s. */
export async function easeOff(rateLimit: RateLimitInfo | undefined): Promise<void> {
  if (!rateLimit) return;
  const { limit, remaining, resetAt } = rateLimit;
  if (limit === undefined || remaining === undefined || resetAt === undefined) return;
  if (remaining > Math.max(2, limit * 0.05)) return;
  const untilReset = resetAt * 1000 - Date.now();
  if (untilReset <= 0) return;
  await delay(Math.min(5_000, untilReset / Math.max(1, remaining)), undefined, {
    signal: cancellationSignal(),
  });
}
