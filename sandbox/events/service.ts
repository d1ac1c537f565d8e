// The events part of the sandbox without HTTP: store, outbox worker and simulated stream, started and
// stopped together. The fastify plugin wraps it; scripts and tests can use it directly.
import type { DuckDBInstance } from '@duckdb/node-api';
import { BUSINESS_EVENT_TYPES, type BusinessEventType } from '../../contract/enums.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import { buildEventData, type EventData } from './catalog.js';
import { DeliveryWorker, type DeliveryOptions } from './delivery.js';
import { liveRandom } from './random.js';
import type { BusinessEvent } from '../../contract/schemas/businesses.js';
import { EventsStore, type NewBusinessEvent } from './store.js';
import { EventStream } from './stream.js';

/** What to emit; anything left out is chosen at random (business, type, data) or is now (time). */
export interface EmitEventSpec {
  business_id?: string | undefined;
  event_name?: BusinessEventType | undefined;
  event_time?: string | undefined;
  data?: EventData | undefined;
}

export interface EmitResult {
  events: BusinessEvent[];
  /** Deliveries put in the outbox for these events. */
  deliveries_queued: number;
}

/** Thrown when an event has to go to a random business and the database holds none. */
export class NoBusinessesError extends Error {
  override readonly name = 'NoBusinessesError';
  readonly code = 'NO_BUSINESSES';
  constructor() {
    super('no businesses to emit events for');
  }
}

/** Thrown when an event to emit names a time that is not a date-time. */
export class InvalidEventTimeError extends Error {
  override readonly name = 'InvalidEventTimeError';
  readonly code = 'INVALID_EVENT_TIME';
  constructor(value: string) {
    super(`not a date-time: ${value}`);
  }
}

export interface EventsServiceOptions {
  /** The sandbox database; the service opens its own connection on it. */
  db: DuckDBInstance;
  /** Epoch milliseconds; default Date.now. */
  clock?: () => number;
  logger?: Logger;
  /** Simulated new events per minute; 0 (default) = off. */
  emitRatePerMinute?: number;
  deliveryOptions?: DeliveryOptions;
  /**
   * Serve the seeded history shifted by whole days so that it ends at the start of today (UTC):
   * the stored data stays deterministic, while `--since 30d` finds recent events. Default true.
   */
  historyEndsToday?: boolean;
}

const DAY_MS = 86_400_000;

export class EventsService {
  readonly now: () => number;
  private readonly random = liveRandom();
  private readonly stream: EventStream;
  private stopped = false;
  private historyAnchorMs: number | undefined;

  private constructor(
    readonly store: EventsStore,
    private readonly worker: DeliveryWorker,
    options: { now: () => number; logger: Logger; emitRatePerMinute: number },
  ) {
    this.now = options.now;
    this.stream = new EventStream({
      ratePerMinute: options.emitRatePerMinute,
      logger: options.logger,
      now: options.now,
      emit: (count) =>
        this.emit(
          Array.from({ length: count }, () => ({})),
          'stream',
        ),
    });
  }

  /** Opens the store and starts the outbox worker and the stream. */
  static async start(options: EventsServiceOptions): Promise<EventsService> {
    const now = options.clock ?? Date.now;
    const logger = (options.logger ?? silentLogger).child({ component: 'sandbox-events' });
    const store = await EventsStore.open(options.db);
    const worker = new DeliveryWorker({ store, logger, now, options: options.deliveryOptions ?? {} });
    const service = new EventsService(store, worker, {
      now,
      logger,
      emitRatePerMinute: options.emitRatePerMinute ?? 0,
    });
    if (options.historyEndsToday ?? true) service.historyAnchorMs = await store.historyAnchorMs();
    worker.start();
    service.stream.start();
    return service;
  }

  /** Milliseconds added to the time of each seeded event when served: from the anchor to the start of today. */
  generatedShiftMs(): number {
    if (this.historyAnchorMs === undefined) return 0;
    return Math.floor(this.now() / DAY_MS) * DAY_MS - this.historyAnchorMs;
  }

  /** Creates events (random where the spec leaves it open), queues their deliveries and wakes the worker. */
  async emit(specs: readonly EmitEventSpec[], origin: 'stream' | 'admin'): Promise<EmitResult> {
    const nowMs = this.now();
    const events: NewBusinessEvent[] = [];
    for (const spec of specs) {
      const businessId = spec.business_id ?? (await this.store.randomBusinessId(this.random));
      if (businessId === undefined) throw new NoBusinessesError();
      const eventName = spec.event_name ?? this.random.pick(BUSINESS_EVENT_TYPES);
      const eventTimeMs = spec.event_time === undefined ? nowMs : Date.parse(spec.event_time);
      if (Number.isNaN(eventTimeMs)) throw new InvalidEventTimeError(spec.event_time ?? '');
      events.push({
        event_id: this.random.hex(32),
        business_id: businessId,
        event_name: eventName,
        event_time_ms: eventTimeMs,
        data: spec.data ?? buildEventData(eventName, this.random, eventTimeMs),
        origin,
      });
    }
    const queued = await this.store.recordEvents(events, nowMs);
    if (queued > 0) this.worker.wake();
    return {
      events: events.map((event) => ({
        event_id: event.event_id,
        event_name: event.event_name,
        event_time: new Date(event.event_time_ms).toISOString(),
        business_id: event.business_id,
        data: event.data,
      })),
      deliveries_queued: queued,
    };
  }

  /** Stops the stream, then the worker (letting in-flight deliveries finish), then closes the store. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.stream.stop();
    await this.worker.stop();
    await this.store.close();
  }
}
