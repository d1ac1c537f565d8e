// Workflow tests with mocked activities: the stage and export activities replaced by scripted test
// functions that record what the workflows asked for, and workers that run the real workflow bundle
// with them on a Temporal server of the test's choosing. No service, no store: only orchestration.
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import type { PipelineActivities } from '../../activities/index.js';
import type { ExportActivities } from '../../activities/export.js';
import { HEARTBEAT_EVERY_MS } from '../../pipeline/attempts.js';
import type { ExportPlan, ExportSummary, SliceOutcome } from '../../pipeline/export-types.js';
import type { Constraints, Count } from '../../pipeline/export-slicing.js';
import type { BatchFailure, BatchRef, RunLocation, StageName } from '../../pipeline/run-types.js';
import { workflowBundle } from './pipeline-harness.js';

/** A batch as the tests name it: `c0b3`, or `c0b3o4n2` for a sub-range after a 422 split. */
export const labelOf = (ref: BatchRef) =>
  `c${ref.chunk}b${ref.index}` + (ref.offset === undefined ? '' : `o${ref.offset}n${ref.length}`);

/** Waits in an activity until its cancellation arrives (heartbeats carry it), then notes when. */
async function hangUntilCancelled(script: { sawCancelAt?: number }): Promise<never> {
  const context = Context.current();
  while (!context.cancellationSignal.aborted) {
    context.heartbeat();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  script.sawCancelAt ??= Date.now();
  throw context.cancellationSignal.reason;
}

// ---- batch stages ---------------------------------------------------------------------------------

export interface StageScript {
  /** Items in a whole plan batch; default 4. */
  itemsPerBatch?: number;
  /** Items (`c0b1:2`: batch c0b1, item 2) the service refuses with a 422. */
  badItems?: Set<string>;
  /** Batches whose first attempt fails with a 5xx. */
  failOnce?: Set<string>;
  /** Batches that fail with a 5xx on every attempt. */
  failAlways?: Set<string>;
  /** Batches that hang until cancelled. */
  hang?: Set<string>;
  /** Every attempt, in the order it started. */
  attempts: string[];
  /** Batches that succeeded, with their item ranges. */
  succeeded: string[];
  /** What recordFailures was given, flattened. */
  failures: BatchFailure[];
  sawCancelAt?: number;
}

export const stageScripts = new Map<string, StageScript>();

export function newStageScript(runId: string, script: Partial<StageScript> = {}): StageScript {
  const full: StageScript = { attempts: [], succeeded: [], failures: [], ...script };
  stageScripts.set(runId, full);
  return full;
}

function stageActivities(): Partial<PipelineActivities> {
  return {
    callBatch: async ({ run, batch }: { run: RunLocation; stage: StageName; batch: BatchRef }) => {
      const script = stageScripts.get(run.runId)!;
      const label = labelOf(batch);
      const whole = `c${batch.chunk}b${batch.index}`;
      script.attempts.push(label);
      if (script.hang?.has(whole)) return hangUntilCancelled(script);
      const { attempt } = Context.current().info;
      if (script.failAlways?.has(whole) || (script.failOnce?.has(whole) && attempt === 1)) {
        throw ApplicationFailure.retryable(`service unavailable (${label})`, 'ServerError');
      }
      const from = batch.offset ?? 0;
      const items = batch.length ?? script.itemsPerBatch ?? 4;
      for (let i = from; i < from + items; i++) {
        if (script.badItems?.has(`${whole}:${i}`)) {
          throw ApplicationFailure.create({
            type: 'ValidationError',
            message: `item ${i} of ${whole} is refused`,
            nonRetryable: true,
            details: [{ items }],
          });
        }
      }
      script.succeeded.push(label);
      return { records: items, misses: 0, calls: 1 };
    },
    recordFailures: ({ run, failures, sequence }) => {
      stageScripts.get(run.runId)!.failures.push(...failures);
      return Promise.resolve(`failures/${sequence}.jsonl`);
    },
  };
}

// ---- search exports -------------------------------------------------------------------------------

/**
 * A search over one range dimension `year` (positions 0..years-1), `perYear` records in each: counts
 * are exact, and every page of a slice returns what offset paging of that slice would.
 */
export interface ExportScript {
  years: number;
  perYear: number;
  /** Pages (`s2p1`: slice 2, page 1) that hang until cancelled. */
  hang?: Set<string>;
  /** Prospects (by position) whose posts call hangs until cancelled. */
  hangPosts?: Set<number>;
  plan?: ExportPlan;
  probes: number;
  /** Every page fetch and posts call, in the order they started (`s0p1`, `posts 3`). */
  fetched: string[];
  finished: number[];
  committed?: Parameters<ExportActivities['commitExport']>[0];
  sawCancelAt?: number;
}

export const exportScripts = new Map<string, ExportScript>();

export function newExportScript(
  runId: string,
  script: Pick<ExportScript, 'years' | 'perYear'> & Partial<ExportScript>,
) {
  const full: ExportScript = { probes: 0, fetched: [], finished: [], ...script };
  exportScripts.set(runId, full);
  return full;
}

function countOf(script: ExportScript, constraints: Constraints): number {
  const bound = constraints.year;
  if (!bound) return script.years * script.perYear;
  if ('outside' in bound) return 0;
  return (bound.to - bound.from + 1) * script.perYear;
}

function sliceCount(script: ExportScript, slice: number): number {
  const planned = script.plan!.slices.find((s) => s.index === slice)!;
  return countOf(script, planned.constraints);
}

function exportActivities(): Partial<ExportActivities> {
  const scriptOf = (run: RunLocation) => exportScripts.get(run.runId)!;
  return {
    prepareExport: () =>
      Promise.resolve({
        dimensions: [{ field: 'year', kind: 'range', min: 0, max: 99, negatable: false }],
        exclude: { ids: 0, sent: false },
        done: [],
      }),
    probeCount: ({ run, constraints }: { run: RunLocation; constraints: Constraints }): Promise<Count> => {
      const script = scriptOf(run);
      script.probes += 1;
      return Promise.resolve({ n: countOf(script, constraints), exact: true });
    },
    saveExportPlan: ({ run, plan }) => {
      scriptOf(run).plan = plan;
      return Promise.resolve();
    },
    fetchPage: async ({ run, slice, page }: { run: RunLocation; slice: number; page: number }) => {
      const script = scriptOf(run);
      script.fetched.push(`s${slice}p${page}`);
      if (script.hang?.has(`s${slice}p${page}`)) return hangUntilCancelled(script);
      const total = sliceCount(script, slice);
      const { pageSize } = script.plan!;
      const records = Math.max(0, Math.min(pageSize, total - (page - 1) * pageSize));
      return { records, total, calls: 1, reused: false };
    },
    finishSlice: ({ run, outcome }: { run: RunLocation; outcome: SliceOutcome }) => {
      scriptOf(run).finished.push(outcome.index);
      return Promise.resolve();
    },
    commitExportRecords: ({ run }: { run: RunLocation }) => {
      const script = scriptOf(run);
      const written = script.years * script.perYear;
      return Promise.resolve({
        table: { table: 'records', files: [], rows: written, columns: [] },
        fetched: written,
        duplicates: 0,
        excluded: 0,
        written,
        postIds: 0,
      });
    },
    commitExport: (input) => {
      scriptOf(input.run).committed = input;
      return Promise.resolve({
        kind: 'export',
        runId: input.run.runId,
        status: 'completed',
        slices: input.slices,
      } as unknown as ExportSummary);
    },
    fetchPosts: async ({ run, index }: { run: RunLocation; index: number }) => {
      const script = scriptOf(run);
      script.fetched.push(`posts ${index}`);
      if (script.hangPosts?.has(index)) return hangUntilCancelled(script);
      // Every third prospect has no posts.
      return index % 3 === 2 ? { records: 0, misses: 1, calls: 1 } : { records: 1, misses: 0, calls: 1 };
    },
  };
}

// ---- workers --------------------------------------------------------------------------------------

export interface MockedWorkers {
  client: Client;
  taskQueue: string;
  apiTaskQueue: string;
  stop(): Promise<void>;
}

/** Workers on fresh task queues of the server at `address`: the real workflows, the mocked activities. */
export async function startMockedWorkers(address: string, namespace: string): Promise<MockedWorkers> {
  const taskQueue = `mocked-${randomUUID()}`;
  const apiTaskQueue = `${taskQueue}-api`;
  const connection = await NativeConnection.connect({ address });
  const clientConnection = await Connection.connect({ address });
  const activities = { ...stageActivities(), ...exportActivities() };
  const workers = await Promise.all([
    Worker.create({ connection, namespace, taskQueue, workflowBundle: await workflowBundle(), activities }),
    // The heartbeat throttle as workers/worker.ts sets it, so cancellations arrive as they would.
    Worker.create({
      connection,
      namespace,
      taskQueue: apiTaskQueue,
      activities,
      maxHeartbeatThrottleInterval: HEARTBEAT_EVERY_MS,
      defaultHeartbeatThrottleInterval: HEARTBEAT_EVERY_MS,
    }),
  ]);
  const running = Promise.all(workers.map((w) => w.run()));
  return {
    client: new Client({ connection: clientConnection, namespace }),
    taskQueue,
    apiTaskQueue,
    stop: async () => {
      for (const w of workers) w.shutdown();
      await running;
      await connection.close();
      await clientConnection.close();
    },
  };
}
