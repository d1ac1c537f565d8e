// Inputs, results and progress shapes shared by the enrichment workflows, their activities and the CLI.
// Everything here travels through Temporal history, so it holds keys, counts and small summaries only:
// never input rows, records, or secrets.
import type { BulkDataset } from '../contract/datasets.js';

/**
 * The prospect datasets a people run can produce, enriched by `prospect_id`. The people's posts are
 * `prospect_network_posts`: `network_posts` is the business dataset of company runs and, in a people run,
 * of the employers (spelled `business_network_posts` there, since the bare name is ambiguous).
 */
export const PEOPLE_DATASETS = ['profiles', 'contacts_information', 'prospect_network_posts'] as const;
export type PeopleDataset = (typeof PEOPLE_DATASETS)[number];

export function isPeopleDataset(value: string): value is PeopleDataset {
  return (PEOPLE_DATASETS as readonly string[]).includes(value);
}

/** The service's name of a prospect dataset (`/v1/prospects/<name>/bulk_enrich`). */
export function prospectDatasetOf(
  dataset: PeopleDataset,
): 'profiles' | 'contacts_information' | 'network_posts' {
  return dataset === 'prospect_network_posts' ? 'network_posts' : dataset;
}

/** In a people run, the name of the employers' posts: `network_posts` alone could mean either. */
export const EMPLOYER_POSTS_ALIAS = 'business_network_posts';

/**
 * The business datasets of a people run: its employers', enriched by the business id the input row or
 * the person's profile gives.
 */
export function employerDatasets(
  datasets: readonly EnrichDataset[],
  entity: InputEntity | undefined,
): EnrichDataset[] {
  return entity === 'prospects' ? datasets.filter((d) => !isPeopleDataset(d)) : [];
}

/**
 * The entity a run plans its input as: as given, else what its datasets enrich (a company list with a
 * contact email column stays a company list); undefined leaves it to the columns.
 */
export function runEntity(
  given: InputEntity | undefined,
  datasets: readonly string[],
): InputEntity | undefined {
  if (given) return given;
  if (datasets.length === 0) return undefined;
  return datasets.some(isPeopleDataset) ? 'prospects' : 'businesses';
}

/**
 * A dataset a run can produce: the twelve bulk datasets, plus hierarchies (one call per id), and for
 * people lists the prospect datasets.
 */
export type EnrichDataset = BulkDataset | 'company_hierarchies' | PeopleDataset;

/** The match fields of a business input row (issue 4: name, domain, url, network_url). */
export const MATCH_FIELDS = ['name', 'domain', 'url', 'network_url'] as const;
export type MatchField = (typeof MATCH_FIELDS)[number];

/**
 * The match fields of a people input row (issue 15): a work or personal email, a phone number, a
 * network profile address, or a full name with its company name.
 */
export const PROSPECT_MATCH_FIELDS = [
  'full_name',
  'company_name',
  'email',
  'phone_number',
  'network',
] as const;
export type ProspectMatchField = (typeof PROSPECT_MATCH_FIELDS)[number];

/** What the rows of an input are: companies (the default) or people. */
export type InputEntity = 'businesses' | 'prospects';
export const INPUT_ENTITIES: readonly InputEntity[] = ['businesses', 'prospects'];

/** A field an input column can be mapped to (`--map field=column`). */
export type InputField = MatchField | 'business_id' | ProspectMatchField | 'prospect_id';
// (In a people list, `business_id` is the person's employer.)

export interface InputSpec {
  /** `s3://bucket/key`, a local path, or a `file://` URL. */
  location: string;
  /** Taken from the extension when omitted. */
  format?: 'csv' | 'jsonl' | 'parquet';
  /** CSV delimiter; sniffed when omitted. */
  delimiter?: string;
  /** Explicit column for a field, overriding the built-in aliases (`company`, `website`, …). */
  columns?: Partial<Record<InputField, string>>;
  /** Companies or people; recognised from the columns when omitted. */
  entity?: InputEntity;
}

export interface EnrichRunInput {
  jobName: string;
  /** Stable part of the run's id; the same key means the same run (no double work). */
  runKey: string;
  input: InputSpec;
  /** Output prefix (`s3://bucket/prefix/` or a local folder); the run writes under `<output>/<runId>/`. */
  output: string;
  datasets: EnrichDataset[];
  /** Per-dataset `parameters` passed to the service (e.g. financial_indicators `date`). */
  parameters?: Partial<Record<EnrichDataset, Record<string, unknown>>>;
  /** Batch activities in flight per dataset; default 32. */
  windowSize?: number;
  /** How calls to the service are retried; defaults suit a production service. */
  apiRetry?: ApiRetryPolicy;
  /**
   * Calls the run may make (matching included); past it no new batch starts and the run ends
   * "stopped at budget", resumable with `runs retry`.
   */
  maxCalls?: number;
  /**
   * Incremental run: ids the output's freshness ledger saw for a dataset less than this long ago (ms)
   * are skipped for that dataset.
   */
  maxAgeMs?: number;
  /**
   * `always`: `_SUCCESS` also for a run completed with failures or stopped at budget (its body says
   * which); by default only a completed run gets one.
   */
  successMarker?: 'always';
}

export interface ApiRetryPolicy {
  /** Attempts per batch before it is recorded as failed; default 8. */
  maximumAttempts?: number;
  /** First retry delay, ms; default 1,000. Doubles up to `maximumIntervalMs`. */
  initialIntervalMs?: number;
  /** Longest retry delay, ms; default 60,000. A 429's Retry-After overrides the delay. */
  maximumIntervalMs?: number;
}

/** Where a run's files live; computed once from the output prefix and the run id. */
export interface RunLocation {
  runId: string;
  /** Output prefix given by the user. */
  output: string;
}

/** One unit of API work: batch `index` of the plan file `chunk`, optionally a sub-range after a 422 split. */
export interface BatchRef {
  chunk: number;
  index: number;
  offset?: number;
  length?: number;
}

/** `match` resolves companies to business ids, `prospect_match` people to prospect ids. */
export type StageName = 'match' | 'prospect_match' | EnrichDataset;

export interface StagePlan {
  stage: StageName;
  /** Number of batches in the plan (before any 422 splits). */
  totalBatches: number;
  /** Batches per chunk file. */
  batchesPerChunk: number;
  /** Number of ids or keys across all batches. */
  totalItems: number;
  /** The stage's own plan files (an incremental run plans each dataset apart); default shared. */
  idPlan?: string;
  /** Ids left out because the freshness ledger saw them within the run's max age. */
  skippedFresh?: number;
}

export interface BatchOutcome {
  /** Records written (matched keys for the match stage). */
  records: number;
  /** Items that had no data (or no match). */
  misses: number;
  /** API calls this batch made, counting failed attempts. */
  calls: number;
}

export interface BatchFailure {
  batch: BatchRef;
  /** Error class name from the client (`ServerError`, `ValidationError`, …). */
  errorType: string;
  message: string;
  attempts: number;
}

export interface StageProgress {
  stage: StageName;
  totalBatches: number;
  doneBatches: number;
  failedBatches: number;
  inFlight: number;
  records: number;
  misses: number;
  calls: number;
  startedAt: number;
  updatedAt: number;
  /** Calls this stage may make in this execution (from the run's `maxCalls`). */
  budget?: number;
  /** Set while the stage waits for a `resume` signal (the service reported insufficient credits). */
  paused?: { reason: string; since: number };
}

/** Batches a stage never started because its call budget ran out: where a resume picks up. */
export interface UnstartedBatches {
  /** First plan batch not started (global index). */
  next: number;
  /** End of the plan range the stage was working through (exclusive); batches appended later lie past it. */
  end: number;
  /** Sub-ranges queued but not started. */
  splits: BatchRef[];
  /** How many batches that is. */
  batches: number;
}

export interface StageResult extends StageProgress {
  /** Object keys (relative to the run) of the recorded failure files. */
  failureFiles: string[];
  /** Present when the budget stopped the stage before every batch started. */
  unstarted?: UnstartedBatches;
}

export type RunStage =
  | 'planning'
  | 'matching'
  | 'enriching'
  | 'committing'
  | 'completed'
  | 'completed_with_failures'
  | 'stopped_at_budget'
  | 'paused'
  | 'failed'
  | 'cancelled';

export interface PlanSummary {
  inputRows: number;
  rejectedRows: number;
  /** Distinct match keys (or distinct provided business ids). */
  uniqueKeys: number;
  /** True when the input carried `business_id` (`prospect_id`) and matching was skipped. */
  idsProvided: boolean;
  /** Present for people lists: their rows are matched to prospects. */
  entity?: 'prospects';
  match?: StagePlan;
}

export interface EnrichPlanSummary {
  matchedRows: number;
  unmatchedRows: number;
  uniqueIds: number;
  stages: StagePlan[];
  /** A people run with business datasets: its employers, planned once the profiles are in. */
  employers?: EmployerPlanSummary;
}

/** The employers of a people run's matched rows, and the plan of each employer dataset. */
export interface EmployerPlanSummary {
  /** Distinct employer business ids. */
  uniqueIds: number;
  /** Matched rows whose employer is their own `business_id` column, their profile's, or unknown. */
  rowsFromInput: number;
  rowsFromProfile: number;
  rowsWithout: number;
  stages: StagePlan[];
}

export interface TableSummary {
  table: string;
  /** Keys relative to the run's prefix. */
  files: { key: string; rows: number; bytes: number; sha256: string }[];
  rows: number;
  /** Column names and DuckDB types, as a reader of the Parquet files sees them. */
  columns: { name: string; type: string }[];
}

export interface RunSummary {
  runId: string;
  /** What was asked for, so the run can be retried without its original command line. */
  request: EnrichRunInput;
  /** Retries that re-ran failed batches of this run, oldest first. */
  retries?: string[];
  jobName: string;
  status: 'completed' | 'completed_with_failures' | 'stopped_at_budget';
  outputPrefix: string;
  manifestKey: string;
  plan: PlanSummary;
  enrichPlan: EnrichPlanSummary;
  stages: StageResult[];
  tables: TableSummary[];
  failedBatches: number;
  startedAt: string;
  finishedAt: string;
}

export interface RunProgress {
  runId: string;
  stage: RunStage;
  plan?: PlanSummary;
  enrichPlan?: EnrichPlanSummary;
  /** Workflow ids of the stage children (of this workflow), to query their progress. */
  children: Partial<Record<StageName, string>>;
  stages: Partial<Record<StageName, StageResult>>;
  startedAt: number;
  /** Set while a stage is paused for credits: what the operator must do. */
  paused?: { stage: StageName; reason: string; since: number };
}

export const QUERY_PROGRESS = 'progress';

/** Failed batches of one stage, gathered for a retry. */
export interface PendingBatches {
  stage: StageName;
  batches: BatchRef[];
  /** Plan batches from this index on were never started (a run stopped at budget). */
  resumeFrom?: number;
}

export const SIGNAL_RESUME = 'resume';
export const SIGNAL_STAGE_PAUSED = 'stagePaused';
export const SIGNAL_STAGE_DRAINED = 'stageDrained';
