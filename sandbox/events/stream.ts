// The simulated live feed: new events for random businesses at a configured rate per minute, so an
// enrolled business keeps receiving deliveries while the sandbox runs.
import type { Logger } from '../../lib/logger.js';

export interface EventStreamDeps {
  ratePerMinute: number;
  /** Creates `count` random events. */
  emit: (count: number) => Promise<unknown>;
  logger: Logger;
  now: () => number;
}

/** Ticks no more often than this; higher rates emit several events per tick. */
const MIN_TICK_MS = 100;

export class EventStream {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;
  private owed = 0;
  private lastTickMs = 0;

  constructor(private readonly deps: EventStreamDeps) {}

  start(): void {
    if (this.deps.ratePerMinute <= 0 || this.timer || this.stopped) return;
    this.lastTickMs = this.deps.now();
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    const intervalMs = Math.max(MIN_TICK_MS, 60_000 / this.deps.ratePerMinute);
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => {
        if (!this.stopped) this.schedule();
      });
    }, intervalMs);
  }

  private async tick(): Promise<void> {
    const now = this.deps.now();
    // Carry the fraction so low rates still emit on average exactly `ratePerMinute`.
    this.owed += ((now - this.lastTickMs) * this.deps.ratePerMinute) / 60_000;
    this.lastTickMs = now;
    const count = Math.min(1_000, Math.floor(this.owed));
    if (count === 0) return;
    // A stalled loop does not owe a burst afterwards.
    this.owed = Math.min(this.owed - count, 1);
    try {
      await this.deps.emit(count);
    } catch (error) {
      this.deps.logger.error({ err: error }, 'simulated event stream: emitting failed');
    }
  }
}
