// enrichflow's own worker metrics: calls to the Data Service (outcome, HTTP status, latency), 429s,
// records and misses per stage, and rows written per table. They go through the activity context's
// metric meter, so they leave by the worker's Prometheus endpoint next to Temporal's own metrics,
// tagged with namespace, task queue and activity type; outside an activity they are dropped.
import { Context } from '@temporalio/activity';
import { noopMetricMeter, type MetricMeter } from '@temporalio/common';
import type { BulkDataset } from '../contract/datasets.js';
import type { StageName, TableSummary } from '../pipeline/run-types.js';
import type { CallResult, EnrichmentCalls, ProspectEnrichmentCalls } from './client-port.js';

/** Metric names as Prometheus shows them (counters carry no `_total` suffix). */
export const METRICS = {
  calls: 'enrichflow_calls',
  callLatency: 'enrichflow_call_latency',
  rateLimited: 'enrichflow_rate_limited',
  records: 'enrichflow_records',
  misses: 'enrichflow_misses',
  rowsWritten: 'enrichflow_rows_written',
} as const;

/** Bucket bounds (ms) of the call-latency histogram: from a fast sandbox to a slow production call. */
export const CALL_LATENCY_BUCKETS_MS = [10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000];

export type CallOutcome =
  | 'ok'
  | 'rate_limited'
  | 'server_error'
  | 'timeout'
  | 'connection'
  | 'validation'
  | 'auth'
  | 'credits'
  | 'rejected'
  | 'not_found'
  | 'malformed'
  | 'error';

const OUTCOME_BY_ERROR: Record<string, CallOutcome> = {
  RateLimitedError: 'rate_limited',
  ServerError: 'server_error',
  RequestTimeoutError: 'timeout',
  ConnectionError: 'connection',
  ValidationError: 'validation',
  AuthError: 'auth',
  InsufficientCreditsError: 'credits',
  RequestRejectedError: 'rejected',
  NotFoundError: 'not_found',
  MalformedResponseError: 'malformed',
};

/** The outcome label of a failed call, from the client's named errors. */
export function outcomeOf(error: unknown): CallOutcome {
  return (error instanceof Error && OUTCOME_BY_ERROR[error.name]) || 'error';
}

/** The HTTP status of a failed call, when the service answered at all. */
function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' ? status : undefined;
}

function meter(): MetricMeter {
  try {
    return Context.current().metricMeter;
  } catch {
    // Direct calls in tests and benchmarks: no activity, no exporter.
    return noopMetricMeter;
  }
}

export interface CallRecord {
  /** `match`, a dataset (a `StageName`), or the operation for other calls. */
  stage: string;
  outcome: CallOutcome;
  latencyMs: number;
  /** HTTP status; absent when no answer came (timeout, connection failure). */
  status?: number | undefined;
}

/** One call to the service (one attempt): counted by stage, outcome and status, and its latency. */
export function recordCall({ stage, outcome, latencyMs, status }: CallRecord): void {
  const m = meter();
  const statusLabel = status === undefined ? 'none' : String(status);
  m.createCounter(METRICS.calls, 'calls', 'Calls to the Data Service, by stage, outcome and HTTP status').add(
    1,
    { stage, outcome, status: statusLabel },
  );
  m.createHistogram(
    METRICS.callLatency,
    'int',
    'ms',
    'Latency of calls to the Data Service (until the body is read), milliseconds',
  ).record(Math.max(0, Math.round(latencyMs)), { stage, outcome });
  if (outcome === 'rate_limited') {
    m.createCounter(METRICS.rateLimited, 'calls', 'Calls answered 429 (rate limited), by stage').add(1, {
      stage,
    });
  }
}

/** Items a successful call asked for, split into records returned and misses (no data, no match). */
export function recordItems({
  stage,
  records,
  misses,
}: {
  stage: StageName;
  records: number;
  misses: number;
}): void {
  const m = meter();
  if (records > 0)
    m.createCounter(METRICS.records, 'records', 'Records returned (matched keys for match), by stage').add(
      records,
      { stage },
    );
  if (misses > 0)
    m.createCounter(METRICS.misses, 'items', 'Items without data (or without a match), by stage').add(
      misses,
      {
        stage,
      },
    );
}

/** Rows written to an output table of a run (a retried commit counts its rows again). */
export function recordRows({ table, rows }: { table: string; rows: number }): void {
  if (rows <= 0) return;
  meter()
    .createCounter(METRICS.rowsWritten, 'rows', 'Rows written to output tables, by table (dataset)')
    .add(rows, { table });
}

/** Runs one call to the service and records it: outcome, status and latency, failed or not. */
export async function timedCall<T>(stage: string, call: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    const result = await call();
    recordCall({ stage, outcome: 'ok', latencyMs: performance.now() - started, status: 200 });
    return result;
  } catch (error) {
    recordCall({
      stage,
      outcome: outcomeOf(error),
      latencyMs: performance.now() - started,
      status: statusOf(error),
    });
    throw error;
  }
}

/**
 * The enrichment calls with metrics: every call's outcome and latency, and the records and misses of
 * each successful one. Any other member of `calls` (export and event calls of the same client) is
 * passed through untouched, bound to the original object.
 */
export function instrumentCalls<C extends EnrichmentCalls>(calls: C): C {
  const matchBusinesses: EnrichmentCalls['matchBusinesses'] = async (body, options) => {
    const response = await timedCall('match', () => calls.matchBusinesses(body, options));
    const matched = response.body.matched_businesses.filter((m) => m.business_id !== null).length;
    recordItems({ stage: 'match', records: matched, misses: body.businesses_to_match.length - matched });
    return response;
  };
  const bulkEnrich: EnrichmentCalls['bulkEnrich'] = async (dataset: BulkDataset, body, options) => {
    const response = await timedCall(dataset, () => calls.bulkEnrich(dataset, body, options));
    const records = response.body.data.length;
    recordItems({ stage: dataset, records, misses: Math.max(0, body.business_ids.length - records) });
    return response;
  };
  const enrichHierarchy: EnrichmentCalls['enrichHierarchy'] = async (body, options) => {
    const response: CallResult<{ data?: unknown }> = await timedCall('company_hierarchies', () =>
      calls.enrichHierarchy(body, options),
    );
    const found = response.body.data ? 1 : 0;
    recordItems({ stage: 'company_hierarchies', records: found, misses: 1 - found });
    return response;
  };
  // People: the stage names are the labels, never a match key.
  const prospects = calls as Partial<ProspectEnrichmentCalls>;
  const matchProspects: ProspectEnrichmentCalls['matchProspects'] = async (body, options) => {
    const response = await timedCall('prospect_match', () => prospects.matchProspects!(body, options));
    const matched = response.body.matched_prospects.filter((m) => m.prospect_id).length;
    recordItems({
      stage: 'prospect_match',
      records: matched,
      misses: body.prospects_to_match.length - matched,
    });
    return response;
  };
  const bulkEnrichProspects: ProspectEnrichmentCalls['bulkEnrichProspects'] = async (
    dataset,
    body,
    options,
  ) => {
    const response = await timedCall(dataset, () => prospects.bulkEnrichProspects!(dataset, body, options));
    const records = response.body.data.length;
    recordItems({ stage: dataset, records, misses: Math.max(0, body.prospect_ids.length - records) });
    return response;
  };
  const wrapped: Record<string, unknown> = {
    matchBusinesses,
    bulkEnrich,
    enrichHierarchy,
    ...(prospects.matchProspects ? { matchProspects } : {}),
    ...(prospects.bulkEnrichProspects ? { bulkEnrichProspects } : {}),
  };
  return new Proxy(calls, {
    get(target, property) {
      if (typeof property === 'string' && property in wrapped) return wrapped[property];
      const value: unknown = Reflect.get(target, property);
      // Methods keep the real object as `this` (the client's private fields live there, not on the proxy).
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Wraps the run-commit activity so the rows of every table it commits (each dataset, matches,
 * rejects, failures) are counted once the commit succeeds.
 */
export function countRowsWritten<A extends unknown[], R extends { tables: TableSummary[] }>(
  commit: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args: A) => {
    const summary = await commit(...args);
    for (const table of summary.tables) recordRows({ table: table.table, rows: table.rows });
    return summary;
  };
}
