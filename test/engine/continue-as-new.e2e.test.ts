// Continue-as-new with mocked activities: the stage, export pages and posts workflows continue as new
// when the server suggests it (`continueAsNewSuggested`) or after a fixed number of batches or pages
// (1,500 and 1,000, constants). A dev server of this file's own suggests it after 40 history events,
// so a small run continues several times; each workflow's result must equal the same run's result on
// the suite's server, where it never continues, and every batch or page must go out exactly once.
import type { Client } from '@temporalio/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startTemporalDevServer, type TemporalDevServer } from '../../stack/temporal.js';
import type { ExportSummary } from '../../pipeline/export-types.js';
import type { StageResult } from '../../pipeline/run-types.js';
import { batchStageWorkflow, exportPostsWorkflow, exportRunWorkflow } from '../../workflows/index.js';
import {
  exportScripts,
  newExportScript,
  newStageScript,
  stageScripts,
  startMockedWorkers,
  type MockedWorkers,
} from '../support/mocked-workers.js';

const SUGGEST_AFTER_EVENTS = 40;

let dataDir: string;
let server: TemporalDevServer;
/** Workers on the suite's server (no continuation) and on this file's (continuation every ~40 events). */
let plain: MockedWorkers;
let short: MockedWorkers;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'enrichflow-can-'));
  [server, plain] = await Promise.all([
    startTemporalDevServer({
      dataDir,
      headless: true,
      inMemory: true,
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': SUGGEST_AFTER_EVENTS },
    }),
    startMockedWorkers(inject('temporalAddress'), inject('temporalNamespace')),
  ]);
  short = await startMockedWorkers(server.address, server.namespace);
});

afterAll(async () => {
  await Promise.all([plain?.stop(), short?.stop()]);
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Runs of a workflow id: the latest one's start names the run it continued, back to the first. */
async function runsOf(client: Client, workflowId: string): Promise<number> {
  let runs = 1;
  let runId: string | undefined;
  for (;;) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const previous = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (!previous) return runs;
    runs += 1;
    runId = previous;
  }
}

/** A result without its clock readings, which differ between any two runs. */
function withoutTimes<T extends object>(value: T): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, v: unknown) =>
      key === 'startedAt' || key === 'updatedAt' || key === 'createdAt' ? undefined : v,
    ),
  );
}

describe('continue-as-new, with mocked activities', () => {
  it('a batch stage that continues as new returns what it returns in one run: each batch once, failures and splits carried', async () => {
    const stage = async (workers: MockedWorkers, runId: string) => {
      newStageScript(runId, {
        itemsPerBatch: 4,
        badItems: new Set(['c3b1:2']),
        failAlways: new Set(['c1b2', 'c4b0']),
      });
      const result = await workers.client.workflow.execute(batchStageWorkflow, {
        workflowId: runId,
        taskQueue: workers.taskQueue,
        args: [
          {
            run: { runId, output: 'mem://out/' },
            plan: { stage: 'firmographics', totalBatches: 24, batchesPerChunk: 5, totalItems: 96 },
            apiTaskQueue: workers.apiTaskQueue,
            windowSize: 3,
            apiRetry: { maximumAttempts: 2, initialIntervalMs: 10, maximumIntervalMs: 10 },
          },
        ],
      });
      return { result, runs: await runsOf(workers.client, runId), script: stageScripts.get(runId)! };
    };
    const id = randomUUID();
    const [once, continued] = await Promise.all([
      stage(plain, `can-stage-plain-${id}`),
      stage(short, `can-stage-short-${id}`),
    ]);
    expect(once.runs).toBe(1);
    expect(continued.runs).toBeGreaterThan(2);
    // Each generation writes the failures it saw to a file of its own; what they hold is compared below.
    const counters = (r: StageResult) => withoutTimes({ ...r, failureFiles: undefined });
    expect(counters(continued.result)).toEqual(counters(once.result));
    expect(continued.result.failureFiles.length).toBeGreaterThanOrEqual(once.result.failureFiles.length);
    expect(continued.result).toMatchObject<Partial<StageResult>>({ failedBatches: 3, records: 96 - 8 - 1 });
    // Every batch and sub-range went out as often in both (each success once).
    expect([...continued.script.attempts].sort()).toEqual([...once.script.attempts].sort());
    expect(new Set(continued.script.succeeded).size).toBe(continued.script.succeeded.length);
    const failed = (s: typeof once.script) => s.failures.map((f) => JSON.stringify(f.batch)).sort();
    expect(failed(continued.script)).toEqual(failed(once.script));
  });

  it('an export whose pages workflow continues as new commits the same slices, each page fetched once', async () => {
    const exportRun = async (workers: MockedWorkers, runId: string) => {
      newExportScript(runId, { years: 100, perYear: 7 });
      const summary = (await workers.client.workflow.execute(exportRunWorkflow, {
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
            windowSize: 4,
            apiTaskQueue: workers.apiTaskQueue,
          },
        ],
      })) as ExportSummary;
      return {
        summary,
        runs: await runsOf(workers.client, `${runId}/pages`),
        script: exportScripts.get(runId)!,
      };
    };
    const id = randomUUID();
    const [once, continued] = await Promise.all([
      exportRun(plain, `can-export-plain-${id}`),
      exportRun(short, `can-export-short-${id}`),
    ]);
    expect(once.runs).toBe(1);
    expect(continued.runs).toBeGreaterThan(2);
    const committed = (s: typeof once.script) =>
      withoutTimes({ ...s.committed!, run: undefined, request: undefined });
    expect(committed(continued.script)).toEqual(committed(once.script));
    expect(continued.script.fetched).toHaveLength(new Set(continued.script.fetched).size);
    expect([...continued.script.fetched].sort()).toEqual([...once.script.fetched].sort());
    expect(continued.script.committed!.slices.reduce((sum, s) => sum + s.records, 0)).toBe(700);
    expect([...continued.script.finished].sort((a, b) => a - b)).toEqual(
      once.script.plan!.slices.map((s) => s.index),
    );
  });

  it('a posts stage that continues as new counts what it counts in one run, each prospect once', async () => {
    const posts = async (workers: MockedWorkers, runId: string) => {
      newExportScript(runId, { years: 1, perYear: 1 });
      const result = await workers.client.workflow.execute(exportPostsWorkflow, {
        workflowId: runId,
        taskQueue: workers.taskQueue,
        args: [
          {
            run: { runId, output: 'mem://out/' },
            total: 60,
            apiTaskQueue: workers.apiTaskQueue,
            windowSize: 4,
          },
        ],
      });
      return { result, runs: await runsOf(workers.client, runId), script: exportScripts.get(runId)! };
    };
    const id = randomUUID();
    const [once, continued] = await Promise.all([
      posts(plain, `can-posts-plain-${id}`),
      posts(short, `can-posts-short-${id}`),
    ]);
    expect(once.runs).toBe(1);
    expect(continued.runs).toBeGreaterThan(2);
    expect(withoutTimes(continued.result)).toEqual(withoutTimes(once.result));
    expect(continued.result).toMatchObject({ total: 60, records: 40, misses: 20, calls: 60 });
    expect([...continued.script.fetched].sort()).toEqual(
      Array.from({ length: 60 }, (_, i) => `posts ${i}`).sort(),
    );
  });
});
