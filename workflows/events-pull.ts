// An events pull run: the events of many businesses over a time range, fetched 40 ids per call on the
// API task queue (so it shares the deployment's rate budget with enrichment runs), committed as an
// `events` Parquet table with a manifest and `_SUCCESS`. A relative `since` (30d) is resolved at the
// run's start, so a schedule can start the same input every day. A batch that still fails after its
// retries fails the run; its finished batches are kept and reused when the run is started again.
import {
  ApplicationFailure,
  ActivityFailure,
  condition,
  continueAsNew,
  defineQuery,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { EventActivities } from '../activities/events.js';
import type { BusinessEventType } from '../contract/enums.js';
import { resolveTimeBound } from '../pipeline/time-bounds.js';
import { activityOptions } from '../pipeline/attempts.js';
import type {
  EventsPullCarry,
  EventsPullInput,
  EventsPullProgress,
  EventsPullSummary,
} from '../pipeline/events-types.js';
import { QUERY_PROGRESS } from '../pipeline/run-types.js';

const { planEventsPull } = proxyActivities<EventActivities>(activityOptions('tablePlanning'));
const { commitEventsPull } = proxyActivities<EventActivities>(activityOptions('tableCommit'));

/** One events call per activity on the API task queue, where the rate budget lives. */
function apiActivities(taskQueue: string) {
  return proxyActivities<EventActivities>(activityOptions('pageFetch', { taskQueue }));
}

export const eventsPullProgressQuery = defineQuery<EventsPullProgress>(QUERY_PROGRESS);

const DEFAULT_WINDOW = 8;
/** Batches fetched per workflow run before continuing as new. */
const BATCHES_PER_GENERATION = 1_000;

export async function eventsPullWorkflow(input: EventsPullInput): Promise<EventsPullSummary> {
  const { apiTaskQueue, carry: carried, ...request } = input;
  const runId = workflowInfo().workflowId;
  const run = { runId, output: request.output };
  const { fetchEventsBatch } = apiActivities(apiTaskQueue);
  const progress: EventsPullProgress = {
    runId,
    stage: 'planning',
    doneBatches: carried?.doneBatches ?? 0,
    inFlight: 0,
    events: carried?.events ?? 0,
    timestampFrom: carried?.timestampFrom ?? null,
    timestampTo: carried?.timestampTo ?? null,
    ...(carried ? { plan: carried.plan } : {}),
  };
  setHandler(eventsPullProgressQuery, () => progress);

  let carry: EventsPullCarry;
  if (carried) {
    carry = carried;
  } else {
    const now = Date.now();
    const timestampFrom = request.since ? resolveTimeBound(request.since, now) : null;
    const timestampTo = request.until ? resolveTimeBound(request.until, now) : null;
    progress.timestampFrom = timestampFrom;
    progress.timestampTo = timestampTo;
    const plan = await planEventsPull({
      run,
      ...(request.businessIds ? { businessIds: request.businessIds } : {}),
      ...(request.idsLocation ? { idsLocation: request.idsLocation } : {}),
    });
    progress.plan = plan;
    carry = {
      plan,
      timestampFrom,
      timestampTo,
      next: 0,
      doneBatches: 0,
      events: 0,
      calls: 0,
      startedAt: new Date(now).toISOString(),
    };
  }

  progress.stage = 'fetching';
  const { plan } = carry;
  const windowSize = request.windowSize ?? DEFAULT_WINDOW;
  let inFlight = 0;
  let launchedThisRun = 0;
  let failure: unknown;
  const launch = (global: number) => {
    inFlight += 1;
    progress.inFlight = inFlight;
    void fetchEventsBatch({
      run,
      batch: { chunk: Math.floor(global / plan.batchesPerChunk), index: global % plan.batchesPerChunk },
      eventTypes: request.eventTypes as BusinessEventType[],
      timestampFrom: carry.timestampFrom,
      timestampTo: carry.timestampTo,
    })
      .then(
        (outcome) => {
          carry.doneBatches += 1;
          carry.events += outcome.events;
          carry.calls += outcome.calls;
          progress.doneBatches = carry.doneBatches;
          progress.events = carry.events;
        },
        (error: unknown) => {
          failure ??= error;
        },
      )
      .finally(() => {
        inFlight -= 1;
        progress.inFlight = inFlight;
      });
  };
  const generationFull = () =>
    launchedThisRun >= BATCHES_PER_GENERATION || workflowInfo().continueAsNewSuggested;

  for (;;) {
    while (
      failure === undefined &&
      inFlight < windowSize &&
      carry.next < plan.totalBatches &&
      !generationFull()
    ) {
      launch(carry.next);
      carry.next += 1;
      launchedThisRun += 1;
    }
    if (inFlight === 0 && (failure !== undefined || carry.next >= plan.totalBatches || generationFull()))
      break;
    const before = inFlight;
    await condition(() => inFlight < before);
  }
  if (failure !== undefined) {
    const cause = failure instanceof ActivityFailure ? failure.cause : failure;
    const type = cause instanceof ApplicationFailure ? cause.type : undefined;
    throw ApplicationFailure.create({
      type: type ?? 'EventsPullFailed',
      nonRetryable: true,
      message: `events pull stopped: ${cause instanceof Error ? cause.message : 'a batch failed'}; start it again to resume (finished batches are kept)`,
    });
  }
  if (carry.next < plan.totalBatches) {
    return await continueAsNew<typeof eventsPullWorkflow>({ ...input, carry });
  }
  progress.stage = 'committing';
  const summary = await commitEventsPull({
    run,
    request,
    plan,
    timestampFrom: carry.timestampFrom,
    timestampTo: carry.timestampTo,
    calls: carry.calls,
    startedAt: carry.startedAt,
  });
  progress.stage = 'completed';
  return summary;
}
