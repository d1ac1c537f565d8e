import { describe, expect, test } from 'vitest';
import { NON_RETRYABLE_API_ERRORS } from '../../workflows/batch-stage.js';
import { BatchQueue, describeBatch } from '../../pipeline/batch-queue.js';
import { nonRetryableErrorTypes } from '../../client/errors.js';

describe('BatchQueue', () => {
  test('hands out every plan batch once, addressed by chunk file and index', () => {
    const queue = new BatchQueue(45, 20);
    const refs = [];
    while (queue.hasNext()) refs.push(queue.take());
    expect(refs).toHaveLength(45);
    expect(refs[0]).toEqual({ chunk: 0, index: 0 });
    expect(refs[20]).toEqual({ chunk: 1, index: 0 });
    expect(refs[44]).toEqual({ chunk: 2, index: 4 });
    expect(queue.take()).toBeUndefined();
  });

  test('a rejected batch is split in halves, served before the rest, down to single ids', () => {
    const queue = new BatchQueue(3, 20);
    const first = queue.take()!;
    expect(queue.split(first, 50)).toBe(true);
    const left = queue.take()!;
    const right = queue.take()!;
    expect(left).toEqual({ chunk: 0, index: 0, offset: 0, length: 25 });
    expect(right).toEqual({ chunk: 0, index: 0, offset: 25, length: 25 });
    expect(queue.split(right, 25)).toBe(true);
    expect(queue.take()).toEqual({ chunk: 0, index: 0, offset: 25, length: 13 });
    expect(queue.take()).toEqual({ chunk: 0, index: 0, offset: 38, length: 12 });
    expect(queue.split({ chunk: 0, index: 0, offset: 40, length: 1 }, 1)).toBe(false);
    expect(queue.take()).toEqual({ chunk: 0, index: 1 });
  });

  test('its state survives a round trip through JSON (continue-as-new)', () => {
    const queue = new BatchQueue(10, 4);
    queue.take();
    queue.split(queue.take()!, 50);
    const resumed = new BatchQueue(
      10,
      4,
      JSON.parse(JSON.stringify(queue.snapshot())) as ReturnType<BatchQueue['snapshot']>,
    );
    const rest = [];
    while (resumed.hasNext()) rest.push(describeBatch(resumed.take()!));
    expect(rest).toEqual([
      'c00000-b0001-o0-n25',
      'c00000-b0001-o25-n25',
      ...[2, 3].map((i) => `c00000-b000${i}`),
      ...[0, 1, 2, 3].map((i) => `c00001-b000${i}`),
      'c00002-b0000',
      'c00002-b0001',
    ]);
  });
});

test("the workflow's non-retryable error types cover the client's", () => {
  for (const name of nonRetryableErrorTypes) expect(NON_RETRYABLE_API_ERRORS).toContain(name);
});
