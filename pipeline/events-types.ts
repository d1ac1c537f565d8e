// Inputs, results and names shared by the events workflows (intake slots, window sink, pull run), their
// activities, the webhook receiver and the CLI. Keys, counts and settings travel here; the one exception
// is a small batch of webhook deliveries, which rides in its `eventsArrived` signal as JSON-lines bytes
// (a separate binary argument, never inside these objects; never secrets) and is written to the inbox by
// the intake slot that received it.
import type { TableSummary } from './run-types.js';

export const EVENT_WINDOW_WORKFLOW = 'eventWindowWorkflow';
export const EVENT_SLOT_WORKFLOW = 'eventSlotWorkflow';
/** Receiver → intake slot: one batch of deliveries. */
export const EVENTS_ARRIVED_SIGNAL = 'eventsArrived';
/** Intake slot → window: deliveries now in the window's inbox. */
export const EVENTS_LANDED_SIGNAL = 'eventsLanded';

/**
 * Length of an intake slot: a receiver signals the slot workflow of the current slot (by its clock), so
 * each slot workflow takes signals for this long plus the hand-off deadline, then lands its batches,
 * tells its window and completes. No workflow ever has to continue as new while signals stream in
 * (which stalled the senders for seconds at a time: bench/results/receiver.md).
 */
export const DEFAULT_SLOT_MS = 5_000;
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
 * abandoned after this long). An intake slot tells its window about a stored-first batch only once
 * its signal is older than this plus a margin: by then the batch's object exists if the receiver
 * acknowledged it. Fixed, so every receiver and every slot agree on it.
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
/** Inline bytes an intake slot's run takes in before it continues as new, so its history stays small. */
export const INLINE_BYTES_PER_RUN = 2 * 1024 * 1024;

/**
 * Sent by the receiver to the intake slot for each batch of deliveries: either stored already (`key`),
 * or carried in the signal's second argument (JSON-lines bytes, `key` absent), durable in the slot's
 * history once the signal is accepted; the slot writes carried batches to the inbox itself.
 */
export interface EventsArrived {
  /** Inbox object, relative to the sink root; absent when the batch rides in the signal. */
  key?: string;
  /** Deliveries in the batch (after the receiver's own duplicate check). */
  events: number;
  receivedAt: number;
}

/** Sent by an intake slot to its window: these deliveries are in the window's inbox now. */
export interface EventsLanded {
  /** Deliveries and receiver batches landed. */
  events: number;
  batches: number;
  /** The slot that landed them (epoch ms), for the record. */
  slotStart: number;
}

export interface EventSlotInput {
  /** Output prefix as the receiver was given it (absolute for local folders). */
  output: string;
  tenant: string | null;
  /** The window the slot's deliveries belong to (epoch ms). */
  windowStart: number;
  settings: SinkWindowSettings;
  /** Epoch ms and length of the slot, by the receiver's clock. */
  slotStart: number;
  slotMs: number;
  /** Signals handled per run before continuing as new (only a very busy slot gets there). */
  signalsPerRun?: number;
  /** The same for the window, when this slot starts it (tests use small numbers for both). */
  windowSignalsPerRun?: number;
  carry?: EventSlotCarry;
}

/** What a slot remembers across continue-as-new. */
export interface EventSlotCarry {
  batches: number;
  deliveries: number;
  /** Batches carried in signals and written to the inbox by the slot (part of `batches`). */
  carriedBatches: number;
  /** Deliveries the window has been told about. */
  landed: number;
  /** When the last signal came (epoch ms); the slot closes a hand-off deadline after it at the earliest. */
  lastSignalAt: number | undefined;
  /** Stored-first signals of the last hand-off deadline: their batches may still be landing. */
  recent: { at: number; events: number }[];
  generation: number;
}

export interface EventSlotState extends EventSlotCarry {
  /** Carried deliveries held by the slot, not yet written to the inbox. */
  buffered: number;
  slotStart: string;
  windowStart: string;
  tenant: string | null;
}

export type EventSlotResult = Omit<EventSlotState, 'recent' | 'buffered'>;

export interface EventWindowInput {
  /** Output prefix as the receiver was given it (absolute for local folders). */
  output: string;
  tenant: string | null;
  /** Epoch ms. */
  windowStart: number;
  settings: SinkWindowSettings;
  /** Signals handled per workflow run before continuing as new, whatever the server suggests. */
  signalsPerRun?: number;
  /** Deliveries landed by the slot that started this window (instead of signalling it). */
  landed?: EventsLanded;
  carry?: EventWindowCarry;
}

/** What a window remembers across continue-as-new. */
export interface EventWindowCarry {
  /** Receiver batches and deliveries landed in the window so far (repeats included). */
  batches: number;
  deliveries: number;
  /** Deliveries landed and not yet committed. */
  pending: number;
  firstPendingAt: number | undefined;
  lastSignalAt: number | undefined;
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
