// How a call to the Data Service is paced and bounded: its deadline follows the latency this process
// has seen for the operation (a hung call costs about a second, not the client's 30 s), its signal is
// the attempt's (a cancelled run stops its calls), and a nearly spent rate window slows the next call.
import { setTimeout as delay } from 'node:timers/promises';
import { cancellationSignal, countRequest } from './attempt.js';
import type { CallOptions, RateLimitInfo } from './client-port.js';

/** Successful latencies kept per operation. */
const WINDOW = 256;
/** Samples needed before the deadline follows them. */
const MIN_SAMPLES = 20;
/** Every operation's samples together: the estimate for an operation not yet seen 20 times. */
const ANY = '*';

/**
 * Per-operation call deadlines: 4 x the p99 of recent successful calls, at least `floorMs` (a slow but
 * live call must not be cut) and at most `ceilingMs` (the client's own timeouts). An operation with
 * too few samples borrows every operation's; a worker with none yet uses `coldMs`.
 */
export class CallDeadlines {
  private readonly samples = new Map<string, number[]>();

  constructor(
    private readonly floorMs = 1_000,
    private readonly ceilingMs = 30_000,
    private readonly coldMs = 10_000,
  ) {}

  record(operation: string, ms: number): void {
    for (const key of [operation, ANY]) {
      let list = this.samples.get(key);
      if (!list) this.samples.set(key, (list = []));
      list.push(ms);
      if (list.length > WINDOW) list.shift();
    }
  }

  timeoutFor(operation: string): number {
    const own = this.samples.get(operation);
    const list = own && own.length >= MIN_SAMPLES ? own : this.samples.get(ANY);
    if (!list || list.length < MIN_SAMPLES) return Math.min(this.coldMs, this.ceilingMs);
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
  countRequest();
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
