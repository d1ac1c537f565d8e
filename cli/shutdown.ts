// Stopping what a long-running command started (dev, demo): a shutdown signal is watched from the
// first moment, so Ctrl-C during start-up stops what has started too; then every part stops in order
// (worker, sandbox, servers), each within its own time limit, and one part that fails or hangs never
// keeps the others running. Together the limits keep a shutdown under 10 s.
import type { Logger } from '../lib/logger.js';

export interface ShutdownWatch {
  /** The signal, once one came. */
  readonly signal: NodeJS.Signals | undefined;
  /** Resolves with the first SIGINT or SIGTERM. */
  readonly received: Promise<NodeJS.Signals>;
  dispose(): void;
}

/** Watches for SIGINT and SIGTERM from now on (replacing Node's default exit on them). */
export function watchShutdownSignals(): ShutdownWatch {
  let signal: NodeJS.Signals | undefined;
  let resolve!: (signal: NodeJS.Signals) => void;
  const received = new Promise<NodeJS.Signals>((r) => (resolve = r));
  const onSignal = (s: NodeJS.Signals) => {
    signal ??= s;
    resolve(s);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    get signal() {
      return signal;
    },
    received,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** SIGTERM to SIGKILL for the Temporal and S3 servers: with the worker's drain, a stop stays under 10 s. */
export const SERVER_GRACE_MS = 3_000;

export interface StopStep {
  name: string;
  stop(): Promise<void>;
  /** How long the step may take before the shutdown goes on without it. */
  withinMs: number;
}

/** Runs the steps in order; a step that throws or overruns is logged and the next one runs. */
export async function stopInOrder(steps: StopStep[], logger: Logger): Promise<void> {
  for (const step of steps) {
    let timer: NodeJS.Timeout | undefined;
    const overrun = new Promise<'overrun'>((resolve) => {
      timer = setTimeout(() => resolve('overrun'), step.withinMs);
    });
    try {
      const outcome = await Promise.race([step.stop().then(() => 'stopped' as const), overrun]);
      if (outcome === 'overrun')
        logger.warn({ part: step.name, ms: step.withinMs }, 'did not stop in time; stopping the rest');
    } catch (error) {
      logger.warn({ part: step.name, err: (error as Error).message }, 'stopping failed; stopping the rest');
    } finally {
      clearTimeout(timer);
    }
  }
}
