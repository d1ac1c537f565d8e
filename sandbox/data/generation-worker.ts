// Worker-thread entry that produces business or prospect batches for the main thread, which only appends
// them to DuckDB. At most a few batches are in flight, so a slow consumer does not make a worker buffer
// the whole world.
import { parentPort, workerData } from 'node:worker_threads';
import { businessBatches } from './business-batches.js';
import { generateBusinessRows } from './businesses.js';
import { prospectBatches } from './prospect-batches.js';

export type GenerationRole = 'businesses' | 'prospects';

export interface GenerationWorkerData {
  role: GenerationRole;
  seed: string | number;
  businesses: number;
  prospects: number;
  batchSize: number;
  /** Batches sent but not yet acknowledged before the worker waits. */
  inFlight: number;
}

export type GenerationWorkerMessage =
  { type: 'batch'; batch: unknown } | { type: 'done' } | { type: 'error'; message: string };

function batchesOf(data: GenerationWorkerData): Iterable<unknown> {
  if (data.role === 'businesses') return businessBatches(data.seed, data.businesses, data.batchSize);
  // Prospects need only their employers' identities, not the rest of each business.
  const rows = generateBusinessRows(data.seed, data.businesses, true);
  return prospectBatches(data.seed, rows, data.prospects, data.batchSize);
}

async function run(): Promise<void> {
  const port = parentPort;
  if (!port) return;
  const data = workerData as GenerationWorkerData;
  let credits = data.inFlight;
  let wake: (() => void) | null = null;
  port.on('message', () => {
    credits += 1;
    wake?.();
  });
  try {
    for (const batch of batchesOf(data)) {
      while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      credits -= 1;
      port.postMessage({ type: 'batch', batch } satisfies GenerationWorkerMessage);
    }
    port.postMessage({ type: 'done' } satisfies GenerationWorkerMessage);
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    port.postMessage({ type: 'error', message } satisfies GenerationWorkerMessage);
  }
  port.close();
}

void run();
