// Inputs, results and names shared by the events workflows (window sink, pull run), their activities,
// the webhook receiver and the CLI. Keys, counts and settings travel here; the one exception is a small
// batch of webhook deliveries, which rides in its `eventsArrived` signal as JSON-lines bytes (a separate
// binary argument, never inside these objects; never secrets) and is written to the inbox by the window.
import type { TableSummary } from './types.js';

export const EVENT_WINDOW_WORKFLOW = 'eventWindowWorkflow';
export const EVENTS_ARRIVED_SIGNAL = 'eventsArrived';
export const EVENTS_PULL_WORKFLOW = 'eventsPullWorkflow';

/** How the sink cuts and commits windows; fixed per output by whoever starts a window first. */
export interface SinkWindowSettings {
  /** Length of a window of event time; one Parquet file and manifest per window. Default 1 h. */
  windowMs: number;
  /** Wait after a window's end for late deliveries before its final commit. Default 60 s. */
  graceMs: number;
  /** While a window is open, commit at most this long after its first uncommitted batch (0 = only at close). Default 5 min. */
  commitIntervalMs: number;
  /** After a commit, later deliveries are gathered this long before the next one. Default 2 s. */
  settleMs: number;
  /** After its final commit, a window stays open this long for late deliveries, then completes. Default 5 min. */
  idleMs: number;
}

/**
 * Longest a receiver's hand-off of one batch may take (object put and signal run side by side, each
 * abandoned after this long). A window commits a signalled batch only once its signal is older than
 * this plus a margin: by then the batch's object exists if the receiver acknowledged it. Fixed, so
 * every receiver and every window agree on it.
 */
export const HANDOFF_DEADLINE_MS = 3_000;
/** Margin for clocks and scheduling on top of the deadline. */
export const HANDOFF_MARGIN_MS = 1_000;

export const DEFAULT_SINK_WINDOW: SinkWindowSettings = {
  windowMs: 3_600_000,
  graceMs: 60_000,
  commitIntervalMs: 300_000,
  settleMs: 2_000,
  idleMs: 300_000,
};

/**
 * Largest batch (JSON-lines bytes) the receiver sends inside its signal instead of storing it first:
 * far below Temporal's payload limits (warning at 512 KiB, refusal at 2 MiB per payload).
 */
export const INLINE_BATCH_MAX_BYTES = 128 * 1024;
/** Inline bytes a window's run takes in before it continues as new, so its history stays small. */
export const INLINE_BYTES_PER_RUN = 2 * 1024 * 1024;

/**
 * Sent by the receiver for each batch of deliveries: either stored already (`key`), or carried in the
 * signal's second argument (JSON-lines bytes, `key` absent), durable in the window's history once the
 * signal is accepted; the window writes carried batches to its inbox itself before committing them.
 */
export interface EventsArrived {
  /** Inbox object, relative to the sink root; absent when the batch rides in the signal. */
  key?: string;
  /** Deliveries in the batch (after the receiver's own duplicate check). */
  events: number;
  receivedAt: number;
}

export interface EventWindowInput {
  /** Output prefix as the receiver was given it (absolute for local folders). */
  output: string;
  tenant: string | null;
  /** Epoch ms. */
  windowStart: number;
  settings: SinkWindowSettings;
  /** Signals handled per workflow run before continuing as new, whatever the server suggests. */
  signalsPerRun?: number;
  carry?: EventWindowCarry;
}

/** What a window remembers across continue-as-new. */
export interface EventWindowCarry {
  batches: number;
  deliveries: number;
  /** Deliveries signalled and not yet committed. */
  pending: number;
  firstPendingAt: number | undefined;
  lastSignalAt: number | undefined;
  /** Stored-first signals of the last hand-off deadline: their batches may still be landing in the store. */
  recent: { at: number; events: number }[];
  /** Batches carried in signals and written to the inbox by the window (part of `batches`). */
  carriedBatches?: number;
  commits: number;
  lastCommit: EventWindowCommit | undefined;
  /** Runs of this workflow id so far (1 + continue-as-new count). */
  generation: number;
}

export interface EventWindowCommit {
  /** Unique events in the window's table after this commit. */
  rows: number;
  /** Inbox deliveries merged by this commit. */
  merged: number;
  /** Deliveries dropped by this commit because their event was already stored. */
  duplicates: number;
  /** True once the window's end plus grace has passed. */
  complete: boolean;
  table: TableSummary;
  /** Relative to the sink root. */
  manifestKey: string;
  committedAt: string;
}

export interface EventWindowState extends EventWindowCarry {
  /** Carried deliveries held by the window, not yet written to its inbox. */
  buffered: number;
  windowStart: string;
  windowEnd: string;
  tenant: string | null;
  phase: 'collecting' | 'committing' | 'idle';
}

export interface EventWindowResult {
  windowStart: string;
  windowEnd: string;
  tenant: string | null;
  rows: number;
  batches: number;
  deliveries: number;
  commits: number;
  /** Runs of the workflow id this result closes (continue-as-new counts). */
  generation: number;
  manifestKey: string | undefined;
}

// ---- events pull ---------------------------------------------------------------------------------

export interface EventsPullRequest {
  jobName: string;
  runKey: string;
  /** Ids given inline (small lists); otherwise `idsLocation`. */
  businessIds?: string[];
  /** A Parquet file or folder with a `business_id` column (e.g. a run's `matches/`). */
  idsLocation?: string;
  eventTypes: string[];
  /** `30d` (before the run starts) or a date / date-time; none = everything the service keeps. */
  since?: string;
  until?: string;
  /** Output prefix; the run writes under `<output>/<runId>/`. */
  output: string;
  /** Calls in flight at once; default 8. */
  windowSize?: number;
}

export interface EventsPullInput extends EventsPullRequest {
  apiTaskQueue: string;
  carry?: EventsPullCarry;
}

export interface EventsPullPlan {
  uniqueIds: number;
  /** Ids that are not 32 hex digits, left out. */
  invalidIds: number;
  totalBatches: number;
  batchesPerChunk: number;
}

export interface EventsPullCarry {
  plan: EventsPullPlan;
  timestampFrom: string | null;
  timestampTo: string | null;
  next: number;
  doneBatches: number;
  events: number;
  calls: number;
  startedAt: string;
}

export interface EventsPullProgress {
  runId: string;
  stage: 'planning' | 'fetching' | 'committing' | 'completed';
  plan?: EventsPullPlan;
  doneBatches: number;
  inFlight: number;
  events: number;
  timestampFrom: string | null;
  timestampTo: string | null;
}

export interface EventsPullSummary {
  runId: string;
  status: 'completed';
  request: EventsPullRequest;
  outputPrefix: string;
  manifestKey: string;
  plan: EventsPullPlan;
  timestampFrom: string | null;
  timestampTo: string | null;
  /** Event rows in the table (unique event ids). */
  events: number;
  calls: number;
  table: TableSummary;
  startedAt: string;
  finishedAt: string;
}
