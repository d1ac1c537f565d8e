// The order in which a stage hands out its batches: plan batches in sequence, with halves of batches
// the service rejected (422) served first so a poisoned id is isolated quickly. Pure and serialisable,
// so a stage can carry it across continue-as-new; tested without a server.
import type { BatchRef } from './run-types.js';

export interface BatchQueueState {
  /** Next plan batch, as a global index across chunk files. */
  next: number;
  /** Sub-ranges waiting to be retried after a split. */
  splits: BatchRef[];
}

export class BatchQueue {
  private next: number;
  private readonly splits: BatchRef[];

  constructor(
    private readonly totalBatches: number,
    private readonly batchesPerChunk: number,
    state?: BatchQueueState,
  ) {
    if (batchesPerChunk < 1) throw new RangeError('batchesPerChunk must be at least 1');
    this.next = state?.next ?? 0;
    this.splits = [...(state?.splits ?? [])];
  }

  hasNext(): boolean {
    return this.splits.length > 0 || this.next < this.totalBatches;
  }

  take(): BatchRef | undefined {
    const split = this.splits.shift();
    if (split) return split;
    if (this.next >= this.totalBatches) return undefined;
    const global = this.next++;
    return { chunk: Math.floor(global / this.batchesPerChunk), index: global % this.batchesPerChunk };
  }

  /**
   * Splits a rejected batch of `items` ids into two halves and queues both.
   * Returns false when the batch is a single id, which cannot be split and is a failure.
   */
  split(ref: BatchRef, items: number): boolean {
    if (items <= 1) return false;
    const offset = ref.offset ?? 0;
    const first = Math.ceil(items / 2);
    this.splits.unshift(
      { chunk: ref.chunk, index: ref.index, offset, length: first },
      { chunk: ref.chunk, index: ref.index, offset: offset + first, length: items - first },
    );
    return true;
  }

  /** Puts a batch back at the front, to be taken again first (after a pause for credits). */
  requeue(ref: BatchRef): void {
    this.splits.unshift(ref);
  }

  /** Batches not handed out yet: plan batches left plus queued sub-ranges. */
  remaining(): number {
    return this.splits.length + Math.max(0, this.totalBatches - this.next);
  }

  snapshot(): BatchQueueState {
    return { next: this.next, splits: [...this.splits] };
  }
}

/** Human-readable name of a batch for logs, failure records and file names. */
export function describeBatch(ref: BatchRef): string {
  const base = `c${String(ref.chunk).padStart(5, '0')}-b${String(ref.index).padStart(4, '0')}`;
  return ref.offset === undefined ? base : `${base}-o${ref.offset}-n${ref.length ?? 0}`;
}
