// The run workflow with mocked activities, on the suite's Temporal dev server: the order a run takes
// (plan, match, enrichment plan, each dataset's batches, each table, the run), the call budget, and a
// cancelled run's hung batch seeing its cancellation. No service, no store: only the orchestration.
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PipelineActivities } from '../../activities/index.js';
import type { BatchRef, EnrichDataset, RunSummary, StageName, StagePlan } from '../../pipeline/run-types.js';
import { enrichRunWorkflow } from '../../workflows/index.js';
import { HEARTBEAT_EVERY_MS } from '../../pipeline/attempts.js';
import { workflowBundle } from '../support/pipeline-harness.js';
import { inject } from 'vitest';

const TASK_QUEUE = `mocked-${randomUUID()}`;
const API_QUEUE = `${TASK_QUEUE}-api`;

interface Recorded {
  log: string[];
  hang?: (stage: StageName) => boolean;
  cancelled: string[];
  /** When the hung batch saw its cancellation (epoch ms). */
  sawCancelAt?: number;
}
const runs = new Map<string, Recorded>();
const recordOf = (runId: string) => runs.get(runId) ?? { log: [], cancelled: [] };

const plan = (stage: StageName, totalBatches: number): StagePlan => ({
  stage,
  totalBatches,
  batchesPerChunk: 20,
  totalItems: totalBatches * 50,
});

/** Activities that only record what the workflow asked, in the order it asked. */
function mockedActivities(): Partial<PipelineActivities> {
  return {
    planRun: ({ run }) => {
      recordOf(run.runId).log.push('planRun');
      return Promise.resolve({
        inputRows: 100,
        rejectedRows: 0,
        uniqueKeys: 100,
        idsProvided: false,
        match: plan('match', 2),
      });
    },
    callBatch: async ({
      run,
      stage,
      batch,
    }: {
      run: { runId: string };
      stage: StageName;
      batch: BatchRef;
    }) => {
      const record = recordOf(run.runId);
      record.log.push(`call ${stage} c${batch.chunk}b${batch.index}`);
      if (record.hang?.(stage)) {
        // Hangs until the run is cancelled: heartbeats carry the cancellation to the activity.
        const context = Context.current();
        while (!context.cancellationSignal.aborted) {
          context.heartbeat();
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        record.cancelled.push(`${stage} c${batch.chunk}b${batch.index}`);
        record.sawCancelAt ??= Date.now();
        throw new Error('cancelled');
      }
      return { records: 50, misses: 0, calls: 1 };
    },
    buildEnrichPlan: ({ run, datasets }: { run: { runId: string }; datasets: EnrichDataset[] }) => {
      recordOf(run.runId).log.push('buildEnrichPlan');
      return Promise.resolve({
        matchedRows: 100,
        unmatchedRows: 0,
        uniqueIds: 100,
        stages: datasets.map((d) => plan(d, 2)),
        appended: [],
      });
    },
    writeMatchesTable: ({ run }: { run: { runId: string } }) => {
      recordOf(run.runId).log.push('writeMatchesTable');
      return Promise.resolve({ table: 'matches', files: [], rows: 100, columns: [] });
    },
    commitTable: ({ run, dataset }) => {
      recordOf(run.runId).log.push(`commitTable ${dataset}`);
      return Promise.resolve({ table: dataset, files: [], rows: 100, columns: [] });
    },
    commitRun: (input) => {
      recordOf(input.run.runId).log.push('commitRun');
      const unstarted = input.stages.reduce((sum, s) => sum + (s.unstarted?.batches ?? 0), 0);
      return Promise.resolve({
        runId: input.run.runId,
        status: unstarted > 0 ? 'stopped_at_budget' : 'completed',
        stages: input.stages,
      } as unknown as RunSummary);
    },
    recordFailures: () => Promise.resolve('failures'),
  };
}

let client: Client;
let connection: NativeConnection;
let clientConnection: Connection;
let stop: () => Promise<void>;

beforeAll(async () => {
  const address = inject('temporalAddress');
  const namespace = inject('temporalNamespace');
  connection = await NativeConnection.connect({ address });
  clientConnection = await Connection.connect({ address });
  client = new Client({ connection: clientConnection, namespace });
  const activities = mockedActivities();
  const workers = await Promise.all([
    Worker.create({
      connection,
      namespace,
      taskQueue: TASK_QUEUE,
      workflowBundle: await workflowBundle(),
      activities,
    }),
    // The worker's heartbeat throttle as workers/worker.ts sets it.
    Worker.create({
      connection,
      namespace,
      taskQueue: API_QUEUE,
      activities,
      maxHeartbeatThrottleInterval: HEARTBEAT_EVERY_MS,
      defaultHeartbeatThrottleInterval: HEARTBEAT_EVERY_MS,
    }),
  ]);
  const running = Promise.all(workers.map((w) => w.run()));
  stop = async () => {
    for (const w of workers) w.shutdown();
    await running;
  };
});

afterAll(async () => {
  await stop?.();
  await connection?.close();
  await clientConnection?.close();
});

function start(runId: string, extra: { maxCalls?: number } = {}) {
  return client.workflow.start(enrichRunWorkflow, {
    workflowId: runId,
    taskQueue: TASK_QUEUE,
    args: [
      {
        jobName: 'mocked',
        runKey: runId,
        input: { location: 'mem://input.csv' },
        output: 'mem://out/',
        datasets: ['firmographics', 'technographics'],
        windowSize: 1,
        apiTaskQueue: API_QUEUE,
        ...extra,
      },
    ],
  });
}

describe('the run workflow, with mocked activities', () => {
  it('plans, matches, plans the datasets, runs them as a chain, commits each table as its stage ends, then the run', async () => {
    const runId = `mocked-order-${randomUUID()}`;
    runs.set(runId, { log: [], cancelled: [] });
    const summary = await (await start(runId)).result();
    expect(summary.status).toBe('completed');
    const log = runs.get(runId)!.log;
    expect(log.slice(0, 4)).toEqual(['planRun', 'call match c0b0', 'call match c0b1', 'buildEnrichPlan']);
    // The first dataset alone until it has started its last batch; the second starts after that.
    expect(log.filter((l) => l !== 'writeMatchesTable').slice(4, 6)).toEqual([
      'call firmographics c0b0',
      'call firmographics c0b1',
    ]);
    const at = (entry: string) => log.indexOf(entry);
    expect(at('call technographics c0b0')).toBeGreaterThan(at('call firmographics c0b1'));
    expect(at('call technographics c0b1')).toBeGreaterThan(at('call technographics c0b0'));
    // Each table commits after its own calls (the first may commit while the second still calls).
    expect(at('commitTable firmographics')).toBeGreaterThan(at('call firmographics c0b1'));
    expect(at('commitTable technographics')).toBeGreaterThan(at('call technographics c0b1'));
    expect(log.filter((l) => l.startsWith('commitTable'))).toHaveLength(2);
    // The matches table is written once, after the id plan and before the run's commit.
    expect(log.filter((l) => l === 'writeMatchesTable')).toHaveLength(1);
    expect(at('writeMatchesTable')).toBeGreaterThan(at('buildEnrichPlan'));
    expect(log.at(-1)).toBe('commitRun');
  });

  it('stops starting batches at the call budget and commits the run as stopped at budget', async () => {
    const runId = `mocked-budget-${randomUUID()}`;
    runs.set(runId, { log: [], cancelled: [] });
    const summary = await (await start(runId, { maxCalls: 3 })).result();
    const calls = runs.get(runId)!.log.filter((l) => l.startsWith('call '));
    expect(calls).toHaveLength(3);
    expect(summary.status).toBe('stopped_at_budget');
  });

  it('a cancelled run cancels its in-flight batch, which sees the cancellation, and commits nothing', async () => {
    const runId = `mocked-cancel-${randomUUID()}`;
    runs.set(runId, { log: [], cancelled: [], hang: (stage) => stage === 'firmographics' });
    const handle = await start(runId);
    await expect
      .poll(() => runs.get(runId)!.log.some((l) => l.startsWith('call firmographics')), {
        timeout: 30_000,
      })
      .toBe(true);
    const cancelledAt = Date.now();
    await handle.cancel();
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    await expect.poll(() => runs.get(runId)!.cancelled.length, { timeout: 30_000 }).toBeGreaterThan(0);
    expect(runs.get(runId)!.log).not.toContain('commitRun');
    // The batch's own signal fired within 5 s of `runs cancel` (its calls stop with it).
    expect(runs.get(runId)!.sawCancelAt! - cancelledAt).toBeLessThan(5_000);
  });
});
