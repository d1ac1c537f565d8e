// One window of one tenant's webhook events at one output. The intake slots (events-intake.ts) land the
// receiver's batches in the window's inbox and signal this workflow (or start it) with what landed; the
// window commits its inbox into its Parquet table when it closes (plus grace), earlier at a set interval
// while it is open, and again for late deliveries. It gets one signal per slot (every few seconds under
// load), so continuing as new never races a stream of signals.
import {
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { EventActivities } from '../activities/events.js';
import {
  EVENTS_LANDED_SIGNAL,
  type EventsLanded,
  type EventWindowCarry,
  type EventWindowInput,
  type EventWindowResult,
  type EventWindowState,
  type SinkWindowSettings,
} from '../pipeline/events-types.js';
import { QUERY_PROGRESS } from '../pipeline/run-types.js';
import { activityOptions } from '../pipeline/attempts.js';

// Retried without limit: an acknowledged event must land.
const { commitEventWindow } = proxyActivities<EventActivities>(activityOptions('eventWindow'));

export const eventsLandedSignal = defineSignal<[EventsLanded]>(EVENTS_LANDED_SIGNAL);
export const eventWindowQuery = defineQuery<EventWindowState>(QUERY_PROGRESS);

/** Signals handled per run before continuing as new, so the history stays far below its limits. */
const DEFAULT_SIGNALS_PER_RUN = 2_000;

/**
 * When the pending deliveries of a window should be committed (epoch ms), or undefined when nothing is
 * pending: at the window's close, or an interval after the first pending batch if that comes first;
 * after the close, once deliveries have been quiet for `settleMs` (but no later than the interval).
 * Every landed delivery is in the inbox already: nothing to wait for beyond that.
 */
export function nextCommitAt(
  carry: Pick<EventWindowCarry, 'pending' | 'firstPendingAt' | 'lastSignalAt'>,
  windowStart: number,
  settings: SinkWindowSettings,
): number | undefined {
  if (carry.pending === 0) return undefined;
  const closesAt = windowStart + settings.windowMs + settings.graceMs;
  const settled = Math.max(closesAt, (carry.lastSignalAt ?? 0) + settings.settleMs);
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
    commits: 0,
    lastCommit: undefined,
    generation: 1,
  };
  let phase: EventWindowState['phase'] = 'collecting';
  let signalsThisRun = 0;

  const onLanded = (landed: EventsLanded) => {
    const now = Date.now();
    carry.batches += landed.batches;
    carry.deliveries += landed.events;
    carry.pending += landed.events;
    carry.firstPendingAt ??= now;
    carry.lastSignalAt = now;
    signalsThisRun += 1;
  };
  setHandler(eventsLandedSignal, onLanded);
  setHandler(eventWindowQuery, () => ({
    ...carry,
    windowStart: new Date(windowStart).toISOString(),
    windowEnd: new Date(windowEnd).toISOString(),
    tenant: input.tenant,
    phase,
  }));
  // Started by a slot that found no window running: what it landed counts as its first signal.
  if (input.landed && !input.carry) onLanded(input.landed);

  const historyFull = () => signalsThisRun >= signalsPerRun || workflowInfo().continueAsNewSuggested;
  const lastCommitAt = () => (carry.lastCommit ? Date.parse(carry.lastCommit.committedAt) : 0);

  for (;;) {
    if (historyFull()) {
      const { landed: _first, ...rest } = input;
      return await continueAsNew<typeof eventWindowWorkflow>({
        ...rest,
        carry: { ...carry, generation: carry.generation + 1 },
      });
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
      // New deliveries can only bring the commit forward by starting an interval; recheck then.
      await condition(
        () => historyFull() || (nextCommitAt(carry, windowStart, settings) ?? due) < due,
        due - now,
      );
      continue;
    }
    phase = 'committing';
    // The commit lists the inbox after this point, so everything landed so far is in it; deliveries
    // landing meanwhile stay pending for the next commit (a commit that saw them merges them early,
    // and the next one finds nothing new: harmless).
    carry.pending = 0;
    carry.firstPendingAt = undefined;
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
