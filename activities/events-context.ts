// What the events activities share: the one Data Service call they make, their dependencies, the
// columns of the sink's and the pull's tables, and where a pull keeps its results.
import { createHash } from 'node:crypto';
import type { BusinessEventType } from '../contract/enums.js';
import { MAX_EVENT_BUSINESS_IDS } from '../contract/limits.js';
import type { Logger } from '../lib/logger.js';
import type { CallOptions, CallResult } from './client-port.js';
import { cancellationSignal, type MemoryGate } from './attempt.js';
import { sqlString } from '../storage/duckdb.js';
import { type StoreResolver } from '../storage/run-files.js';

/** The one Data Service call the events activities make. */
export interface EventCalls {
  fetchEvents(
    body: {
      business_ids: string[];
      event_types: BusinessEventType[];
      timestamp_from?: string | null;
      timestamp_to?: string | null;
    },
    options?: CallOptions,
  ): Promise<
    CallResult<{
      total_results: number;
      data: {
        event_id: string;
        event_name: string;
        event_time: string;
        business_id: string;
        data: unknown;
      }[];
    }>
  >;
}

export interface EventActivityDeps {
  resolveStore: StoreResolver;
  logger: Logger;
  /** Needed by `fetchEventsBatch` only (the API worker). */
  calls?: EventCalls;
  workDir?: string;
  /** The process's limit on DuckDB activities at once (shared with the other factories). */
  gate?: MemoryGate;
}

/** Thrown when the worker was built without a Data Service client but asked to call it: a deployment defect. */
export class EventCallsMissingError extends Error {
  override readonly name = 'EventCallsMissingError';
}

/** Columns of a window's table, as DuckDB reads the inbox lines (see `SinkEventRecord`). */
export const SINK_COLUMNS = {
  event_id: 'VARCHAR',
  event_name: 'VARCHAR',
  event_time: 'TIMESTAMPTZ',
  entity_id: 'VARCHAR',
  entity_type: 'VARCHAR',
  tenant_id: 'VARCHAR',
  partner_id: 'VARCHAR',
  enrollment_key: 'VARCHAR',
  data: 'JSON',
  received_at: 'TIMESTAMPTZ',
} as const;

/** Columns of a pull run's `events` table (the service's event record). */
export const PULL_COLUMNS = {
  event_id: 'VARCHAR',
  event_name: 'VARCHAR',
  event_time: 'TIMESTAMPTZ',
  business_id: 'VARCHAR',
  data: 'JSON',
} as const;

/** Ids per `POST /v1/businesses/events` call. */
export const EVENTS_BATCH_SIZE = MAX_EVENT_BUSINESS_IDS;

export const BUSINESS_ID = /^[0-9a-f]{32}$/;

export const columnsSql = (columns: Record<string, string>) =>
  `{${Object.entries(columns)
    .map(([name, type]) => `${name}: ${sqlString(type)}`)
    .join(', ')}}`;
export const emptySql = (columns: Record<string, string>) =>
  `(SELECT ${Object.entries(columns)
    .map(([name, type]) => `NULL::${type} AS ${name}`)
    .join(', ')} WHERE false)`;

/** Throws when Temporal has given up on this attempt (another may be running): it must not write. */
export function stopIfAbandoned(): void {
  cancellationSignal().throwIfAborted();
}

export function toJsonLines(values: unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join('\n') + (values.length ? '\n' : '');
}

/** The results folder of a pull: named after what was asked, so a re-run with other bounds never reuses it. */
export function pullResultsPrefix(
  eventTypes: readonly string[],
  timestampFrom: string | null,
  timestampTo: string | null,
): string {
  const tag = createHash('sha256')
    .update(JSON.stringify([[...eventTypes].sort(), timestampFrom, timestampTo]))
    .digest('hex')
    .slice(0, 10);
  return `_work/results/events-${tag}/`;
}
