// From a slicing to the fetch plan of a run: how each slice is fetched (offset pages, a cursor chain,
// or offset pages cut at the cap), how many pages, and where `size` stops the run. Pure, so the
// workflow and its unit tests share it.
import { describeConstraints, type Dimension, type SlicePlan } from './export-slicing.js';
import type { ExcludeInfo, ExportPlan, ExportSlice, ExportTarget } from './export-types.js';

export interface FetchPlanOptions {
  target: ExportTarget;
  cap: number;
  pageSize: number;
  cursor: boolean;
  /** `size`: records to stop after. */
  limit?: number;
  exclude: ExcludeInfo;
  dimensions: Dimension[];
  createdAt: string;
}

export function buildExportPlan(sliced: SlicePlan, options: FetchPlanOptions): ExportPlan {
  const { cap, pageSize } = options;
  // Ids removed only when writing still take room in the pages: fetch that many more.
  const headroom = options.exclude.sent ? 0 : options.exclude.ids;
  let remaining = options.limit === undefined ? Number.POSITIVE_INFINITY : options.limit + headroom;
  const slices: ExportSlice[] = sliced.slices.map((slice, index) => {
    const method = !slice.oversize ? 'offset' : options.cursor ? 'cursor' : 'truncated';
    const reachable = method === 'cursor' ? slice.count.n : Math.min(slice.count.n, cap);
    const planned = Math.max(0, Math.min(reachable, remaining));
    remaining -= planned;
    return {
      index,
      constraints: slice.constraints,
      description: describeConstraints(options.dimensions, slice.constraints),
      count: slice.count.n,
      exact: slice.count.exact,
      method,
      planned,
      pages: Math.ceil(planned / pageSize),
    };
  });
  return {
    target: options.target,
    pageSize,
    cap,
    total: sliced.total,
    sliceSum: sliced.slices.reduce((sum, s) => sum + s.count.n, 0),
    slices,
    dimensions: options.dimensions,
    probes: sliced.probes,
    rejected: sliced.rejected,
    probeBudgetReached: sliced.probeBudgetReached,
    plannedRecords: slices.reduce((sum, s) => sum + s.planned, 0),
    plannedPages: slices.reduce((sum, s) => sum + s.pages, 0),
    exclude: options.exclude,
    createdAt: options.createdAt,
  };
}

/** Records matched by the search that truncated slices leave out. */
export function truncatedRecords(plan: ExportPlan): number {
  return plan.slices
    .filter((s) => s.method === 'truncated')
    .reduce((sum, s) => sum + Math.max(0, s.count - plan.cap), 0);
}
