// Hands verified deliveries durably to Temporal before the receiver answers 200: deliveries of the same
// window are grouped (group commit: whatever arrives while the window's hand-offs are under way goes in
// the next batch), and each batch is signalled to the intake slot workflow of its window and of the
// current few seconds (started if needed; see workflows/events-intake.ts).
// A batch up to `inlineMaxBytes` (default 128 KiB) rides in the signal itself as JSON-lines bytes: once
// Temporal has accepted the signal the rows are in the slot's history, and the slot writes them to the
// window's inbox — one round trip, no object-store put on the receiver. A larger batch is written as an
// inbox object first (side by side with a signal carrying its key). A delivery is acknowledged only
// after its hand-off has succeeded; a failure answers 503 and the sender retries.
import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../lib/logger.js';
import { silentLogger } from '../lib/logger.js';
import { joinKey, type ObjectStore } from '../storage/object-store.js';
import {
  DEFAULT_SLOT_MS,
  EVENT_SLOT_WORKFLOW,
  EVENTS_ARRIVED_SIGNAL,
  HANDOFF_DEADLINE_MS,
  INLINE_BATCH_MAX_BYTES,
  type EventsArrived,
  type EventSlotInput,
  type SinkWindowSettings,
} from '../pipeline/events-types.js';
import {
  eventSlotWorkflowId,
  SINK_ROOT,
  sinkLayout,
  tenantLabel,
  windowStartOf,
  type SinkEventRecord,
} from '../pipeline/sink-layout.js';

/** Thrown (and answered 503) when a batch could not be stored or signalled in time. */
export class HandoffError extends Error {
  override readonly name = 'HandoffError';
  readonly code = 'HANDOFF_FAILED';
}

export interface EventHandoffOptions {
  client: Client;
  /** Task queue of the window workflows (the main queue). */
  taskQueue: string;
  /** Output location as given to the workflows (absolute for local folders). */
  output: string;
  /** The store behind `output`, and the key prefix of `output` inside it. */
  store: ObjectStore;
  prefix: string;
  settings: SinkWindowSettings;
  /** Deliveries per inbox object at most. Default 1,000. */
  maxBatch?: number;
  /** Batches of one window being handed off at once. Default 1: fewer, larger signals (see bench/results/receiver.md). */
  maxInFlight?: number;
  /** Batches up to this many bytes ride in their signal (at most 128 KiB); larger ones are stored first. Default 128 KiB; 0 = all stored first. */
  inlineMaxBytes?: number;
  /** Length of an intake slot (whole seconds, at least 1 s). Default 5 s. */
  slotMs?: number;
  /** Event ids remembered as handed off, answered at once when delivered again. Default 100,000. */
  seenCapacity?: number;
  logger?: Logger;
  now?: () => number;
}

export type HandoffOutcome = 'accepted' | 'duplicate';

interface Waiter {
  record: SinkEventRecord;
  queuedAt: number;
  resolve: (outcome: HandoffOutcome) => void;
  reject: (error: unknown) => void;
}

interface WindowGroup {
  tenant: string | null;
  windowStart: number;
  queue: Waiter[];
  inFlight: number;
  scheduled: boolean;
}

export interface HandoffStats {
  accepted: number;
  duplicates: number;
  batches: number;
  /** Batches that rode in their signal (the rest were stored first). */
  carriedBatches: number;
  failedBatches: number;
  /** Deliveries waiting or being handed off now. */
  pending: number;
  /** Deliveries per batch, on average. */
  meanBatch: number;
  /** Milliseconds of the last (up to 10,000) hand-offs: object put (stored-first batches), signal. */
  putMs: { p50: number; p99: number; max: number };
  signalMs: { p50: number; p99: number; max: number };
  /** Whole hand-offs (both), and how long deliveries waited for theirs to start. */
  handoffMs: { p50: number; p99: number; max: number };
  queuedMs: { p50: number; p99: number; max: number };
}

/** The last `size` samples, for percentiles in the receiver's health output and the benchmark. */
export class Samples {
  private readonly values: number[] = [];
  private next = 0;
  constructor(private readonly size = 10_000) {}
  add(value: number): void {
    if (this.values.length < this.size) this.values.push(value);
    else this.values[this.next] = value;
    this.next = (this.next + 1) % this.size;
  }
  percentiles(): { p50: number; p99: number; max: number } {
    const sorted = [...this.values].sort((a, b) => a - b);
    const at = (q: number) =>
      Math.round((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0) * 10) / 10;
    return { p50: at(0.5), p99: at(0.99), max: at(1) };
  }
}

export class EventHandoff {
  private readonly groups = new Map<string, WindowGroup>();
  /** Deliveries queued or in flight, by tenant and event id: a repeat joins the first. */
  private readonly pending = new Map<string, Promise<HandoffOutcome>>();
  /** Handed-off event ids, oldest first (a Map keeps insertion order). */
  private readonly seen = new Map<string, true>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly inlineMaxBytes: number;
  private readonly slotMs: number;
  private readonly seenCapacity: number;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly counters = {
    accepted: 0,
    duplicates: 0,
    batches: 0,
    carriedBatches: 0,
    failedBatches: 0,
  };
  private readonly putTimes = new Samples();
  private readonly signalTimes = new Samples();
  private readonly handoffTimes = new Samples();
  private readonly queueTimes = new Samples();

  constructor(private readonly options: EventHandoffOptions) {
    this.maxBatch = options.maxBatch ?? 1_000;
    this.maxInFlight = options.maxInFlight ?? 1;
    this.inlineMaxBytes = Math.min(options.inlineMaxBytes ?? INLINE_BATCH_MAX_BYTES, INLINE_BATCH_MAX_BYTES);
    this.slotMs = Math.max(1, Math.round((options.slotMs ?? DEFAULT_SLOT_MS) / 1_000)) * 1_000;
    this.seenCapacity = options.seenCapacity ?? 100_000;
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
  }

  /** Resolves once the delivery is durably with Temporal (or known to be already); rejects with `HandoffError`. */
  accept(record: SinkEventRecord): Promise<HandoffOutcome> {
    const eventKey = `${tenantLabel(record.tenant_id)}|${record.event_id}`;
    if (this.seen.has(eventKey)) {
      this.counters.duplicates += 1;
      return Promise.resolve('duplicate');
    }
    const joined = this.pending.get(eventKey);
    if (joined) {
      this.counters.duplicates += 1;
      return joined.then(() => 'duplicate');
    }
    const eventMs = Date.parse(record.event_time);
    const windowStart = windowStartOf(
      Number.isNaN(eventMs) ? Date.parse(record.received_at) : eventMs,
      this.options.settings.windowMs,
    );
    const groupKey = `${tenantLabel(record.tenant_id)}|${windowStart}`;
    let group = this.groups.get(groupKey);
    if (!group) {
      group = { tenant: record.tenant_id, windowStart, queue: [], inFlight: 0, scheduled: false };
      this.groups.set(groupKey, group);
    }
    const promise = new Promise<HandoffOutcome>((resolve, reject) => {
      group.queue.push({ record, queuedAt: performance.now(), resolve, reject });
    });
    this.pending.set(eventKey, promise);
    const forget = () => this.pending.delete(eventKey);
    promise.then(forget, forget);
    this.pump(groupKey, group);
    return promise;
  }

  stats(): HandoffStats {
    return {
      ...this.counters,
      pending: this.pending.size,
      meanBatch: this.counters.batches
        ? Math.round((this.counters.accepted / this.counters.batches) * 10) / 10
        : 0,
      putMs: this.putTimes.percentiles(),
      signalMs: this.signalTimes.percentiles(),
      handoffMs: this.handoffTimes.percentiles(),
      queuedMs: this.queueTimes.percentiles(),
    };
  }

  /** Waits until every delivery accepted so far is handed off (or failed). */
  async drain(): Promise<void> {
    while (this.pending.size > 0 || this.inFlight.size > 0) {
      await Promise.allSettled([...this.inFlight, ...this.pending.values()]);
    }
  }

  /** Starts a batch when the window has a free slot; deliveries of the same tick go together. */
  private pump(groupKey: string, group: WindowGroup): void {
    if (group.scheduled || group.inFlight >= this.maxInFlight || group.queue.length === 0) return;
    group.scheduled = true;
    setImmediate(() => {
      group.scheduled = false;
      if (group.inFlight >= this.maxInFlight || group.queue.length === 0) return;
      const batch = group.queue.splice(0, this.maxBatch);
      group.inFlight += 1;
      const work = this.handOff(group, batch).finally(() => {
        group.inFlight -= 1;
        this.inFlight.delete(work);
        if (group.queue.length === 0 && group.inFlight === 0) this.groups.delete(groupKey);
        else this.pump(groupKey, group);
      });
      this.inFlight.add(work);
      this.pump(groupKey, group);
    });
  }

  private async handOff(group: WindowGroup, batch: Waiter[]): Promise<void> {
    const { options } = this;
    const receivedAt = this.now();
    const batchId = `${String(receivedAt).padStart(14, '0')}-${randomUUID()}`;
    const body = Buffer.from(batch.map((waiter) => JSON.stringify(waiter.record)).join('\n') + '\n');
    const carried = body.length <= this.inlineMaxBytes;
    const relative = carried ? undefined : sinkLayout.inboxBatch(group.tenant, group.windowStart, batchId);
    const deadline = receivedAt + HANDOFF_DEADLINE_MS;
    const input: EventSlotInput = {
      output: options.output,
      tenant: group.tenant,
      windowStart: group.windowStart,
      settings: options.settings,
      slotStart: Math.floor(receivedAt / this.slotMs) * this.slotMs,
      slotMs: this.slotMs,
    };
    const arrived: EventsArrived = {
      ...(relative === undefined ? {} : { key: relative }),
      events: batch.length,
      receivedAt,
    };
    const started = performance.now();
    for (const waiter of batch) this.queueTimes.add(started - waiter.queuedAt);
    // A stored-first batch: the object put and the signal run side by side, both bounded by the
    // hand-off deadline; the slot lands such a batch only once its signal is older than that
    // deadline (see events-intake.ts), so by then an acknowledged batch is in the store. Both must succeed
    // before anyone gets a 200. A carried batch is durable as soon as its signal is accepted.
    const put =
      relative === undefined
        ? Promise.resolve()
        : options.store
            .put(joinKey(options.prefix, SINK_ROOT, relative), body, {
              contentType: 'application/x-ndjson',
              signal: AbortSignal.timeout(HANDOFF_DEADLINE_MS),
            })
            .then(() => this.putTimes.add(performance.now() - started));
    const signal = options.client.connection
      .withDeadline(deadline, () =>
        options.client.workflow.signalWithStart(EVENT_SLOT_WORKFLOW, {
          workflowId: eventSlotWorkflowId(
            options.output,
            options.settings.windowMs,
            group.tenant,
            group.windowStart,
            input.slotStart,
          ),
          taskQueue: options.taskQueue,
          args: [input],
          signal: EVENTS_ARRIVED_SIGNAL,
          // The rows as bytes (a binary payload: not encoded again as JSON), only when carried.
          signalArgs: (carried ? [arrived, body] : [arrived]) as [EventsArrived, Uint8Array?],
          // A slot whose workflow has finished starts again for a straggling hand-off.
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        }),
      )
      .then(() => this.signalTimes.add(performance.now() - started));
    // Both settle before deciding, so neither can fail later unobserved.
    const [stored, signalled] = await Promise.allSettled([put, signal]);
    this.handoffTimes.add(performance.now() - started);
    const failed = [stored, signalled].find((outcome) => outcome.status === 'rejected');
    if (failed) {
      const error: unknown = failed.reason;
      this.counters.failedBatches += 1;
      this.logger.warn(
        { err: error, window: group.windowStart, deliveries: batch.length },
        'event hand-off failed; deliveries answered 503 and will be retried by the sender',
      );
      const failure = new HandoffError(
        `could not hand ${batch.length} deliveries to Temporal: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
      for (const waiter of batch) waiter.reject(failure);
      return;
    }
    this.counters.batches += 1;
    if (carried) this.counters.carriedBatches += 1;
    this.counters.accepted += batch.length;
    for (const waiter of batch) {
      this.remember(`${tenantLabel(waiter.record.tenant_id)}|${waiter.record.event_id}`);
      waiter.resolve('accepted');
    }
  }

  private remember(eventKey: string): void {
    this.seen.set(eventKey, true);
    if (this.seen.size > this.seenCapacity) {
      const oldest = this.seen.keys().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
  }
}
