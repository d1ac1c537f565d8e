// Where the webhook sink keeps events and how its windows are named: pure functions shared by the
// receiver (which writes inbox batches and signals windows), the window workflow and its commit activity.
// No Node APIs here: the workflow bundle imports this file.

/** Default window length: one Parquet file (and manifest) per hour of event time. */
export const DEFAULT_WINDOW_MS = 3_600_000;

/** Folder under the output prefix that holds the sink's tables; one "run" named `events`. */
export const SINK_ROOT = 'events';

/** The start (epoch ms) of the window holding `timeMs`. */
export function windowStartOf(timeMs: number, windowMs: number): number {
  return Math.floor(timeMs / windowMs) * windowMs;
}

/** A window's start as ISO 8601 basic UTC (`20261122T030000Z`): sortable and safe in keys and ids. */
export function windowLabel(startMs: number): string {
  return new Date(startMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

/** A tenant as a path segment: `_none` for deliveries without a tenant, otherwise URI-encoded. */
export function tenantLabel(tenant: string | null): string {
  if (tenant === null || tenant === '') return '_none';
  // A leading underscore is escaped so that no real tenant can be read back as `_none`.
  return encodeURIComponent(tenant).replace(/^_/, '%5F');
}

/** Keys relative to `<output>/events/` (the sink's root). Names are deterministic so a retried commit overwrites. */
export const sinkLayout = {
  /** A tenant's folder: its windows are tables under it (`writeParquetTable` takes one folder level). */
  tenantRoot: (tenant: string | null) => `tenant=${tenantLabel(tenant)}`,
  /** A window's table name, relative to its tenant's folder. */
  windowTable: (startMs: number) => `window=${windowLabel(startMs)}`,
  windowFolder: (tenant: string | null, startMs: number) =>
    `tenant=${tenantLabel(tenant)}/window=${windowLabel(startMs)}/`,
  windowManifest: (tenant: string | null, startMs: number) =>
    `tenant=${tenantLabel(tenant)}/window=${windowLabel(startMs)}/manifest.json`,
  windowSuccess: (tenant: string | null, startMs: number) =>
    `tenant=${tenantLabel(tenant)}/window=${windowLabel(startMs)}/_SUCCESS`,
  /** Raw deliveries (JSON lines) waiting for the window's next commit. */
  inboxPrefix: (tenant: string | null, startMs: number) =>
    `_work/inbox/tenant=${tenantLabel(tenant)}/window=${windowLabel(startMs)}/`,
  inboxBatch: (tenant: string | null, startMs: number, batchId: string) =>
    `_work/inbox/tenant=${tenantLabel(tenant)}/window=${windowLabel(startMs)}/${batchId}.jsonl`,
};

/** FNV-1a, 32 bits, as 8 hex digits: a short stable tag of the output location for workflow ids. */
export function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/**
 * The id of the workflow that owns one window of one tenant's events at one output. Receivers that
 * write to the same output with the same window length share windows (they may run side by side).
 */
export function eventWindowWorkflowId(
  output: string,
  windowMs: number,
  tenant: string | null,
  startMs: number,
): string {
  return `events-window/${shortHash(`${output}|${windowMs}`)}/${tenantLabel(tenant)}/${windowLabel(startMs)}`;
}

/**
 * The id of an intake slot's workflow: its window's id and the slot's start (whole seconds, so slots
 * are at least a second long).
 */
export function eventSlotWorkflowId(
  output: string,
  windowMs: number,
  tenant: string | null,
  windowStart: number,
  slotStart: number,
): string {
  return `${eventWindowWorkflowId(output, windowMs, tenant, windowStart)}/slot-${windowLabel(slotStart)}`;
}

/** One delivery as the sink stores it: a line of an inbox batch, and a row of the window's table. */
export interface SinkEventRecord {
  event_id: string;
  event_name: string;
  /** ISO 8601; the payload's `data.event_time`, else the time the receiver accepted it. */
  event_time: string;
  entity_id: string;
  entity_type: string;
  tenant_id: string | null;
  partner_id: string;
  enrollment_key: string;
  data: Record<string, unknown>;
  /** ISO 8601, when the receiver accepted this delivery. */
  received_at: string;
}
