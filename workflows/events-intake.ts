// One intake slot of one window: the receiver signals (with start) the slot workflow of the current
// few seconds (by its clock) with each batch of deliveries. Once the slot is over and every hand-off
// that may still target it has passed its deadline, the slot writes the batches that rode in its
// signals to the window's inbox (one object), tells the window what landed, and completes. Signals
// stop before the slot ends, so it never continues as new under a stream of them; the window gets one
// signal per slot. A very busy slot still continues as new when its history fills (landing first).
import {
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  proxyLocalActivities,
  setHandler,
  sleep,
  startChild,
  WorkflowIdReusePolicy,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { EventActivities } from '../activities/events.js';
import { eventWindowWorkflowId } from '../pipeline/sink-layout.js';
import {
  EVENTS_ARRIVED_SIGNAL,
  HANDOFF_DEADLINE_MS,
  HANDOFF_MARGIN_MS,
  INLINE_BYTES_PER_RUN,
  type EventsArrived,
  type EventSlotCarry,
  type EventSlotInput,
  type EventSlotResult,
  type EventSlotState,
  type EventsLanded,
} from '../pipeline/events-types.js';
import { eventsLandedSignal, eventWindowWorkflow } from './events-sink.js';
import { QUERY_PROGRESS } from '../pipeline/run-types.js';

// Writing carried deliveries to the inbox: a few milliseconds, retried without limit (they were
// acknowledged), in the worker that runs the slot; a local activity, so the rows are not recorded twice.
const { storeCarriedBatch } = proxyLocalActivities<EventActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** The batch's record, and its JSON lines when they ride in the signal (then `key` is absent). */
export const eventsArrivedSignal = defineSignal<[EventsArrived, Uint8Array?]>(EVENTS_ARRIVED_SIGNAL);
export const eventSlotQuery = defineQuery<EventSlotState>(QUERY_PROGRESS);

/** Signals per run before continuing as new; a 5 s slot at 500 deliveries/s takes ~400. */
const DEFAULT_SIGNALS_PER_RUN = 2_000;

/** How old a signal must be before its batch is surely in the store (if it was acknowledged). */
const LANDED_AFTER_MS = HANDOFF_DEADLINE_MS + HANDOFF_MARGIN_MS;

export async function eventSlotWorkflow(input: EventSlotInput): Promise<EventSlotResult> {
  const slotEnd = input.slotStart + input.slotMs;
  const signalsPerRun = input.signalsPerRun ?? DEFAULT_SIGNALS_PER_RUN;
  const carry: EventSlotCarry = input.carry ?? {
    batches: 0,
    deliveries: 0,
    carriedBatches: 0,
    landed: 0,
    lastSignalAt: undefined,
    recent: [],
    generation: 1,
  };
  let signalsThisRun = 0;
  /** Carried deliveries not yet in the inbox (they are in this run's history). */
  type Carried = {
    lines: Uint8Array[];
    bytes: number;
    events: number;
    batches: number;
    /** This run's numbers of the first and last signal gathered (they name the inbox object). */
    first: number;
    last: number;
  };
  const nothingCarried = (): Carried => ({ lines: [], bytes: 0, events: 0, batches: 0, first: 0, last: 0 });
  let carried = nothingCarried();
  let carriedBytesThisRun = 0;

  setHandler(eventsArrivedSignal, (arrived, lines) => {
    const now = Date.now();
    carry.batches += 1;
    carry.deliveries += arrived.events;
    carry.lastSignalAt = now;
    signalsThisRun += 1;
    if (arrived.key === undefined && lines && lines.byteLength > 0) {
      carry.carriedBatches += 1;
      carried.lines.push(lines);
      carried.bytes += lines.byteLength;
      carried.events += arrived.events;
      carried.batches += 1;
      if (carried.first === 0) carried.first = signalsThisRun;
      carried.last = signalsThisRun;
      carriedBytesThisRun += lines.byteLength;
    } else {
      carry.recent.push({ at: now, events: arrived.events });
    }
  });
  setHandler(eventSlotQuery, () => ({
    ...carry,
    buffered: carried.events,
    slotStart: new Date(input.slotStart).toISOString(),
    windowStart: new Date(input.windowStart).toISOString(),
    tenant: input.tenant,
  }));

  const historyFull = () =>
    signalsThisRun >= signalsPerRun ||
    carriedBytesThisRun >= INLINE_BYTES_PER_RUN ||
    workflowInfo().continueAsNewSuggested;

  /** Writes the carried deliveries gathered so far as one inbox batch (those arriving meanwhile wait). */
  const flushCarried = async (): Promise<{ events: number; batches: number }> => {
    if (carried.events === 0) return { events: 0, batches: 0 };
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
        windowStart: input.windowStart,
        // Named by the signals it holds, fixed by this run's history: a replay or a retry of the same
        // gathering writes the same object. A workflow task that failed after writing (a signal came in
        // meanwhile) is redone with more signals under another name; the overlap is dropped at commit.
        batchId: `run-${runId}-signals-${String(taken.first).padStart(6, '0')}-${String(taken.last).padStart(6, '0')}`,
      },
      lines,
    );
    return { events: taken.events, batches: taken.batches };
  };

  /** Tells the window what landed; starts it (with that news) when it is not running. */
  const tellWindow = async (landed: EventsLanded): Promise<void> => {
    const windowId = eventWindowWorkflowId(
      input.output,
      input.settings.windowMs,
      input.tenant,
      input.windowStart,
    );
    for (let attempt = 0; ; attempt += 1) {
      try {
        await getExternalWorkflowHandle(windowId).signal(eventsLandedSignal, landed);
        return;
      } catch {
        // Not running (never started, or finished): start it below.
      }
      try {
        await startChild(eventWindowWorkflow, {
          workflowId: windowId,
          args: [
            {
              output: input.output,
              tenant: input.tenant,
              windowStart: input.windowStart,
              settings: input.settings,
              landed,
              ...(input.windowSignalsPerRun ? { signalsPerRun: input.windowSignalsPerRun } : {}),
            },
          ],
          // The window outlives this slot, and may be started again by a later one.
          parentClosePolicy: ParentClosePolicy.ABANDON,
          workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        });
        return;
      } catch (error) {
        // Another slot started it meanwhile: signal it. Anything else: wait a little and try again, as
        // these deliveries are in the inbox and the window must hear of them.
        if (!(error instanceof WorkflowExecutionAlreadyStartedError))
          await sleep(Math.min(30_000, 1_000 * 2 ** attempt));
      }
    }
  };

  /**
   * Lands what can be landed: carried deliveries go to the inbox, stored-first ones count once their
   * signal is older than the hand-off deadline; then the window hears of them.
   */
  const land = async (): Promise<void> => {
    const written = await flushCarried();
    const horizon = Date.now() - LANDED_AFTER_MS;
    const stored = carry.recent.filter((signal) => signal.at <= horizon);
    carry.recent = carry.recent.filter((signal) => signal.at > horizon);
    const events = written.events + stored.reduce((sum, signal) => sum + signal.events, 0);
    if (events === 0) return;
    await tellWindow({ events, batches: written.batches + stored.length, slotStart: input.slotStart });
    carry.landed += events;
  };

  for (;;) {
    if (historyFull()) {
      // Carried deliveries live in this run's history only: they go to the inbox before it ends.
      await land();
      if (carried.events > 0) continue;
      return await continueAsNew<typeof eventSlotWorkflow>({
        ...input,
        carry: { ...carry, generation: carry.generation + 1 },
      });
    }
    // A receiver may still signal this slot until a hand-off started before its end has passed its
    // deadline (a later signal, say from a receiver whose clock is behind, starts it again). The last
    // signal is remembered across continue-as-new, so at the close every stored-first batch has landed
    // and landing always makes progress (workflow time stands still within a task: a close before
    // their deadline would loop without yielding).
    const closeAt = Math.max(slotEnd, carry.lastSignalAt ?? 0) + LANDED_AFTER_MS;
    const now = Date.now();
    if (now < closeAt) {
      await condition(historyFull, closeAt - now);
      continue;
    }
    await land();
    // Signals that came in while landing: wait out their deadline too, then land them.
    if (carried.events === 0 && carry.recent.length === 0) break;
  }
  return {
    batches: carry.batches,
    deliveries: carry.deliveries,
    carriedBatches: carry.carriedBatches,
    landed: carry.landed,
    lastSignalAt: carry.lastSignalAt,
    generation: carry.generation,
    slotStart: new Date(input.slotStart).toISOString(),
    windowStart: new Date(input.windowStart).toISOString(),
    tenant: input.tenant,
  };
}
