// Inputs, results and progress shapes of search exports (`enrichflow prospects` / `businesses`), shared
// by the export workflows, their activities and the CLI. They travel through Temporal history: filters,
// slice bounds, keys and counts only — never records, and never the exclude list itself.
import type { Constraints, Count, Dimension, RejectedSplit } from './export-slicing.js';
import type { ApiRetryPolicy, RunLocation, TableSummary } from './run-types.js';

export type ExportTarget = 'prospects' | 'businesses';

export interface ExportRunInput {
  /** Id of the run, and the name of its folder under `output`. */
  runId: string;
  jobName: string;
  runKey: string;
  target: ExportTarget;
  /** The search's `filters`, already checked against the contract. */
  filters: Record<string, unknown>;
  /** Output prefix (`s3://bucket/prefix/` or a local folder); the run writes under `<output>/<runId>/`. */
  output: string;
  /** Stop after this many records. */
  size?: number;
  /** A file of ids to leave out, one per line (`s3://…` or a path the worker can read). */
  exclude?: string;
  /** Also fetch each exported prospect's network posts record (prospects only). */
  withPosts?: boolean;
  /** Plan only: count and slice, print the plan, fetch no pages, write no output. */
  dryRun?: boolean;
  /** Records per page; default 100 (the prospect maximum). */
  pageSize?: number;
  /** Deepest offset a query reaches; default 60,000 (the service's cap). Tests lower it. */
  offsetCap?: number;
  /** Use the service's cursor mode for exact counts and for slices no filter can split; default true. */
  cursor?: boolean;
  /** Filters the planner may split on, in order; default every suitable one. */
  splitBy?: string[];
  /** Count calls planning may make; default 2,000. */
  maxProbes?: number;
  /** API activities in flight; default 64. */
  windowSize?: number;
  apiRetry?: ApiRetryPolicy;
  /** Longest one API activity may run before it is tried again, ms; default 60,000. */
  callTimeoutMs?: number;
}

export interface ExportRunWorkflowInput extends ExportRunInput {
  /** Task queue of the API activities (where the shared rate budget is enforced). */
  apiTaskQueue: string;
}

/**
 * How a slice is fetched: `offset` pages in parallel; `cursor`, a chain of cursor pages for a slice
 * no filter could split under the cap; `truncated`, offset pages up to the cap when cursor mode is off
 * — the rest of that slice is missing, and the summary and manifest say so.
 */
export type SliceMethod = 'offset' | 'cursor' | 'truncated';

export interface ExportSlice {
  index: number;
  constraints: Constraints;
  description: string;
  /** Records the slice holds, as counted while planning. */
  count: number;
  exact: boolean;
  method: SliceMethod;
  /** Records this run fetches of it (less than `count` when truncated or cut by `size`). */
  planned: number;
  /** Offset pages planned; for cursor slices, the pages expected. */
  pages: number;
}

export interface ExportPlan {
  target: ExportTarget;
  pageSize: number;
  cap: number;
  /** The whole search's count (at least `n` when not exact). */
  total: Count;
  /** Sum of the slices' counts: equals `total.n` for a complete plan. */
  sliceSum: number;
  slices: ExportSlice[];
  dimensions: Dimension[];
  probes: number;
  rejected: RejectedSplit[];
  probeBudgetReached: boolean;
  plannedRecords: number;
  plannedPages: number;
  exclude: ExcludeInfo;
  createdAt: string;
}

export interface ExcludeInfo {
  /** Distinct ids in the exclude file. */
  ids: number;
  /** Sent with every request (at most 1,000, the service's limit); otherwise removed when writing. */
  sent: boolean;
}

/** Prepared run: the dimensions to plan with, and what an earlier attempt of the run already did. */
export interface PreparedExport {
  dimensions: Dimension[];
  exclude: ExcludeInfo;
  /** The saved plan of an earlier attempt, reused so a resumed run fetches the same slices. */
  plan?: ExportPlan;
  /** Slices an earlier attempt finished (their pages are all written). */
  done: SliceOutcome[];
}

/** A slice as the pages workflow fetches it. */
export interface SliceWork {
  index: number;
  method: SliceMethod;
  /** Offset pages to fetch (1..pages); for cursor slices unused. */
  pages: number;
  /** Records wanted (cursor chains stop there). */
  planned: number;
  /** Offset slices fetched whole: when records were added meanwhile, their extra pages are fetched too. */
  extendable?: boolean;
}

export interface SliceOutcome {
  index: number;
  method: SliceMethod;
  pages: number;
  failedPages: number;
  records: number;
  calls: number;
  /** Largest `total_results` a page reported: more than planned means records were added meanwhile. */
  maxTotal: number;
  /** The slice grew past the cap while fetching: offset pages cannot reach its end. */
  overCap: boolean;
}

export interface PageFailure {
  /** `pages`: a page of a slice; `posts`: one prospect's posts call. */
  stage: 'pages' | 'posts';
  /** The slice of a failed page; null for posts. */
  slice: number | null;
  /** Page number (offset), position in the cursor chain, or the prospect's position (posts). */
  page: number;
  errorType: string;
  message: string;
  attempts: number;
}

/** What `runs watch` shows per stage; the same fields as an enrichment stage's progress. */
export interface ExportStageProgress {
  stage: string;
  totalBatches: number;
  doneBatches: number;
  failedBatches: number;
  inFlight: number;
  records: number;
  misses: number;
  calls: number;
  startedAt: number;
  updatedAt: number;
}

export type ExportStage =
  | 'planning'
  | 'fetching'
  | 'posts'
  | 'committing'
  | 'completed'
  | 'completed_with_failures'
  | 'completed_truncated'
  | 'planned'
  | 'failed'
  | 'cancelled';

export interface ExportProgress {
  kind: 'export';
  runId: string;
  target: ExportTarget;
  stage: ExportStage;
  /** Child workflow ids by stage, as `runs watch` expects of any run. */
  children: Record<string, string>;
  stages: Record<string, ExportStageProgress>;
  slicing?: Pick<ExportPlan, 'total' | 'sliceSum' | 'plannedRecords' | 'plannedPages' | 'probes'> & {
    slices: number;
    truncated: number;
    cursor: number;
  };
  startedAt: number;
}

export interface ExportCounts {
  /** The search's full count (at least this many when `searchTotalExact` is false). */
  searchTotal: number;
  searchTotalExact: boolean;
  sliceSum: number;
  /** Records in the fetched pages, duplicates included. */
  fetched: number;
  duplicates: number;
  excluded: number;
  /** Rows of the output table. */
  written: number;
  truncatedSlices: number;
  /** Records of truncated slices beyond the cap: matched by the search, not in the output. */
  missingFromTruncated: number;
  failedPages: number;
  calls: number;
  probes: number;
}

export interface ExportSummary {
  kind: 'export';
  runId: string;
  jobName: string;
  target: ExportTarget;
  request: ExportRunInput;
  status: 'completed' | 'completed_with_failures' | 'completed_truncated';
  outputPrefix: string;
  manifestKey: string;
  plan: ExportPlan;
  slices: SliceOutcome[];
  counts: ExportCounts;
  posts?: { prospects: number; records: number; misses: number; calls: number; failed: number };
  stages: ExportStageProgress[];
  tables: TableSummary[];
  /** One line per problem an operator must know about (truncation, records added meanwhile, failures). */
  warnings: string[];
  startedAt: string;
  finishedAt: string;
}

/** What a dry run returns: the plan, and the calls the run would make. */
export interface ExportPlanResult {
  kind: 'export-plan';
  runId: string;
  target: ExportTarget;
  plan: ExportPlan;
  calls: { probes: number; pages: number; posts: number };
}

export interface ExportRecordsResult {
  table: TableSummary;
  fetched: number;
  duplicates: number;
  excluded: number;
  written: number;
  /** Prospect ids queued for posts (0 without `withPosts`). */
  postIds: number;
}

export interface PostsResult {
  total: number;
  records: number;
  misses: number;
  calls: number;
  failed: number;
  failures: PageFailure[];
  progress: ExportStageProgress;
}

export type { RunLocation };
