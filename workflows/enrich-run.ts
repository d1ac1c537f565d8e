// The run of one enrichment job: plan the input, match rows to ids, enrich every requested dataset in
// its own child workflow, then commit Parquet tables, the manifest and `_SUCCESS`. The workflow id is
// the run id, derived from the job name and run key, so starting the same run twice does the work once.
// A retry re-runs only the batches a finished run recorded as failed, and commits the run again.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
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
import { batchStageWorkflow, resumeSignal, stagePausedSignal } from './batch-stage.js';
import type {
  BatchRef,
  EnrichPlanSummary,
  EnrichRunInput,
  PlanSummary,
  RunLocation,
  RunProgress,
  RunSummary,
  StageName,
  StagePlan,
  StageResult,
} from '../pipeline/run-types.js';
import { QUERY_PROGRESS } from '../pipeline/run-types.js';

// Planning and committing read and write whole tables: long, so they heartbeat, and a retry starts over
// (their outputs have deterministic names, so a retry overwrites rather than duplicates).
const { planRun, buildEnrichPlan, planRetry } = proxyActivities<PipelineActivities>(
  activityOptions('tablePlanning'),
);
const { commitTable, commitRun } = proxyActivities<PipelineActivities>(activityOptions('tableCommit'));

export const runProgressQuery = defineQuery<RunProgress>(QUERY_PROGRESS);

export interface EnrichRunWorkflowInput extends EnrichRunInput {
  /** Task queue of the API activities (where the shared rate budget is enforced). */
  apiTaskQueue: string;
  /**
   * A new attempt of a run that failed or was cancelled: batches whose results an earlier attempt
   * wrote are taken from them instead of being called again (the same run id plans the same batches).
   */
  reuseResults?: boolean;
}

export interface RetryRunWorkflowInput {
  /** The run whose failed batches are re-run; its output is updated in place. */
  previous: RunSummary;
  apiTaskQueue: string;
  /** Call budget of this retry (a run stopped at budget resumes under a new one). */
  maxCalls?: number;
}

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
function budgetAfter(budget: number | undefined, stage: StageResult): number | undefined {
  return budget === undefined ? undefined : Math.max(0, budget - stage.calls);
}

/** Progress state and stage execution shared by a run and its retries. */
function createRunTracker(
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

  /** Runs dataset stages side by side; the first fatal failure (bad key, no credits) cancels the others. */
  const runDatasets = async (
    work: { plan: StagePlan; batches?: BatchRef[]; resumeFrom?: number; resumeTo?: number }[],
    budget?: number,
  ): Promise<StageResult[]> =>
    CancellationScope.cancellable(async () => {
      const budgets = splitBudget(
        budget,
        work.map(({ plan, batches, resumeFrom, resumeTo }) =>
          resumeFrom !== undefined || batches
            ? (batches?.length ?? 0) + Math.max(0, (resumeTo ?? plan.totalBatches) - (resumeFrom ?? 0))
            : plan.totalBatches,
        ),
      );
      const all = work.map(({ plan, batches, resumeFrom, resumeTo }, i) =>
        runStage(plan, {
          ...(batches ? { explicitBatches: batches } : {}),
          ...(resumeFrom !== undefined ? { resumeFrom } : {}),
          ...(resumeTo !== undefined ? { resumeTo } : {}),
          ...(budgets ? { budget: budgets[i] as number } : {}),
        }),
      );
      try {
        return await Promise.all(all);
      } catch (error) {
        CancellationScope.current().cancel();
        await Promise.allSettled(all);
        throw error;
      }
    });

  const commit = async (
    plan: PlanSummary,
    enrichPlan: EnrichPlanSummary,
    stages: StageResult[],
    startedAt: string,
    retries?: string[],
  ): Promise<RunSummary> => {
    state.stage = 'committing';
    const datasetTables = await Promise.all(request.datasets.map((dataset) => commitTable({ run, dataset })));
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

  return { state, run, runStage, runDatasets, commit, explain };
}

export async function enrichRunWorkflow(input: EnrichRunWorkflowInput): Promise<RunSummary> {
  const { apiTaskQueue, reuseResults, ...request } = input;
  const runId = workflowInfo().workflowId;
  const tracker = createRunTracker(runId, request, apiTaskQueue, reuseResults);
  const { state, run } = tracker;
  const startedAt = new Date().toISOString();
  try {
    const plan = await planRun({ run, input: request.input, datasets: request.datasets });
    state.plan = plan;
    const stages: StageResult[] = [];
    let budget = request.maxCalls;
    if (plan.match) {
      state.stage = 'matching';
      const matched = await tracker.runStage(plan.match, budget !== undefined ? { budget } : {});
      stages.push(matched);
      budget = budgetAfter(budget, matched);
    }
    state.stage = 'enriching';
    const enrichPlan = await buildEnrichPlan({
      run,
      datasets: request.datasets,
      idsProvided: plan.idsProvided,
      ...(plan.entity ? { entity: plan.entity } : {}),
      ...(request.maxAgeMs !== undefined ? { maxAgeMs: request.maxAgeMs, asOf: Date.parse(startedAt) } : {}),
    });
    state.enrichPlan = enrichPlan;
    stages.push(
      ...(await tracker.runDatasets(
        enrichPlan.stages.map((stagePlan) => ({ plan: stagePlan })),
        budget,
      )),
    );
    return await tracker.commit(plan, enrichPlan, stages, startedAt);
  } catch (error) {
    throw tracker.explain(error);
  }
}

/** Adds a retry's stage figures to the run's: calls and records accumulate, failures are the retry's. */
function mergeStage(
  before: StageResult | undefined,
  retry: StageResult | undefined,
): StageResult | undefined {
  if (!before) return retry;
  if (!retry) return before;
  // What the first run left unstarted was taken up by the retry: only the retry's own remainder counts.
  const { unstarted: _taken, ...earlier } = before;
  return {
    ...earlier,
    // A retry's plan can be longer: rows matched in it bring batches for their new ids.
    totalBatches: Math.max(before.totalBatches, retry.totalBatches),
    doneBatches: before.doneBatches + retry.doneBatches,
    failedBatches: retry.failedBatches,
    records: before.records + retry.records,
    misses: before.misses + retry.misses,
    calls: before.calls + retry.calls,
    updatedAt: retry.updatedAt,
    failureFiles: retry.failureFiles,
    ...(retry.unstarted ? { unstarted: retry.unstarted } : {}),
  };
}

export async function retryRunWorkflow(input: RetryRunWorkflowInput): Promise<RunSummary> {
  const { previous } = input;
  const retryId = workflowInfo().workflowId;
  const tracker = createRunTracker(previous.runId, previous.request, input.apiTaskQueue);
  const { state, run } = tracker;
  state.plan = previous.plan;
  state.enrichPlan = previous.enrichPlan;
  try {
    const failed = await planRetry({ run, retryId });
    const retried = new Map<StageName, StageResult>();
    // A stage's pending work: its failed batches, and what a budget left unstarted.
    const pendingOf = (stage: StageName) => {
      const unstarted = previous.stages.find((s) => s.stage === stage)?.unstarted;
      return {
        batches: [...(failed.find((p) => p.stage === stage)?.batches ?? []), ...(unstarted?.splits ?? [])],
        ...(unstarted ? { resumeFrom: unstarted.next, resumeTo: unstarted.end } : {}),
      };
    };
    let budget = input.maxCalls;
    let enrichPlan = previous.enrichPlan;
    let appended: { stage: StageName; batches: BatchRef[] }[] = [];
    const matchStage = previous.plan.match?.stage ?? 'match';
    const pendingMatch = pendingOf(matchStage);
    if (previous.plan.match && (pendingMatch.batches.length > 0 || pendingMatch.resumeFrom !== undefined)) {
      state.stage = 'matching';
      const matched = await tracker.runStage(previous.plan.match, {
        explicitBatches: pendingMatch.batches,
        ...(pendingMatch.resumeFrom !== undefined
          ? { resumeFrom: pendingMatch.resumeFrom, resumeTo: pendingMatch.resumeTo }
          : {}),
        ...(budget !== undefined ? { budget } : {}),
      });
      retried.set(matchStage, matched);
      budget = budgetAfter(budget, matched);
      // Rows matched now bring ids the first run never enriched: plan batches for those alone.
      const extended = await buildEnrichPlan({
        run,
        datasets: previous.request.datasets,
        idsProvided: previous.plan.idsProvided,
        ...(previous.plan.entity ? { entity: previous.plan.entity } : {}),
        append: true,
        ...(previous.request.maxAgeMs !== undefined
          ? { maxAgeMs: previous.request.maxAgeMs, asOf: Date.parse(previous.startedAt) }
          : {}),
      });
      enrichPlan = {
        matchedRows: extended.matchedRows,
        unmatchedRows: extended.unmatchedRows,
        uniqueIds: extended.uniqueIds,
        stages: extended.stages,
      };
      appended = extended.appended;
      state.enrichPlan = enrichPlan;
    }
    state.stage = 'enriching';
    const work = enrichPlan.stages
      .map((plan) => {
        const pending = pendingOf(plan.stage);
        // Batches appended for newly matched ids lie past the range a resume works through.
        const added = appended.find((p) => p.stage === plan.stage)?.batches ?? [];
        return { plan, ...pending, batches: [...pending.batches, ...added] };
      })
      .filter((w) => w.batches.length > 0 || w.resumeFrom !== undefined);
    for (const result of await tracker.runDatasets(work, budget)) retried.set(result.stage, result);
    const stageNames: StageName[] = [
      ...(previous.plan.match ? [previous.plan.match.stage] : []),
      ...previous.request.datasets,
    ];
    const stages = stageNames
      .map((name) =>
        mergeStage(
          previous.stages.find((s) => s.stage === name),
          retried.get(name),
        ),
      )
      .filter((s): s is StageResult => s !== undefined);
    return await tracker.commit(previous.plan, enrichPlan, stages, previous.startedAt, [
      ...(previous.retries ?? []),
      retryId,
    ]);
  } catch (error) {
    throw tracker.explain(error);
  }
}
