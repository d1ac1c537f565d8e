// The search-export workflows with mocked activities, on the suite's Temporal dev server: a search past
// the offset cap sliced under it (the cap lowered to 100 through the run's input), every page of every
// slice fetched once and in order, what is committed; the posts stage; a cancelled export's hung page.
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { ExportRunWorkflowInput, ExportSummary } from '../../pipeline/export-types.js';
import { exportPostsWorkflow, exportRunWorkflow } from '../../workflows/index.js';
import {
  newExportScript,
  startMockedWorkers,
  type ExportScript,
  type MockedWorkers,
} from '../support/mocked-workers.js';

let workers: MockedWorkers;

beforeAll(async () => {
  workers = await startMockedWorkers(inject('temporalAddress'), inject('temporalNamespace'));
});

afterAll(async () => {
  await workers?.stop();
});

function runExport(runId: string, extra: Partial<ExportRunWorkflowInput> = {}) {
  return workers.client.workflow.start(exportRunWorkflow, {
    workflowId: runId,
    taskQueue: workers.taskQueue,
    args: [
      {
        runId,
        jobName: 'mocked-export',
        runKey: runId,
        target: 'prospects',
        filters: {},
        output: 'mem://out/',
        offsetCap: 100,
        pageSize: 10,
        windowSize: 1,
        apiTaskQueue: workers.apiTaskQueue,
        apiRetry: { maximumAttempts: 3, initialIntervalMs: 10, maximumIntervalMs: 10 },
        ...extra,
      },
    ],
  });
}

/** Every page of the saved plan, slice by slice in index order, pages in order. */
function plannedPages(script: ExportScript): string[] {
  return script.plan!.slices.flatMap((s) =>
    Array.from({ length: s.pages }, (_, p) => `s${s.index}p${p + 1}`),
  );
}

describe('the export workflows, with mocked activities', () => {
  it('slices a search past the cap into disjoint slices under it, fetches each page once in order, and commits every record', async () => {
    const runId = `export-order-${randomUUID()}`;
    // 100 years × 7 records: 700 records, seven times the cap of 100.
    const script = newExportScript(runId, { years: 100, perYear: 7 });
    const summary = (await (await runExport(runId)).result()) as ExportSummary;

    const plan = script.plan!;
    expect(plan.total).toEqual({ n: 700, exact: true });
    expect(plan.sliceSum).toBe(700);
    expect(plan.slices.length).toBeGreaterThan(7);
    for (const slice of plan.slices) expect(slice.count).toBeLessThanOrEqual(100);
    // The slices' year ranges cover 0..99 once each.
    const years = plan.slices
      .map((s) => s.constraints.year as { from: number; to: number })
      .flatMap(({ from, to }) => Array.from({ length: to - from + 1 }, (_, i) => from + i));
    expect(years).toEqual(Array.from({ length: 100 }, (_, i) => i));

    // One page activity at a time: front slices first, pages in order, each once.
    expect(script.fetched).toEqual(plannedPages(script));
    expect(script.finished).toEqual(plan.slices.map((s) => s.index));
    const committed = script.committed!;
    expect(committed.slices.map((s) => s.index)).toEqual(plan.slices.map((s) => s.index));
    for (const outcome of committed.slices) {
      expect(outcome.records).toBe(plan.slices[outcome.index]!.count);
      expect(outcome.failedPages).toBe(0);
    }
    expect(committed.slices.reduce((sum, s) => sum + s.records, 0)).toBe(700);
    expect(committed.probeCalls).toBe(script.probes);
    expect(committed.failures).toEqual([]);
    expect(summary.status).toBe('completed');
  });

  it('with a window of 8 still fetches every page exactly once and commits the same records', async () => {
    const runId = `export-window-${randomUUID()}`;
    const script = newExportScript(runId, { years: 100, perYear: 7 });
    await (await runExport(runId, { windowSize: 8 })).result();
    expect([...script.fetched].sort()).toEqual(plannedPages(script).sort());
    expect(script.committed!.slices.reduce((sum, s) => sum + s.records, 0)).toBe(700);
    expect([...script.finished].sort((a, b) => a - b)).toEqual(script.plan!.slices.map((s) => s.index));
  });

  it('the posts stage makes one call per prospect and counts records and misses', async () => {
    const runId = `export-posts-${randomUUID()}`;
    const script = newExportScript(runId, { years: 1, perYear: 1 });
    const result = await workers.client.workflow.execute(exportPostsWorkflow, {
      workflowId: runId,
      taskQueue: workers.taskQueue,
      args: [
        {
          run: { runId, output: 'mem://out/' },
          total: 25,
          apiTaskQueue: workers.apiTaskQueue,
          windowSize: 4,
        },
      ],
    });
    expect([...script.fetched].sort()).toEqual(Array.from({ length: 25 }, (_, i) => `posts ${i}`).sort());
    // Every third prospect (2, 5, …, 23) has no posts.
    expect(result).toMatchObject({ total: 25, records: 17, misses: 8, calls: 25, failed: 0, failures: [] });
  });

  it('a cancelled export cancels its hung page, which sees it within 5 s, fetches nothing more and commits nothing', async () => {
    const runId = `export-cancel-${randomUUID()}`;
    const script = newExportScript(runId, { years: 100, perYear: 7, hang: new Set(['s1p3']) });
    const handle = await runExport(runId);
    await expect.poll(() => script.fetched.includes('s1p3'), { timeout: 30_000 }).toBe(true);
    const cancelledAt = Date.now();
    await handle.cancel();
    const failure = await handle.result().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    await expect.poll(() => script.sawCancelAt, { timeout: 10_000 }).toBeDefined();
    expect(script.sawCancelAt! - cancelledAt).toBeLessThan(5_000);
    expect(script.fetched.at(-1)).toBe('s1p3');
    expect(script.finished).toEqual([0]);
    expect(script.committed).toBeUndefined();
  });
});
