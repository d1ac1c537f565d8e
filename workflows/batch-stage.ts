// One stage of a run (matching, or one dataset): a sliding window of batch activities on the API task
// queue, where the rate budget lives. Rejected batches are split to isolate bad ids, failed batches are
// recorded rather than retried forever, and the stage continues as new before its history grows large.
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { PipelineActivities } from '../activities/index.js';
import {
  ACTIVITY_KINDS,
  activityOptions,
  isRetryable,
  NON_RETRYABLE_ERRORS,
  requestsOfFailure,
} from '../pipeline/attempts.js';
import { BatchQueue, type BatchQueueState } from '../pipeline/batch-queue.js';
import type {
  ApiRetryPolicy,
  BatchFailure,
  BatchOutcome,
  BatchRef,
  RunLocation,
  StagePlan,
  StageProgress,
  StageName,
  StageResult,
} from '../pipeline/run-types.js';
import {
  QUERY_PROGRESS,
  SIGNAL_RESUME,
  SIGNAL_STAGE_DRAINED,
  SIGNAL_STAGE_PAUSED,
} from '../pipeline/run-types.js';

/** Error types no retry can fix (pipeline/attempts.ts); the client's are among them (a unit test checks it). */
export const NON_RETRYABLE_API_ERRORS = NON_RETRYABLE_ERRORS;

/** Errors that stop the whole run instead of being recorded per batch. */
const FATAL_ERRORS = new Set(['AuthError']);
/** The service's answer when the key has no credits left: the stage pauses until it is resumed. */
const CREDITS_ERROR = 'InsufficientCreditsError';

// Calls to the service on the API task queue (where the rate budget lives), with the API kind's
// timeouts and backoff; Retry-After of a 429 becomes the next retry delay. After the last attempt the
// batch is recorded as failed.
function apiActivities(taskQueue: string, retry: ApiRetryPolicy = {}) {
  return proxyActivities<PipelineActivities>(activityOptions('apiCall', { taskQueue, retry }));
}

const { recordFailures } = proxyActivities<PipelineActivities>(activityOptions('bookkeeping'));

export const stageProgressQuery = defineQuery<StageProgress>(QUERY_PROGRESS);
/** Resumes a stage paused for credits (sent by the run workflow when an operator resumes the run). */
export const resumeSignal = defineSignal(SIGNAL_RESUME);
export interface StagePauseNotice {
  stage: StageName;
  paused: boolean;
  reason?: string;
}
/** A stage tells its run when it pauses for credits and when it goes on. */
export const stagePausedSignal = defineSignal<[StagePauseNotice]>(SIGNAL_STAGE_PAUSED);
/**
 * A stage tells its run when it has started its last batch, so the run can start the next stage while
 * this one's last calls are in flight (the rate budget stays busy and tables commit as stages end).
 */
export const stageDrainedSignal = defineSignal<[{ stage: StageName }]>(SIGNAL_STAGE_DRAINED);

export interface BatchStageInput {
  run: RunLocation;
  plan: StagePlan;
  apiTaskQueue: string;
  /** Batch activities in flight at once. */
  windowSize: number;
  /** Per-dataset `parameters` for the service. */
  parameters?: Record<string, unknown>;
  apiRetry?: ApiRetryPolicy;
  /** Run only these batches instead of the whole plan (a retry of failed batches). */
  explicitBatches?: BatchRef[];
  /** Also run the plan batches from this index on (a resume of a run stopped at budget)... */
  resumeFrom?: number;
  /** ...up to this one (exclusive); default the plan's end. */
  resumeTo?: number;
  /** Calls this stage may make; past it no batch starts and the stage returns what it left. */
  budget?: number;
  /** Take a batch's results from an earlier attempt of the run when it wrote them (a restarted run). */
  reuseResults?: boolean;
  /** State carried across continue-as-new. */
  carry?: StageCarry;
}

export interface StageCarry {
  queue: BatchQueueState;
  counters: Pick<
    StageProgress,
    'doneBatches' | 'failedBatches' | 'records' | 'misses' | 'calls' | 'startedAt'
  >;
  failureFiles: string[];
  generation: number;
}

/** Batches completed per workflow run before continuing as new, whatever the server suggests. */
const BATCHES_PER_GENERATION = 1_500;
/** Failures kept in memory before they are written to the object store. */
const FAILURE_FLUSH_SIZE = 200;

interface FailureDetails {
  items?: number;
}

function failureDetails(failure: ApplicationFailure): FailureDetails {
  const first: unknown = failure.details?.[0];
  return first && typeof first === 'object' ? first : {};
}

export async function batchStageWorkflow(input: BatchStageInput): Promise<StageResult> {
  const { run, plan } = input;
  const { callBatch } = apiActivities(input.apiTaskQueue, input.apiRetry);
  const attempts = input.apiRetry?.maximumAttempts ?? ACTIVITY_KINDS.apiCall.retry.maximumAttempts;
  const carry = input.carry;
  const planEnd = input.resumeTo ?? plan.totalBatches;
  const queue = new BatchQueue(
    planEnd,
    plan.batchesPerChunk,
    carry?.queue ??
      (input.explicitBatches || input.resumeFrom !== undefined
        ? { next: input.resumeFrom ?? planEnd, splits: input.explicitBatches ?? [] }
        : undefined),
  );
  const counters = carry?.counters ?? {
    doneBatches: 0,
    failedBatches: 0,
    records: 0,
    misses: 0,
    calls: 0,
    startedAt: Date.now(),
  };
  const failureFiles = [...(carry?.failureFiles ?? [])];
  const generation = carry?.generation ?? 0;
  const pendingFailures: BatchFailure[] = [];
  let inFlight = 0;
  let completedThisGeneration = 0;
  let fatal: ApplicationFailure | undefined;
  let paused: StageProgress['paused'];
  const budgetLeft = () => (input.budget === undefined ? Infinity : input.budget - counters.calls - inFlight);

  const tellRun = (notice: StagePauseNotice) => {
    const parent = workflowInfo().parent;
    if (!parent) return;
    // Best effort: the run only shows the pause; the stage's own state is what resumes.
    getExternalWorkflowHandle(parent.workflowId)
      .signal(stagePausedSignal, notice)
      .catch(() => undefined);
  };
  let drainedTold = false;
  const tellDrained = () => {
    const parent = workflowInfo().parent;
    if (drainedTold || !parent) return;
    drainedTold = true;
    // Best effort too: without it the run starts the next stage when this one ends.
    getExternalWorkflowHandle(parent.workflowId)
      .signal(stageDrainedSignal, { stage: plan.stage })
      .catch(() => undefined);
  };
  setHandler(resumeSignal, () => {
    if (!paused) return;
    paused = undefined;
    tellRun({ stage: plan.stage, paused: false });
  });

  const progress = (): StageProgress => ({
    stage: plan.stage,
    totalBatches: plan.totalBatches,
    ...counters,
    inFlight,
    updatedAt: Date.now(),
    ...(input.budget !== undefined ? { budget: input.budget } : {}),
    ...(paused ? { paused } : {}),
  });
  setHandler(stageProgressQuery, progress);

  const onSuccess = (outcome: BatchOutcome) => {
    counters.doneBatches += 1;
    counters.records += outcome.records;
    counters.misses += outcome.misses;
    counters.calls += outcome.calls;
  };

  const onFailure = (ref: BatchRef, error: unknown) => {
    const cause = error instanceof ActivityFailure ? error.cause : error;
    const app = cause instanceof ApplicationFailure ? cause : undefined;
    const errorType = app?.type ?? (cause instanceof Error ? cause.name : 'Error');
    const message = cause instanceof Error ? cause.message : String(cause);
    const retriedOut = !app || isRetryable(errorType);
    counters.calls += requestsOfFailure(error, retriedOut ? attempts : 1);
    if (errorType === CREDITS_ERROR) {
      // Not the batch's fault: it runs again once credits are back and the run is resumed.
      queue.requeue(ref);
      if (!paused) {
        paused = { reason: message, since: Date.now() };
        tellRun({ stage: plan.stage, paused: true, reason: message });
      }
      return;
    }
    if (app && FATAL_ERRORS.has(errorType)) {
      fatal ??= app;
      return;
    }
    if (errorType === 'ValidationError' && app) {
      const items = failureDetails(app).items ?? 1;
      if (queue.split(ref, items)) return;
    }
    counters.failedBatches += 1;
    pendingFailures.push({ batch: ref, errorType, message, attempts: retriedOut ? attempts : 1 });
  };

  const launch = (ref: BatchRef) => {
    inFlight += 1;
    void callBatch({
      run,
      stage: plan.stage,
      batch: ref,
      parameters: input.parameters,
      ...(plan.idPlan ? { idPlan: plan.idPlan } : {}),
      ...(input.reuseResults ? { reuse: true } : {}),
    })
      .then(onSuccess, (error: unknown) => onFailure(ref, error))
      .finally(() => {
        inFlight -= 1;
        completedThisGeneration += 1;
      });
  };

  const flushFailures = async () => {
    if (pendingFailures.length === 0) return;
    const batch = pendingFailures.splice(0, pendingFailures.length);
    const key = await recordFailures({
      run,
      stage: plan.stage,
      sequence: failureFiles.length,
      generation,
      failures: batch,
    });
    failureFiles.push(key);
  };

  const generationFull = () =>
    completedThisGeneration >= BATCHES_PER_GENERATION || workflowInfo().continueAsNewSuggested;

  for (;;) {
    while (
      !fatal &&
      !paused &&
      inFlight < input.windowSize &&
      queue.hasNext() &&
      !generationFull() &&
      budgetLeft() > 0
    ) {
      const ref = queue.take();
      if (ref) launch(ref);
    }
    if (fatal) break;
    if (!queue.hasNext() && inFlight > 0) tellDrained();
    if (inFlight === 0 && paused) {
      // Nothing in flight and no credits: wait for an operator (or a schedule) to resume the run.
      await flushFailures();
      await condition(() => paused === undefined);
      continue;
    }
    if (inFlight === 0 && (!queue.hasNext() || generationFull() || budgetLeft() <= 0)) break;
    const before = inFlight;
    await condition(() => inFlight < before || fatal !== undefined);
    if (pendingFailures.length >= FAILURE_FLUSH_SIZE) await flushFailures();
  }
  if (fatal) {
    // In-flight batches are abandoned: with a bad key or no credits they cannot succeed either.
    throw ApplicationFailure.create({
      type: fatal.type ?? 'AuthError',
      message: fatal.message,
      nonRetryable: true,
    });
  }
  await flushFailures();
  if (queue.hasNext() && budgetLeft() <= 0) {
    const left = queue.snapshot();
    return {
      ...progress(),
      failureFiles,
      unstarted: { next: left.next, end: planEnd, splits: left.splits, batches: queue.remaining() },
    };
  }
  if (queue.hasNext()) {
    return await continueAsNew<typeof batchStageWorkflow>({
      ...input,
      explicitBatches: undefined,
      resumeFrom: undefined,
      carry: { queue: queue.snapshot(), counters, failureFiles, generation: generation + 1 },
    });
  }
  return { ...progress(), failureFiles };
}
