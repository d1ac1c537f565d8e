// The run of one search export: check the search, plan its slices with count probes (each one API
// activity under the shared rate budget), save the plan, fetch every page of every slice in a child
// workflow (a sliding window of page activities; cursor chains for slices no filter can split), then
// write the records table, optionally fetch each prospect's posts in a second child, and commit the
// manifest and `_SUCCESS`. A run started again after a failure reuses its saved plan and skips the
// slices it finished.
import {
  ActivityFailure,
  ApplicationFailure,
  ChildWorkflowFailure,
  condition,
  continueAsNew,
  defineQuery,
  executeChild,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { ExportActivities } from '../activities/export.js';
import { OFFSET_CAP } from '../contract/limits.js';
import { ACTIVITY_KINDS, activityOptions, isRetryable } from '../pipeline/attempts.js';
import { buildExportPlan } from '../pipeline/export-plan.js';
import {
  planSlices,
  type CountSlice,
  type MeasureSplit,
  type SlicePlan,
} from '../pipeline/export-slicing.js';
import type {
  ExportPlan,
  ExportPlanResult,
  ExportProgress,
  ExportRunWorkflowInput,
  ExportStageProgress,
  ExportSummary,
  PageFailure,
  PostsResult,
  PreparedExport,
  SliceOutcome,
  SliceWork,
} from '../pipeline/export-types.js';
import { QUERY_PROGRESS, type ApiRetryPolicy, type RunLocation } from '../pipeline/run-types.js';

/** Errors that stop the whole export: nothing else can succeed either. */
const FATAL_ERRORS = new Set([
  'AuthError',
  'InsufficientCreditsError',
  'ExportSpecError',
  'JobSpecError',
  'CursorUnsupportedError',
]);
/** Business filters whose split counts come from one `stats` call instead of a probe per value. */
const STATS_FIELDS = ['company_size', 'company_revenue'];

const DEFAULT_ATTEMPTS = ACTIVITY_KINDS.pageFetch.retry.maximumAttempts;
const DEFAULT_WINDOW = 64;
const DEFAULT_PAGE_SIZE = 100;
/** Page activities completed per workflow run before continuing as new. */
const UNITS_PER_GENERATION = 1_000;
/** Failures kept in detail; beyond this only counted (the failures table lists the first ones). */
const MAX_FAILURE_DETAILS = 1_000;

const { prepareExport } = proxyActivities<ExportActivities>(activityOptions('tablePlanning'));
const { commitExportRecords, commitExportPosts, commitExport } = proxyActivities<ExportActivities>(
  activityOptions('tableCommit'),
);
const { saveExportPlan, finishSlice } = proxyActivities<ExportActivities>(activityOptions('bookkeeping'));

// Calls to the service, one per activity on the API task queue (the shared rate budget): backoff for
// timeouts, 5xx and 429 (after its Retry-After); a call still failing is recorded.
function apiActivities(taskQueue: string, retry: ApiRetryPolicy = {}, callTimeoutMs = 60_000) {
  return proxyActivities<ExportActivities>(
    activityOptions('pageFetch', { taskQueue, retry, startToCloseTimeoutMs: callTimeoutMs }),
  );
}

export const exportProgressQuery = defineQuery<ExportProgress>(QUERY_PROGRESS);
export const exportStageProgressQuery = defineQuery<ExportStageProgress>(QUERY_PROGRESS);

function newStage(stage: string): ExportStageProgress {
  const now = Date.now();
  return {
    stage,
    totalBatches: 0,
    doneBatches: 0,
    failedBatches: 0,
    inFlight: 0,
    records: 0,
    misses: 0,
    calls: 0,
    startedAt: now,
    updatedAt: now,
  };
}

interface FailureInfo {
  type: string;
  message: string;
  retriedOut: boolean;
  failure: ApplicationFailure | undefined;
}

function failureInfo(error: unknown): FailureInfo {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  const app = cause instanceof ApplicationFailure ? cause : undefined;
  const type = app?.type ?? (cause instanceof Error ? cause.name : 'Error');
  const message = cause instanceof Error ? cause.message : String(cause);
  return {
    type,
    message: message.slice(0, 500),
    retriedOut: isRetryable(type),
    failure: app,
  };
}

function fatalFailure(info: FailureInfo): ApplicationFailure {
  return ApplicationFailure.create({ type: info.type, message: info.message, nonRetryable: true });
}

// ---- the run -------------------------------------------------------------------------------------

export async function exportRunWorkflow(
  input: ExportRunWorkflowInput,
): Promise<ExportSummary | ExportPlanResult> {
  const { apiTaskQueue, ...request } = input;
  const { workflowId } = workflowInfo();
  const run: RunLocation = { runId: request.runId, output: request.output };
  const startedAt = new Date().toISOString();
  const state: ExportProgress = {
    kind: 'export',
    runId: request.runId,
    target: request.target,
    stage: 'planning',
    children: {},
    stages: {},
    startedAt: Date.now(),
  };
  setHandler(exportProgressQuery, () => state);
  const api = apiActivities(apiTaskQueue, request.apiRetry, request.callTimeoutMs);

  try {
    const prepared = await prepareExport({ run, request });
    let probeCalls = 0;
    let plan = prepared.plan;
    if (!plan) {
      const planning = newStage('plan');
      state.stages.plan = planning;
      state.children.plan = workflowId;
      plan = await planExport(input, prepared, planning, api);
      probeCalls = planning.calls;
      if (!request.dryRun) await saveExportPlan({ run, plan });
    }
    state.slicing = {
      total: plan.total,
      sliceSum: plan.sliceSum,
      plannedRecords: plan.plannedRecords,
      plannedPages: plan.plannedPages,
      probes: plan.probes,
      slices: plan.slices.length,
      truncated: plan.slices.filter((s) => s.method === 'truncated').length,
      cursor: plan.slices.filter((s) => s.method === 'cursor').length,
    };
    if (request.dryRun) {
      state.stage = 'planned';
      return {
        kind: 'export-plan',
        runId: request.runId,
        target: request.target,
        plan,
        calls: {
          probes: plan.probes,
          pages: plan.plannedPages,
          posts: request.withPosts ? Math.min(plan.plannedRecords, request.size ?? plan.plannedRecords) : 0,
        },
      };
    }

    state.stage = 'fetching';
    const finished = new Set(prepared.done.map((d) => d.index));
    const work: SliceWork[] = plan.slices
      .filter((s) => !finished.has(s.index) && s.planned > 0)
      .map((s) => ({
        index: s.index,
        method: s.method,
        pages: s.pages,
        planned: s.planned,
        extendable: s.method === 'offset' && s.planned === Math.min(s.count, plan.cap),
      }));
    const pagesId = `${workflowId}/pages`;
    state.children.pages = pagesId;
    const pages =
      work.length > 0
        ? await executeChild(exportPagesWorkflow, {
            workflowId: pagesId,
            args: [
              {
                run,
                slices: work,
                apiTaskQueue,
                windowSize: request.windowSize ?? DEFAULT_WINDOW,
                cap: plan.cap,
                pageSize: plan.pageSize,
                ...(request.apiRetry ? { apiRetry: request.apiRetry } : {}),
                ...(request.callTimeoutMs ? { callTimeoutMs: request.callTimeoutMs } : {}),
              },
            ],
          })
        : { slices: [], failures: [], progress: { ...newStage('pages'), updatedAt: Date.now() } };
    state.stages.pages = pages.progress;
    const slices = [...prepared.done, ...pages.slices].sort((a, b) => a.index - b.index);

    state.stage = 'committing';
    const records = await commitExportRecords({
      run,
      ...(request.size !== undefined ? { limit: request.size } : {}),
      ...(request.withPosts ? { withPosts: true } : {}),
    });
    const failures: PageFailure[] = [...pages.failures];
    let posts: ExportSummary['posts'];
    let postsTable;
    if (request.withPosts) {
      let result: PostsResult | undefined;
      if (records.postIds > 0) {
        state.stage = 'posts';
        const postsId = `${workflowId}/posts`;
        state.children.posts = postsId;
        result = await executeChild(exportPostsWorkflow, {
          workflowId: postsId,
          args: [
            {
              run,
              total: records.postIds,
              apiTaskQueue,
              windowSize: request.windowSize ?? DEFAULT_WINDOW,
              ...(request.apiRetry ? { apiRetry: request.apiRetry } : {}),
              ...(request.callTimeoutMs ? { callTimeoutMs: request.callTimeoutMs } : {}),
            },
          ],
        });
        state.stages.posts = result.progress;
        failures.push(...result.failures);
      }
      state.stage = 'committing';
      posts = {
        prospects: records.postIds,
        records: result?.records ?? 0,
        misses: result?.misses ?? 0,
        calls: result?.calls ?? 0,
        failed: result?.failed ?? 0,
      };
      postsTable = await commitExportPosts({ run });
    }
    const stages = [state.stages.plan, pages.progress, state.stages.posts].filter(
      (s): s is ExportStageProgress => s !== undefined,
    );
    const summary = await commitExport({
      run,
      request,
      plan,
      slices,
      records,
      ...(posts ? { posts } : {}),
      ...(postsTable ? { postsTable } : {}),
      failures,
      stages,
      probeCalls,
      startedAt,
    });
    state.stage = summary.status;
    return summary;
  } catch (error) {
    if (isCancellation(error)) {
      state.stage = 'cancelled';
      throw error;
    }
    state.stage = 'failed';
    const cause =
      error instanceof ChildWorkflowFailure || error instanceof ActivityFailure ? error.cause : error;
    if (cause instanceof ApplicationFailure && cause.type && FATAL_ERRORS.has(cause.type)) {
      const message =
        cause.type === 'AuthError'
          ? `The Data Service rejected the API key (${cause.message}); the export was stopped. Check ENRICHFLOW_API_KEY and start it again: it resumes where it stopped.`
          : cause.type === 'InsufficientCreditsError'
            ? `The Data Service reports insufficient credits (${cause.message}); the export was stopped.`
            : cause.message;
      throw ApplicationFailure.create({ type: cause.type, nonRetryable: true, message });
    }
    throw error;
  }
}

/** Counts the search and splits it into slices under the cap (or takes the whole search when `size` fits). */
async function planExport(
  input: ExportRunWorkflowInput,
  prepared: PreparedExport,
  planning: ExportStageProgress,
  api: ReturnType<typeof apiActivities>,
): Promise<ExportPlan> {
  const run: RunLocation = { runId: input.runId, output: input.output };
  const cap = input.offsetCap ?? OFFSET_CAP;
  const pageSize = input.pageSize ?? DEFAULT_PAGE_SIZE;
  const tracked = async <T>(units: number, work: () => Promise<T>): Promise<T> => {
    planning.totalBatches += units;
    planning.inFlight += units;
    try {
      const result = await work();
      planning.doneBatches += units;
      planning.calls += 1;
      return result;
    } finally {
      planning.inFlight -= units;
      planning.updatedAt = Date.now();
    }
  };
  const count: CountSlice = (constraints) => tracked(1, () => api.probeCount({ run, constraints }));
  // Stats ignore `exclude`, so they can stand in for probes only when no ids are sent with requests.
  const measure: MeasureSplit | undefined =
    input.target === 'businesses' && !prepared.exclude.sent
      ? (parent, dimension, bounds) =>
          STATS_FIELDS.includes(dimension.field)
            ? tracked(1, () => api.measureStats({ run, constraints: parent, field: dimension.field, bounds }))
            : undefined
      : undefined;
  const headroom = prepared.exclude.sent ? 0 : prepared.exclude.ids;
  let sliced: SlicePlan;
  if (input.size !== undefined && input.size + headroom <= cap) {
    // The first `size` records of the whole search are within reach of offset pages: no slicing.
    const total = await count({});
    sliced = {
      total,
      slices: [{ constraints: {}, count: total, oversize: false }],
      probes: 1,
      rejected: [],
      probeBudgetReached: false,
    };
  } else {
    sliced = await planSlices(
      {
        cap,
        dimensions: prepared.dimensions,
        ...(input.maxProbes ? { maxProbes: input.maxProbes } : {}),
        ...(measure ? { measure } : {}),
      },
      count,
    );
  }
  return buildExportPlan(sliced, {
    target: input.target,
    cap,
    pageSize,
    cursor: input.cursor ?? true,
    ...(input.size !== undefined ? { limit: input.size } : {}),
    exclude: prepared.exclude,
    dimensions: prepared.dimensions,
    createdAt: new Date().toISOString(),
  });
}

// ---- pages ---------------------------------------------------------------------------------------

interface SliceState extends SliceOutcome {
  planned: number;
  extendable: boolean;
  /** Offset: last page to fetch; next page to launch; pages in flight. */
  lastPage: number;
  nextPage: number;
  inFlight: number;
  /** Cursor: the next cursor (undefined before the first page), pages done, chain ended. */
  cursor?: string | null;
  seq: number;
  chainDone: boolean;
  finished: boolean;
}

/** Pages a slice is expected to take: its planned offset pages, or its cursor chain's length so far. */
function estimatedPages(slice: SliceState, pageSize: number): number {
  return slice.method === 'cursor'
    ? Math.max(slice.seq, Math.ceil(slice.planned / pageSize))
    : slice.lastPage;
}

export interface ExportPagesInput {
  run: RunLocation;
  slices: SliceWork[];
  apiTaskQueue: string;
  windowSize: number;
  cap: number;
  pageSize: number;
  apiRetry?: ApiRetryPolicy;
  callTimeoutMs?: number;
  carry?: {
    states: SliceState[];
    outcomes: SliceOutcome[];
    failures: PageFailure[];
    progress: ExportStageProgress;
  };
}

export interface ExportPagesResult {
  slices: SliceOutcome[];
  failures: PageFailure[];
  progress: ExportStageProgress;
}

/**
 * Every page of the given slices: offset pages in a sliding window across slices (front slices first,
 * so slices finish — and are marked done — in order), one page at a time for cursor chains. A slice
 * whose records grew while it was fetched gets its extra pages, up to the cap.
 */
export async function exportPagesWorkflow(input: ExportPagesInput): Promise<ExportPagesResult> {
  const { run, cap, pageSize } = input;
  const api = apiActivities(input.apiTaskQueue, input.apiRetry, input.callTimeoutMs);
  const attempts = input.apiRetry?.maximumAttempts ?? DEFAULT_ATTEMPTS;
  const states: SliceState[] =
    input.carry?.states ??
    input.slices.map((s) => ({
      index: s.index,
      method: s.method,
      planned: s.planned,
      extendable: s.extendable ?? false,
      pages: 0,
      failedPages: 0,
      records: 0,
      calls: 0,
      maxTotal: 0,
      overCap: false,
      lastPage: s.method === 'cursor' ? 0 : s.pages,
      nextPage: 1,
      inFlight: 0,
      seq: 0,
      chainDone: false,
      finished: false,
    }));
  const outcomes: SliceOutcome[] = [...(input.carry?.outcomes ?? [])];
  const failures: PageFailure[] = [...(input.carry?.failures ?? [])];
  const progress: ExportStageProgress = input.carry?.progress ?? newStage('pages');
  if (!input.carry) {
    progress.totalBatches = states.reduce((sum, s) => sum + estimatedPages(s, pageSize), 0);
  }
  setHandler(exportStageProgressQuery, () => progress);

  let inFlight = 0;
  let bookkeeping = 0;
  let completed = 0;
  let version = 0;
  let fatal: FailureInfo | undefined;

  const touch = () => {
    version += 1;
    progress.inFlight = inFlight;
    progress.updatedAt = Date.now();
  };

  const fail = (slice: SliceState, page: number, error: unknown) => {
    const info = failureInfo(error);
    const tries = info.retriedOut ? attempts : 1;
    slice.calls += tries;
    progress.calls += tries;
    if (FATAL_ERRORS.has(info.type)) {
      fatal ??= info;
      return;
    }
    slice.failedPages += 1;
    progress.failedBatches += 1;
    if (failures.length < MAX_FAILURE_DETAILS) {
      failures.push({
        stage: 'pages',
        slice: slice.index,
        page,
        errorType: info.type,
        message: info.message,
        attempts: tries,
      });
    }
  };

  /** Ends a slice whose pages are all done (or extends it when its records grew), and marks it done. */
  const settle = (slice: SliceState) => {
    if (slice.finished || slice.inFlight > 0) return;
    if (slice.method === 'cursor') {
      if (!slice.chainDone) return;
    } else {
      if (slice.nextPage <= slice.lastPage) return;
      if (slice.extendable && slice.failedPages === 0) {
        const wanted = Math.ceil(Math.min(slice.maxTotal, cap) / pageSize);
        if (wanted > slice.lastPage) {
          progress.totalBatches += wanted - slice.lastPage;
          slice.lastPage = wanted;
          return;
        }
      }
      // Offset totals stop at the cap: a slice planned under it that reports the cap has outgrown it.
      slice.overCap = slice.extendable && slice.planned < cap && slice.maxTotal >= cap;
    }
    slice.finished = true;
    const outcome: SliceOutcome = {
      index: slice.index,
      method: slice.method,
      pages: slice.pages,
      failedPages: slice.failedPages,
      records: slice.records,
      calls: slice.calls,
      maxTotal: slice.maxTotal,
      overCap: slice.overCap,
    };
    // A slice with failed pages is not marked done: a retry of the run fetches its missing pages.
    if (slice.failedPages > 0) {
      outcomes.push(outcome);
      return;
    }
    bookkeeping += 1;
    void finishSlice({ run, outcome })
      .then(() => outcomes.push(outcome))
      .catch((error: unknown) => {
        fatal ??= failureInfo(error);
      })
      .finally(() => {
        bookkeeping -= 1;
        touch();
      });
  };

  const launchPage = (slice: SliceState, page: number) => {
    slice.inFlight += 1;
    inFlight += 1;
    void api
      .fetchPage({ run, slice: slice.index, page })
      .then(
        (result) => {
          slice.pages += 1;
          slice.records += result.records;
          slice.calls += result.calls;
          slice.maxTotal = Math.max(slice.maxTotal, result.total);
          progress.doneBatches += 1;
          progress.records += result.records;
          progress.calls += result.calls;
        },
        (error: unknown) => fail(slice, page, error),
      )
      .finally(() => {
        slice.inFlight -= 1;
        inFlight -= 1;
        completed += 1;
        settle(slice);
        touch();
      });
  };

  const launchCursor = (slice: SliceState) => {
    const seq = slice.seq + 1;
    slice.inFlight += 1;
    inFlight += 1;
    void api
      .fetchCursorPage({ run, slice: slice.index, seq, cursor: slice.cursor ?? 'null' })
      .then(
        (result) => {
          slice.seq = seq;
          slice.pages += 1;
          slice.records += result.records;
          slice.calls += result.calls;
          slice.maxTotal = Math.max(slice.maxTotal, result.total);
          slice.cursor = result.nextCursor;
          slice.chainDone = result.nextCursor === null || slice.records >= slice.planned;
          // The chain's length shows as it goes: keep the total in step with it.
          const estimate = Math.ceil(slice.planned / pageSize);
          if (seq > estimate) progress.totalBatches += 1;
          else if (slice.chainDone) progress.totalBatches -= estimate - seq;
          progress.doneBatches += 1;
          progress.records += result.records;
          progress.calls += result.calls;
        },
        (error: unknown) => {
          // A chain cannot skip a page: the rest of the slice is lost, and recorded as failed.
          fail(slice, seq, error);
          slice.chainDone = true;
        },
      )
      .finally(() => {
        slice.inFlight -= 1;
        inFlight -= 1;
        completed += 1;
        settle(slice);
        touch();
      });
  };

  const nextLaunch = (): (() => void) | undefined => {
    for (const slice of states) {
      if (slice.finished) continue;
      if (slice.method === 'cursor') {
        if (slice.inFlight === 0 && !slice.chainDone) return () => launchCursor(slice);
        continue;
      }
      if (slice.nextPage <= slice.lastPage) {
        const page = slice.nextPage;
        slice.nextPage += 1;
        return () => launchPage(slice, page);
      }
    }
    return undefined;
  };

  const generationFull = () => completed >= UNITS_PER_GENERATION || workflowInfo().continueAsNewSuggested;
  // Slices carried over unfinished may already be complete (their last pages finished before the switch).
  for (const slice of states) settle(slice);

  for (;;) {
    while (!fatal && inFlight < input.windowSize && !generationFull()) {
      const launch = nextLaunch();
      if (!launch) break;
      launch();
    }
    touch();
    if (fatal) break;
    const pending = states.some((s) => !s.finished);
    if (inFlight === 0 && bookkeeping === 0 && (!pending || generationFull())) break;
    const seen = version;
    await condition(() => version !== seen || fatal !== undefined);
  }
  if (fatal) throw fatalFailure(fatal);
  const unfinished = states.filter((s) => !s.finished);
  if (unfinished.length > 0) {
    return await continueAsNew<typeof exportPagesWorkflow>({
      ...input,
      carry: { states: unfinished, outcomes, failures, progress },
    });
  }
  progress.inFlight = 0;
  progress.updatedAt = Date.now();
  return { slices: outcomes.sort((a, b) => a.index - b.index), failures, progress };
}

// ---- posts ---------------------------------------------------------------------------------------

export interface ExportPostsInput {
  run: RunLocation;
  /** Exported prospects, in the order of the posts plan files. */
  total: number;
  apiTaskQueue: string;
  windowSize: number;
  apiRetry?: ApiRetryPolicy;
  callTimeoutMs?: number;
  carry?: { next: number; failures: PageFailure[]; progress: ExportStageProgress };
}

/** One posts call per exported prospect, in a sliding window under the same rate budget as the pages. */
export async function exportPostsWorkflow(input: ExportPostsInput): Promise<PostsResult> {
  const { run } = input;
  const api = apiActivities(input.apiTaskQueue, input.apiRetry, input.callTimeoutMs);
  const attempts = input.apiRetry?.maximumAttempts ?? DEFAULT_ATTEMPTS;
  let next = input.carry?.next ?? 0;
  const failures: PageFailure[] = [...(input.carry?.failures ?? [])];
  const progress: ExportStageProgress = input.carry?.progress ?? {
    ...newStage('posts'),
    totalBatches: input.total,
  };
  setHandler(exportStageProgressQuery, () => progress);
  let inFlight = 0;
  let completed = 0;
  let version = 0;
  let fatal: FailureInfo | undefined;

  const launch = (index: number) => {
    inFlight += 1;
    void api
      .fetchPosts({ run, index })
      .then(
        (result) => {
          progress.doneBatches += 1;
          progress.records += result.records;
          progress.misses += result.misses;
          progress.calls += result.calls;
        },
        (error: unknown) => {
          const info = failureInfo(error);
          const tries = info.retriedOut ? attempts : 1;
          progress.calls += tries;
          if (FATAL_ERRORS.has(info.type)) {
            fatal ??= info;
            return;
          }
          progress.failedBatches += 1;
          if (failures.length < MAX_FAILURE_DETAILS) {
            failures.push({
              stage: 'posts',
              slice: null,
              page: index,
              errorType: info.type,
              message: info.message,
              attempts: tries,
            });
          }
        },
      )
      .finally(() => {
        inFlight -= 1;
        completed += 1;
        version += 1;
        progress.inFlight = inFlight;
        progress.updatedAt = Date.now();
      });
  };

  const generationFull = () => completed >= UNITS_PER_GENERATION || workflowInfo().continueAsNewSuggested;
  for (;;) {
    while (!fatal && inFlight < input.windowSize && next < input.total && !generationFull()) launch(next++);
    if (fatal) break;
    if (inFlight === 0 && (next >= input.total || generationFull())) break;
    const seen = version;
    await condition(() => version !== seen || fatal !== undefined);
  }
  if (fatal) throw fatalFailure(fatal);
  if (next < input.total) {
    return await continueAsNew<typeof exportPostsWorkflow>({ ...input, carry: { next, failures, progress } });
  }
  return {
    total: input.total,
    records: progress.records,
    misses: progress.misses,
    calls: progress.calls,
    failed: progress.failedBatches,
    failures,
    progress,
  };
}
