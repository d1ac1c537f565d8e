// What a run and its retries share: the progress a run reports, its stages run as child workflows
// under one call budget, and the commit of its tables, manifest and `_SUCCESS`.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  condition,
  defineQuery,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { PipelineActivities } from '../activities/index.js';
import { activityOptions } from '../pipeline/attempts.js';
import { batchStageWorkflow, resumeSignal, stageDrainedSignal, stagePausedSignal } from './batch-stage.js';
import type {
  BatchRef,
  EnrichDataset,
  EnrichPlanSummary,
  EnrichRunInput,
  PlanSummary,
  RunLocation,
  RunProgress,
  RunSummary,
  StageName,
  StagePlan,
  StageResult,
  TableSummary,
} from '../pipeline/run-types.js';
import { QUERY_PROGRESS } from '../pipeline/run-types.js';

const { commitTable, commitRun } = proxyActivities<PipelineActivities>(activityOptions('tableCommit'));

export const runProgressQuery = defineQuery<RunProgress>(QUERY_PROGRESS);

export function stageWorkflowId(workflowId: string, stage: StageName): string {
  return `${workflowId}/${stage}`;
}

const DEFAULT_WINDOW = 32;

/**
 * Shares a call budget among stages that run side by side, in proportion to their batches (the
 * remainder goes to the first stages), so that together they stop at the budget.
 */
export function splitBudget(budget: number | undefined, batches: number[]): number[] | undefined {
  if (budget === undefined) return undefined;
  const left = Math.max(0, budget);
  const total = batches.reduce((sum, b) => sum + b, 0);
  if (total === 0) return batches.map(() => 0);
  const shares = batches.map((b) => Math.floor((left * b) / total));
  let rest = left - shares.reduce((sum, s) => sum + s, 0);
  for (let i = 0; rest > 0 && i < shares.length; i += 1, rest -= 1) shares[i] = (shares[i] as number) + 1;
  return shares;
}

/** What a budget has left after a stage's calls. */
export function budgetAfter(budget: number | undefined, stage: StageResult): number | undefined {
  return budget === undefined ? undefined : Math.max(0, budget - stage.calls);
}

/** The work of one dataset stage: its plan, and for a retry the batches and range to run. */
export interface StageWork {
  plan: StagePlan;
  batches?: BatchRef[];
  resumeFrom?: number;
  resumeTo?: number;
}

/** A dataset stage that ended, and its table as committed then. */
export interface DatasetDone {
  result: StageResult;
  table: TableSummary;
}

/** Progress state and stage execution shared by a run and its retries. */
export function createRunTracker(
  runId: string,
  request: EnrichRunInput,
  apiTaskQueue: string,
  reuseResults = false,
) {
  const { workflowId } = workflowInfo();
  const state: RunProgress = { runId, stage: 'planning', children: {}, stages: {}, startedAt: Date.now() };
  setHandler(runProgressQuery, () => state);
  const run: RunLocation = { runId, output: request.output };

  // A stage paused for credits tells the run, so `runs watch` and `runs show` say what to do; resuming the
  // run resumes every stage still running.
  let stageBeforePause: RunProgress['stage'] = state.stage;
  setHandler(stagePausedSignal, ({ stage, paused, reason }) => {
    if (paused) {
      if (!state.paused) stageBeforePause = state.stage;
      state.paused = { stage, reason: reason ?? 'insufficient credits', since: Date.now() };
      state.stage = 'paused';
    } else if (state.paused?.stage === stage) {
      state.paused = undefined;
      state.stage = stageBeforePause;
    }
  });
  setHandler(resumeSignal, async () => {
    const running = Object.entries(state.children).filter(([stage]) => !state.stages[stage as StageName]);
    await Promise.all(
      running.map(([, childId]) =>
        getExternalWorkflowHandle(childId)
          .signal(resumeSignal)
          .catch(() => undefined),
      ),
    );
  });

  const runStage = async (
    plan: StagePlan,
    options: { explicitBatches?: BatchRef[]; resumeFrom?: number; resumeTo?: number; budget?: number } = {},
  ): Promise<StageResult> => {
    const { explicitBatches, resumeFrom, resumeTo, budget } = options;
    const childId = stageWorkflowId(workflowId, plan.stage);
    state.children[plan.stage] = childId;
    const result = await executeChild(batchStageWorkflow, {
      workflowId: childId,
      args: [
        {
          run,
          plan,
          apiTaskQueue,
          windowSize: request.windowSize ?? DEFAULT_WINDOW,
          ...(request.apiRetry ? { apiRetry: request.apiRetry } : {}),
          parameters:
            plan.stage === 'match' || plan.stage === 'prospect_match'
              ? undefined
              : request.parameters?.[plan.stage],
          ...(explicitBatches ? { explicitBatches } : {}),
          ...(resumeFrom !== undefined ? { resumeFrom } : {}),
          ...(resumeTo !== undefined ? { resumeTo } : {}),
          ...(budget !== undefined ? { budget } : {}),
          ...(reuseResults ? { reuseResults } : {}),
        },
      ],
    });
    state.stages[plan.stage] = result;
    return result;
  };

  // Stages that have started their last batch: the next stage of a chain may start.
  const drained = new Set<StageName>();
  setHandler(stageDrainedSignal, ({ stage }) => void drained.add(stage));

  /** Until a stage has started its last batch, or has ended however it ended. */
  const untilDrained = async (stage: StageName, running: Promise<unknown>): Promise<void> => {
    let ended = false;
    running.then(
      () => (ended = true),
      () => (ended = true),
    );
    await condition(() => ended || drained.has(stage));
  };

  /**
   * Dataset stages one after another, each starting as the one before starts its last batch: the rate
   * budget stays busy, and each table commits as its stage ends while later stages still call the
   * service (only the last table's commit is left for the end of the run). Each call budget is the
   * stage's share, in proportion to its batches, so that together they stop at the budget.
   */
  const chainDatasets = (
    work: StageWork[],
    budget?: number,
    /** A stage running elsewhere that the first of `work` follows, as if it were the chain's link before. */
    after?: { stage: StageName; running: Promise<unknown> },
  ): Promise<DatasetDone>[] => {
    const budgets = splitBudget(
      budget,
      work.map(({ plan, batches, resumeFrom, resumeTo }) =>
        resumeFrom !== undefined || batches
          ? (batches?.length ?? 0) + Math.max(0, (resumeTo ?? plan.totalBatches) - (resumeFrom ?? 0))
          : plan.totalBatches,
      ),
    );
    const chain: Promise<DatasetDone>[] = [];
    work.forEach(({ plan, batches, resumeFrom, resumeTo }, i) => {
      const before = i === 0 ? after?.running : chain[i - 1];
      const beforeStage = i === 0 ? after?.stage : work[i - 1]?.plan.stage;
      chain.push(
        (async () => {
          if (before && beforeStage) await untilDrained(beforeStage, before);
          const result = await runStage(plan, {
            ...(batches ? { explicitBatches: batches } : {}),
            ...(resumeFrom !== undefined ? { resumeFrom } : {}),
            ...(resumeTo !== undefined ? { resumeTo } : {}),
            ...(budgets ? { budget: budgets[i] as number } : {}),
          });
          const table = await commitTable({ run, dataset: plan.stage as EnrichDataset });
          return { result, table };
        })(),
      );
    });
    return chain;
  };

  /** Runs work to its end; the first fatal failure (bad key, no credits) cancels the rest. */
  const settle = async <T>(all: Promise<T>[]): Promise<T[]> => {
    try {
      return await Promise.all(all);
    } catch (error) {
      CancellationScope.current().cancel();
      await Promise.allSettled(all);
      throw error;
    }
  };

  /** Runs dataset stages as a chain (`chainDatasets`): their results and committed tables. */
  const runDatasets = async (
    work: StageWork[],
    budget?: number,
  ): Promise<{ results: StageResult[]; tables: TableSummary[] }> =>
    CancellationScope.cancellable(async () => {
      const done = await settle(chainDatasets(work, budget));
      return { results: done.map((d) => d.result), tables: done.map((d) => d.table) };
    });

  const commit = async (
    plan: PlanSummary,
    enrichPlan: EnrichPlanSummary,
    stages: StageResult[],
    startedAt: string,
    retries?: string[],
    /** Tables committed as their stages ended; the rest are committed now. */
    committed: TableSummary[] = [],
  ): Promise<RunSummary> => {
    state.stage = 'committing';
    const datasetTables = await Promise.all(
      request.datasets.map((dataset) => {
        const earlier = committed.find((t) => t.table === dataset);
        return earlier ? Promise.resolve(earlier) : commitTable({ run, dataset });
      }),
    );
    const summary = await commitRun({
      run,
      request,
      ...(retries ? { retries } : {}),
      jobName: request.jobName,
      plan,
      enrichPlan,
      stages,
      datasetTables,
      startedAt,
    });
    state.stage = summary.status;
    return summary;
  };

  /** Maps failures to what an operator should read: a run stopped by a bad key names it. */
  const explain = (error: unknown): unknown => {
    if (isCancellation(error)) {
      state.stage = 'cancelled';
      return error;
    }
    state.stage = 'failed';
    const cause =
      error instanceof ChildWorkflowFailure || error instanceof ActivityFailure ? error.cause : error;
    if (
      cause instanceof ApplicationFailure &&
      (cause.type === 'InputFileError' || cause.type === 'InvalidLocationError')
    ) {
      return ApplicationFailure.create({ type: cause.type, nonRetryable: true, message: cause.message });
    }
    // (A 403 for credits never gets here: the stage pauses instead.)
    if (cause instanceof ApplicationFailure && cause.type === 'AuthError') {
      return ApplicationFailure.create({
        type: cause.type,
        nonRetryable: true,
        message: `The Data Service rejected the API key (${cause.message}); the run was stopped. Check ENRICHFLOW_API_KEY and start the run again.`,
      });
    }
    return error;
  };

  return { state, run, runStage, chainDatasets, settle, runDatasets, commit, explain };
}
