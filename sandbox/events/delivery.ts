// The outbox worker: sends pending webhook deliveries from the database, signed, with capped
// exponential backoff and jitter, and records each outcome there, so a delivery survives receiver
// outages and restarts and is never sent again once a receiver has answered 2xx.
import { Agent, request } from 'undici';
import type { Logger } from '../../lib/logger.js';
import { signDelivery } from './signing.js';
import type { DeliveryJob, DeliveryOutcome, EventsStore } from './store.js';

export interface DeliveryOptions {
  /** Delay before the first retry, in ms; doubles per failed attempt. Default 1,000. */
  baseDelayMs?: number;
  /** Longest delay between attempts, in ms. Default 300,000 (5 min). */
  maxDelayMs?: number;
  /** Share of each delay taken off at random (0 = none, 1 = "full jitter"). Default 0.5. */
  jitter?: number;
  /** Attempts before a delivery is abandoned. Default 25 (about 1.5 h of retries with the defaults). */
  maxAttempts?: number;
  /** Whole-attempt deadline (connect, headers, body), in ms. Default 10,000. */
  timeoutMs?: number;
  /** Longest time the worker sleeps before looking for due deliveries again, in ms. Default 1,000. */
  pollIntervalMs?: number;
  /** Deliveries in flight at once. Default 8. */
  concurrency?: number;
}

export const DEFAULT_DELIVERY_OPTIONS: Required<DeliveryOptions> = {
  baseDelayMs: 1_000,
  maxDelayMs: 300_000,
  jitter: 0.5,
  maxAttempts: 25,
  timeoutMs: 10_000,
  pollIntervalMs: 1_000,
  concurrency: 8,
};

/** The wait after `attempts` failed attempts: base·2^(attempts-1), capped, minus up to `jitter` of it. */
export function retryDelayMs(
  attempts: number,
  options: Required<DeliveryOptions>,
  random: () => number,
): number {
  const exponential = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(exponential * (1 - options.jitter * random()));
}

export interface DeliveryWorkerDeps {
  store: EventsStore;
  logger: Logger;
  /** Epoch milliseconds. */
  now: () => number;
  options?: DeliveryOptions;
  random?: () => number;
}

export class DeliveryWorker {
  private readonly options: Required<DeliveryOptions>;
  private readonly agent: Agent;
  /** Claimed rows, from the attempt until its outcome is written. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly sending = new Set<string>();
  private readonly ready: DeliveryJob[] = [];
  private loopDone: Promise<void> | undefined;
  private stopping = false;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private unrecorded: { outcome: DeliveryOutcome; resolve: () => void; reject: (error: unknown) => void }[] =
    [];
  private flushing: Promise<void> | undefined;

  constructor(private readonly deps: DeliveryWorkerDeps) {
    this.options = { ...DEFAULT_DELIVERY_OPTIONS, ...stripUndefined(deps.options ?? {}) };
    this.agent = new Agent({
      connect: { timeout: this.options.timeoutMs },
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
      keepAliveTimeout: 4_000,
    });
  }

  start(): void {
    this.loopDone ??= this.loop();
  }

  /** Looks for due deliveries now instead of at the next poll (called after events are queued). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops taking deliveries, lets those in flight finish (each bounded by `timeoutMs`) and records
   * their outcomes, so an acknowledged delivery is marked delivered before the database closes. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.loopDone;
    await Promise.allSettled([...this.inFlight.values()]);
    await this.agent.close();
  }

  private async loop(): Promise<void> {
    const { store, logger, now } = this.deps;
    // Due rows are read in batches of several times the concurrency and sent from memory as slots
    // free up, so the outbox is not queried once per delivery.
    const batchLimit = this.options.concurrency * 4;
    while (!this.stopping) {
      this.woken = false;
      let waitMs = this.options.pollIntervalMs;
      try {
        if (this.ready.length === 0 && this.active < this.options.concurrency) {
          const claimed = this.claimedIds();
          const jobs = await store.dueDeliveries(now(), batchLimit - this.active, claimed);
          this.ready.push(...jobs);
        }
        while (this.ready.length > 0 && this.active < this.options.concurrency && !this.stopping) {
          this.launch(this.ready.shift() as DeliveryJob);
        }
        if (this.ready.length === 0 && this.active < this.options.concurrency) {
          const due = await store.nextDueAt(this.claimedIds());
          if (due !== undefined) waitMs = Math.max(0, Math.min(waitMs, due - now()));
        }
      } catch (error) {
        if (this.stopping) break;
        logger.error({ err: error }, 'event delivery: reading the outbox failed');
      }
      if (waitMs > 0 || !this.woken) await this.pause(waitMs);
    }
    // Rows read but not sent stay pending in the database for the next start.
    this.ready.length = 0;
  }

  /** HTTP attempts under way (the concurrency limit counts these). */
  private get active(): number {
    return this.sending.size;
  }

  /** Rows in flight or waiting in memory: a query for due rows must not return them again. */
  private claimedIds(): Set<string> {
    return new Set([...this.inFlight.keys(), ...this.ready.map((job) => job.delivery_id)]);
  }

  private pause(ms: number): Promise<void> {
    if (this.woken || this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }

  private launch(job: DeliveryJob): void {
    const id = job.delivery_id;
    this.sending.add(id);
    const work = this.attempt(job)
      .then((outcome) => {
        // The slot frees as soon as the receiver has answered; the row stays claimed until its
        // outcome is written, so it cannot be picked again meanwhile.
        this.sending.delete(id);
        this.wake();
        return this.record(outcome);
      })
      .catch((error: unknown) => {
        // The row stays pending and is sent again later: at-least-once, never silently lost.
        this.deps.logger.error({ err: error, delivery_id: id }, 'event delivery: recording failed');
      })
      .finally(() => {
        this.sending.delete(id);
        this.inFlight.delete(id);
        this.wake();
      });
    this.inFlight.set(id, work);
  }

  /** Group commit: outcomes that arrive while a write is running go out together in the next one. */
  private record(outcome: DeliveryOutcome): Promise<void> {
    return new Promise((resolve, reject) => {
      this.unrecorded.push({ outcome, resolve, reject });
      this.flushing ??= this.flush().finally(() => {
        this.flushing = undefined;
      });
    });
  }

  private async flush(): Promise<void> {
    while (this.unrecorded.length > 0) {
      const batch = this.unrecorded.splice(0);
      try {
        await this.deps.store.recordOutcomes(batch.map((entry) => entry.outcome));
        for (const entry of batch) entry.resolve();
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
  }

  private async attempt(job: DeliveryJob): Promise<DeliveryOutcome> {
    const { logger, now } = this.deps;
    const log = logger.child({
      delivery_id: job.delivery_id,
      event_id: job.event_id,
      attempt: job.attempts + 1,
    });
    if (job.webhook_url === null || job.webhook_secret === null) {
      log.warn('event delivery abandoned: the webhook is no longer registered');
      return {
        delivery_id: job.delivery_id,
        kind: 'abandoned',
        status: null,
        error: 'webhook not registered',
      };
    }
    const timestamp = Math.floor(now() / 1000);
    let status: number | null = null;
    let error: string;
    try {
      const response = await request(job.webhook_url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: {
          'content-type': 'application/json',
          'x-timestamp': String(timestamp),
          'x-signature': signDelivery(job.webhook_secret, timestamp, job.body),
          'user-agent': 'enrichflow-sandbox-events',
        },
        body: job.body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      status = response.statusCode;
      await response.body.dump();
      if (status >= 200 && status < 300) {
        log.debug({ status }, 'event delivered');
        return { delivery_id: job.delivery_id, kind: 'delivered', status, atMs: now() };
      }
      error = `receiver answered ${status}`;
    } catch (cause) {
      error = describeError(cause);
    }
    const attempts = job.attempts + 1;
    if (attempts >= this.options.maxAttempts) {
      log.warn({ status, error }, 'event delivery abandoned after the last attempt');
      return { delivery_id: job.delivery_id, kind: 'abandoned', status, error };
    }
    const delay = retryDelayMs(attempts, this.options, this.deps.random ?? Math.random);
    log.info({ status, error, retry_in_ms: delay }, 'event delivery failed; will retry');
    return { delivery_id: job.delivery_id, kind: 'retry', status, error, nextAttemptMs: now() + delay };
  }
}

function describeError(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${cause.message}` : `${cause.name}: ${cause.message}`;
  }
  return String(cause);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
