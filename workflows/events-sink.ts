// One window of one tenant's webhook events at one output: the receiver signals (with start) each batch
// of deliveries, and this workflow commits the window's inbox into its Parquet table when the window
// closes (plus grace), earlier at a set interval while it is open, and again for late deliveries.
// A small batch rides in its signal (JSON-lines bytes, durable in this history once the signal is
// accepted): the window gathers those and writes them to its inbox itself (a local activity, so the rows
// are not recorded twice), always before a commit or a continue-as-new. A large batch is stored by the
// receiver first and its signal carries the key. It continues as new before its history grows large.
import {
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { EventActivities } from '../activities/events.js';
import {
  EVENTS_ARRIVED_SIGNAL,
  HANDOFF_DEADLINE_MS,
  HANDOFF_MARGIN_MS,
  INLINE_BYTES_PER_RUN,
  type EventsArrived,
  type EventWindowCarry,
  type EventWindowInput,
  type EventWindowResult,
  type EventWindowState,
  type SinkWindowSettings,
} from './events-types.js';
import { QUERY_PROGRESS } from './types.js';

// Committing rewrites the window's table from object-store files: retried without limit (an
// acknowledged event must land), with backoff, and heartbeating so a dead worker is noticed.
const { commitEventWindow } = proxyActivities<EventActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute' },
});

// Writing carried deliveries to the inbox: a few milliseconds, retried without limit (they were
// acknowledged), in the worker that runs the window.
const { storeCarriedBatch } = proxyLocalActivities<EventActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** The batch's record, and its JSON lines when they ride in the signal (then `key` is absent). */
export const eventsArrivedSignal = defineSignal<[EventsArrived, Uint8Array?]>(EVENTS_ARRIVED_SIGNAL);
export const eventWindowQuery = defineQuery<EventWindowState>(QUERY_PROGRESS);

/** Signals handled per run before continuing as new, so the history stays far below its limits. */
const DEFAULT_SIGNALS_PER_RUN = 2_000;

/** How old a signal must be before its batch is surely in the store (if it was acknowledged). */
const LANDED_AFTER_MS = HANDOFF_DEADLINE_MS + HANDOFF_MARGIN_MS;

/** Carried deliveries are written to the inbox at the latest this long after the first of them arrived… */
const CARRIED_FLUSH_AFTER_MS = 1_000;
/** …or once this many bytes are waiting. */
const CARRIED_FLUSH_BYTES = 1024 * 1024;

/**
 * When the pending deliveries of a window should be committed (epoch ms), or undefined when nothing is
 * pending: at the window's close, or an interval after the first pending batch if that comes first;
 * after the close, once deliveries have been quiet for `settleMs` and the last stored-first batch has
 * surely landed (but no later than the interval). Carried batches need no landing time: the window
 * writes them to the inbox itself before it commits.
 */
export function nextCommitAt(
  carry: Pick<EventWindowCarry, 'pending' | 'firstPendingAt' | 'lastSignalAt'> &
    Partial<Pick<EventWindowCarry, 'recent'>>,
  windowStart: number,
  settings: SinkWindowSettings,
): number | undefined {
  if (carry.pending === 0) return undefined;
  const closesAt = windowStart + settings.windowMs + settings.graceMs;
  // Without `recent` (callers that only count), every signal is taken as stored-first.
  const lastStoredAt = carry.recent ? carry.recent.at(-1)?.at : carry.lastSignalAt;
  const settled = Math.max(
    closesAt,
    (carry.lastSignalAt ?? 0) + settings.settleMs,
    (lastStoredAt ?? 0) + LANDED_AFTER_MS,
  );
  if (settings.commitIntervalMs <= 0) return settled;
  const interim = (carry.firstPendingAt ?? 0) + Math.max(settings.commitIntervalMs, settings.settleMs);
  return Math.min(settled, interim);
}

export async function eventWindowWorkflow(input: EventWindowInput): Promise<EventWindowResult> {
  const { settings, windowStart } = input;
  const windowEnd = windowStart + settings.windowMs;
  const closesAt = windowEnd + settings.graceMs;
  const signalsPerRun = input.signalsPerRun ?? DEFAULT_SIGNALS_PER_RUN;
  const carry: EventWindowCarry = input.carry ?? {
    batches: 0,
    deliveries: 0,
    pending: 0,
    firstPendingAt: undefined,
    lastSignalAt: undefined,
    recent: [],
    commits: 0,
    lastCommit: undefined,
    generation: 1,
  };
  let phase: EventWindowState['phase'] = 'collecting';
  let signalsThisRun = 0;
  /** Carried deliveries not yet in the inbox (they are in this run's history). */
  type Carried = {
    lines: Uint8Array[];
    bytes: number;
    events: number;
    since: number | undefined;
    /** This run's numbers of the first and last signal gathered (they name the inbox object). */
    first: number;
    last: number;
  };
  const nothingCarried = (): Carried => ({
    lines: [],
    bytes: 0,
    events: 0,
    since: undefined,
    first: 0,
    last: 0,
  });
  let carried = nothingCarried();
  let carriedBytesThisRun = 0;

  setHandler(eventsArrivedSignal, (arrived, lines) => {
    const now = Date.now();
    carry.batches += 1;
    carry.deliveries += arrived.events;
    carry.pending += arrived.events;
    carry.firstPendingAt ??= now;
    carry.lastSignalAt = now;
    carry.recent = carry.recent.filter((signal) => signal.at > now - LANDED_AFTER_MS);
    signalsThisRun += 1;
    if (arrived.key === undefined && lines && lines.byteLength > 0) {
      carry.carriedBatches = (carry.carriedBatches ?? 0) + 1;
      carried.lines.push(lines);
      carried.bytes += lines.byteLength;
      carried.events += arrived.events;
      if (carried.since === undefined) {
        carried.since = now;
        carried.first = signalsThisRun;
      }
      carried.last = signalsThisRun;
      carriedBytesThisRun += lines.byteLength;
    } else {
      carry.recent.push({ at: now, events: arrived.events });
    }
  });
  setHandler(eventWindowQuery, () => ({
    ...carry,
    buffered: carried.events,
    windowStart: new Date(windowStart).toISOString(),
    windowEnd: new Date(windowEnd).toISOString(),
    tenant: input.tenant,
    phase,
  }));

  const historyFull = () =>
    signalsThisRun >= signalsPerRun ||
    carriedBytesThisRun >= INLINE_BYTES_PER_RUN ||
    workflowInfo().continueAsNewSuggested;
  const lastCommitAt = () => (carry.lastCommit ? Date.parse(carry.lastCommit.committedAt) : 0);
  /** When the carried deliveries must be written (epoch ms), or undefined when none are waiting. */
  const flushDue = () =>
    carried.since === undefined
      ? undefined
      : carried.bytes >= CARRIED_FLUSH_BYTES
        ? carried.since
        : carried.since + CARRIED_FLUSH_AFTER_MS;
  const earliest = (a: number, b: number | undefined) => (b === undefined ? a : Math.min(a, b));
  /** Writes the carried deliveries gathered so far as one inbox batch (those arriving meanwhile wait). */
  const flushCarried = async () => {
    if (carried.events === 0) return;
    const taken = carried;
    carried = nothingCarried();
    const lines = new Uint8Array(taken.bytes);
    let offset = 0;
    for (const part of taken.lines) {
      lines.set(part, offset);
      offset += part.byteLength;
    }
    const { runId } = workflowInfo();
    await storeCarriedBatch(
      {
        output: input.output,
        tenant: input.tenant,
        windowStart,
        // Named by the signals it holds, fixed by this run's history: a replay or a retry of the same
        // gathering writes the same object. A workflow task that failed after writing (a signal came in
        // meanwhile) is redone with more signals under another name; the overlap is dropped at commit.
        batchId: `run-${runId}-signals-${String(taken.first).padStart(6, '0')}-${String(taken.last).padStart(6, '0')}`,
      },
      lines,
    );
  };

  for (;;) {
    if (historyFull()) {
      // Carried deliveries live in this run's history only: they go to the inbox before it ends.
      await flushCarried();
      if (carried.events > 0) continue;
      return await continueAsNew<typeof eventWindowWorkflow>({
        ...input,
        carry: { ...carry, generation: carry.generation + 1 },
      });
    }
    const flushAt = flushDue();
    if (flushAt !== undefined && flushAt <= Date.now()) {
      await flushCarried();
      continue;
    }
    const now = Date.now();
    // A window committed while open gets a final commit at its close, even without new deliveries.
    const finalDue = carry.lastCommit && !carry.lastCommit.complete ? closesAt : undefined;
    const due = nextCommitAt(carry, windowStart, settings) ?? finalDue;
    if (due === undefined) {
      // Closed, committed and nothing pending: stay for late deliveries for `idleMs`, then finish.
      phase = 'idle';
      const finishAt = Math.max(closesAt, lastCommitAt()) + settings.idleMs;
      if (finishAt <= now) break;
      const woke = await condition(() => carry.pending > 0 || historyFull(), finishAt - now);
      if (!woke) break;
      continue;
    }
    if (due > now) {
      phase = 'collecting';
      // New deliveries can only bring the commit forward by starting an interval, or carried ones
      // ask to be written; recheck then.
      const wakeAt = earliest(due, flushAt);
      await condition(
        () =>
          historyFull() ||
          (nextCommitAt(carry, windowStart, settings) ?? due) < due ||
          (flushDue() ?? wakeAt) < wakeAt,
        wakeAt - now,
      );
      continue;
    }
    phase = 'committing';
    // Carried deliveries so far go to the inbox first; any arriving meanwhile wait for the next commit.
    await flushCarried();
    // The commit lists the inbox after this point: stored-first batches signalled more than
    // LANDED_AFTER_MS ago are there if acknowledged; younger ones may still be landing and stay pending
    // for the next commit, as do carried ones not yet written.
    const horizon = Date.now() - LANDED_AFTER_MS;
    carry.recent = carry.recent.filter((signal) => signal.at > horizon);
    carry.pending = carry.recent.reduce((sum, signal) => sum + signal.events, carried.events);
    carry.firstPendingAt = earliest(carry.recent[0]?.at ?? Number.POSITIVE_INFINITY, carried.since);
    if (carry.firstPendingAt === Number.POSITIVE_INFINITY) carry.firstPendingAt = undefined;
    const commit = await commitEventWindow({
      output: input.output,
      tenant: input.tenant,
      windowStart,
      windowMs: settings.windowMs,
      complete: Date.now() >= closesAt,
    });
    carry.commits += 1;
    carry.lastCommit = commit;
  }
  return {
    windowStart: new Date(windowStart).toISOString(),
    windowEnd: new Date(windowEnd).toISOString(),
    tenant: input.tenant,
    rows: carry.lastCommit?.rows ?? 0,
    batches: carry.batches,
    deliveries: carry.deliveries,
    commits: carry.commits,
    generation: carry.generation,
    manifestKey: carry.lastCommit?.manifestKey,
  };
}
