// The batch stage workflow with mocked activities, on the suite's Temporal dev server: the order its
// batches go out, the call budget and a resume past it, 422 bisection, batches retried and batches
// recorded as failed (and a retry of those), and a cancelled stage's hung batch seeing its signal.
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { BatchStageInput } from '../../workflows/batch-stage.js';
import { batchStageWorkflow } from '../../workflows/index.js';
import {
  labelOf,
  newStageScript,
  startMockedWorkers,
  type MockedWorkers,
} from '../support/mocked-workers.js';

let workers: MockedWorkers;

beforeAll(async () => {
  workers = await startMockedWorkers(inject('temporalAddress'), inject('temporalNamespace'));
});

afterAll(async () => {
  await workers?.stop();
});

/** Batch labels of a plan of `total` batches, `perChunk` a chunk file, in plan order. */
const planOrder = (total: number, perChunk: number) =>
  Array.from({ length: total }, (_, i) => labelOf({ chunk: Math.floor(i / perChunk), index: i % perChunk }));

function stageInput(runId: string, extra: Partial<BatchStageInput> = {}): BatchStageInput {
  return {
    run: { runId, output: 'mem://out/' },
    plan: { stage: 'firmographics', totalBatches: 10, batchesPerChunk: 4, totalItems: 40 },
    apiTaskQueue: workers.apiTaskQueue,
    windowSize: 1,
    // Retries without waiting: the policy's figures are not what these tests are about.
    apiRetry: { maximumAttempts: 3, initialIntervalMs: 10, maximumIntervalMs: 10 },
    ...extra,
  };
}

function runStage(runId: string, extra: Partial<BatchStageInput> = {}) {
  return workers.client.workflow.start(batchStageWorkflow, {
    workflowId: runId,
    taskQueue: workers.taskQueue,
    args: [stageInput(runId, extra)],
  });
}

describe('the batch stage workflow, with mocked activities', () => {
  it('sends every batch of the plan once, in plan order across chunk files, and counts what came back', async () => {
    const runId = `stage-order-${randomUUID()}`;
    const script = newStageScript(runId);
    const result = await (await runStage(runId)).result();
    expect(script.attempts).toEqual(planOrder(10, 4));
    expect(result).toMatchObject({
      doneBatches: 10,
      failedBatches: 0,
      records: 40,
      calls: 10,
      failureFiles: [],
    });
  });

  it('with a window of 4 still sends each batch exactly once', async () => {
    const runId = `stage-window-${randomUUID()}`;
    const script = newStageScript(runId);
    const result = await (await runStage(runId, { windowSize: 4 })).result();
    expect([...script.attempts].sort()).toEqual(planOrder(10, 4).sort());
    expect(result).toMatchObject({ doneBatches: 10, records: 40, calls: 10 });
  });

  it('stops at the call budget, says which batches it left, and a resume from there does the rest', async () => {
    const runId = `stage-budget-${randomUUID()}`;
    const script = newStageScript(runId);
    const stopped = await (await runStage(runId, { budget: 7, windowSize: 3 })).result();
    expect(script.attempts).toHaveLength(7);
    expect(stopped.calls).toBe(7);
    expect(stopped.unstarted).toMatchObject({ next: 7, end: 10, batches: 3 });

    const resumedId = `${runId}-resume`;
    const resumedScript = newStageScript(resumedId);
    const resumed = await (
      await runStage(resumedId, { resumeFrom: stopped.unstarted!.next, resumeTo: stopped.unstarted!.end })
    ).result();
    expect(resumed.unstarted).toBeUndefined();
    // Together the two runs sent every batch of the plan exactly once.
    expect([...script.attempts, ...resumedScript.attempts].sort()).toEqual(planOrder(10, 4).sort());
    expect(resumedScript.attempts).toEqual(planOrder(10, 4).slice(7));
  });

  it('splits a batch the service refuses (422) until the one bad item is isolated and recorded', async () => {
    const runId = `stage-bisect-${randomUUID()}`;
    const script = newStageScript(runId, { itemsPerBatch: 8, badItems: new Set(['c0b1:5']) });
    const result = await (
      await runStage(runId, {
        plan: { stage: 'match', totalBatches: 3, batchesPerChunk: 4, totalItems: 24 },
      })
    ).result();
    // Halves first, depth first: 8 → 4+4 → 2+2 → 1+1; each sub-range once.
    expect(script.attempts).toEqual([
      'c0b0',
      'c0b1',
      'c0b1o0n4',
      'c0b1o4n4',
      'c0b1o4n2',
      'c0b1o4n1',
      'c0b1o5n1',
      'c0b1o6n2',
      'c0b2',
    ]);
    expect(script.failures).toEqual([
      expect.objectContaining({
        batch: { chunk: 0, index: 1, offset: 5, length: 1 },
        errorType: 'ValidationError',
      }),
    ]);
    expect(result).toMatchObject({ failedBatches: 1, records: 23, failureFiles: ['failures/0.jsonl'] });
  });

  it('retries a batch that failed once; records one that keeps failing; a retry of the failed batches completes the stage', async () => {
    const runId = `stage-retry-${randomUUID()}`;
    const script = newStageScript(runId, { failOnce: new Set(['c0b2']), failAlways: new Set(['c1b1']) });
    const result = await (await runStage(runId)).result();
    expect(script.attempts.filter((a) => a === 'c0b2')).toHaveLength(2);
    expect(script.attempts.filter((a) => a === 'c1b1')).toHaveLength(3);
    expect(script.failures).toEqual([
      expect.objectContaining({ batch: { chunk: 1, index: 1 }, errorType: 'ServerError', attempts: 3 }),
    ]);
    expect(result).toMatchObject({ doneBatches: 9, failedBatches: 1, records: 36 });

    // `runs retry`: only the recorded batches, now that the service answers.
    const retryId = `${runId}-retry`;
    const retryScript = newStageScript(retryId);
    const retried = await (
      await runStage(retryId, { explicitBatches: script.failures.map((f) => f.batch) })
    ).result();
    expect(retryScript.attempts).toEqual(['c1b1']);
    expect(retried).toMatchObject({ doneBatches: 1, failedBatches: 0, records: 4 });
  });

  it('a cancelled stage cancels its hung batch, which sees it within 5 s, and starts no batch after it', async () => {
    const runId = `stage-cancel-${randomUUID()}`;
    const script = newStageScript(runId, { hang: new Set(['c0b2']) });
    const handle = await runStage(runId);
    await expect.poll(() => script.attempts.includes('c0b2'), { timeout: 30_000 }).toBe(true);
    const cancelledAt = Date.now();
    await handle.cancel();
    const failure = await handle.result().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    await expect.poll(() => script.sawCancelAt, { timeout: 10_000 }).toBeDefined();
    expect(script.sawCancelAt! - cancelledAt).toBeLessThan(5_000);
    // Seven batches were still to go: none of them reached the service.
    expect(script.attempts).toEqual(['c0b0', 'c0b1', 'c0b2']);
  });
});
