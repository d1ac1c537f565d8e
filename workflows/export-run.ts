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
  executeChild,
  isCancellation,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { OFFSET_CAP } from '../contract/limits.js';
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
  SliceWork,
} from '../pipeline/export-types.js';
import { type RunLocation } from '../pipeline/run-types.js';
import { exportPagesWorkflow } from './export-pages.js';
import { exportPostsWorkflow } from './export-posts.js';
import {
  FATAL_ERRORS,
  STATS_FIELDS,
  DEFAULT_WINDOW,
  DEFAULT_PAGE_SIZE,
  prepareExport,
  commitExportRecords,
  commitExportPosts,
  commitExport,
  saveExportPlan,
  apiActivities,
  exportProgressQuery,
  newStage,
} from './export-shared.js';

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
