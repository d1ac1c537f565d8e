// The intake slots and the window sink workflow, signalled as the receiver does, on the suite's Temporal
// and S3 with an in-process worker: batches carried in their signals are written to the inbox by their
// slot (before it moves on or continues as new); the window merges inbox batches into one row per event,
// continues as new instead of growing its history, and starts again for a delivery that arrives after
// it finished, re-committing the window with it.
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnrichflowConfig } from '../../config/index.js';
import {
  eventSlotWorkflowId,
  eventWindowWorkflowId,
  sinkLayout,
  type SinkEventRecord,
} from '../../pipeline/sink-layout.js';
import { joinKey } from '../../storage/object-store.js';
import { storeResolverFor } from '../../workers/worker.js';
import {
  EVENT_SLOT_WORKFLOW,
  EVENTS_ARRIVED_SIGNAL,
  type EventSlotInput,
  type EventSlotResult,
  type EventWindowResult,
} from '../../pipeline/events-types.js';
import {
  s3Location,
  startTestWorker,
  temporalClient,
  testConfig,
  type TestWorker,
} from '../support/pipeline-harness.js';
import { readObjectJson, readSink } from './support.js';

let config: EnrichflowConfig;
let worker: TestWorker;
let temporal: Client;

beforeAll(async () => {
  // The window workflow never calls the Data Service; any address will do.
  config = testConfig('http://127.0.0.1:9');
  worker = await startTestWorker(config);
  temporal = await temporalClient();
});

afterAll(async () => {
  await worker?.stop();
  await temporal?.connection.close();
});

const WINDOW_START = Date.parse('2026-01-01T00:00:00Z');
// A window stays 3 s after its last commit: the slots of a test land well within that.
const SETTINGS = { windowMs: 60_000, graceMs: 0, commitIntervalMs: 0, settleMs: 300, idleMs: 3_000 };

function record(eventId: string, receivedAt: string): SinkEventRecord {
  return {
    event_id: eventId,
    event_name: 'new_office',
    event_time: '2026-01-01T00:00:30.000Z',
    entity_id: 'a'.repeat(32),
    entity_type: 'business',
    tenant_id: 'acme',
    partner_id: 'crm',
    enrollment_key: 'crm-sync',
    data: { city: 'Berlin' },
    received_at: receivedAt,
  };
}

const slotId = (input: EventSlotInput) =>
  eventSlotWorkflowId(
    input.output,
    input.settings.windowMs,
    input.tenant,
    input.windowStart,
    input.slotStart,
  );
const windowId = (input: EventSlotInput) =>
  eventWindowWorkflowId(input.output, input.settings.windowMs, input.tenant, input.windowStart);

/** Stores a batch in the window's inbox and signals its slot, as the receiver does. */
async function deliverBatch(input: EventSlotInput, batchId: string, records: SinkEventRecord[]) {
  const { store, prefix } = storeResolverFor(config)(input.output);
  const key = sinkLayout.inboxBatch(input.tenant, input.windowStart, batchId);
  await store.put(joinKey(prefix, 'events', key), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  await temporal.workflow.signalWithStart(EVENT_SLOT_WORKFLOW, {
    workflowId: slotId(input),
    taskQueue: config.temporal.taskQueue,
    args: [input],
    signal: EVENTS_ARRIVED_SIGNAL,
    signalArgs: [{ key, events: records.length, receivedAt: Date.now() }],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  });
}

/** Signals a batch with its rows carried in the signal, as the receiver does for small batches. */
async function carryBatch(input: EventSlotInput, records: SinkEventRecord[]) {
  const lines = Buffer.from(records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  await temporal.workflow.signalWithStart(EVENT_SLOT_WORKFLOW, {
    workflowId: slotId(input),
    taskQueue: config.temporal.taskQueue,
    args: [input],
    signal: EVENTS_ARRIVED_SIGNAL,
    signalArgs: [{ events: records.length, receivedAt: Date.now() }, lines],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  });
}

/** A slot's input: the current second (as a receiver with one-second slots would pick it). */
function slotInput(output: string, extra: Partial<EventSlotInput> = {}): EventSlotInput {
  return {
    output,
    tenant: 'acme',
    windowStart: WINDOW_START,
    settings: SETTINGS,
    slotStart: Math.floor(Date.now() / 1_000) * 1_000,
    slotMs: 1_000,
    ...extra,
  };
}

describe('event window workflow', () => {
  it('lands batches carried in signals once each, across the slot continuing as new, with stored ones beside them', async () => {
    const output = s3Location('events-window-carried');
    // One slot for all of them, continuing as new every four signals.
    const input = slotInput(output, { signalsPerRun: 4 });
    // Twelve carried batches of three, each repeating an event of the one before, sent two at a time
    // (as a receiver with two hand-offs in flight does), and one stored-first batch among them.
    for (let batch = 0; batch < 12; batch += 2) {
      await Promise.all(
        [batch, batch + 1].map((b) =>
          carryBatch(
            input,
            [`c-${b * 2}`, `c-${b * 2 + 1}`, `c-${Math.max(0, b * 2 - 1)}`].map((id, i) =>
              record(id, `2026-01-01T00:01:0${i}.000Z`),
            ),
          ),
        ),
      );
      if (batch === 6) await deliverBatch(input, 'stored', [record('s-1', '2026-01-01T00:01:09.000Z')]);
    }
    const slot = (await temporal.workflow.getHandle(slotId(input)).result()) as EventSlotResult;
    expect(slot).toMatchObject({ batches: 13, carriedBatches: 12, deliveries: 37, landed: 37 });
    expect(slot.generation).toBeGreaterThan(1);
    // The window heard of each run of the slot (it may have finished and started again in between).
    const result = (await temporal.workflow.getHandle(windowId(input)).result()) as EventWindowResult;
    expect(result.rows).toBe(25);
    const ids = (await readSink(config, output)).map((r) => r.event_id).sort();
    expect(ids).toEqual([...Array.from({ length: 24 }, (_, i) => `c-${i}`), 's-1'].sort());
    const manifest = await readObjectJson<{ rows: number; duplicates_dropped: number; complete: boolean }>(
      config,
      `${output}events/tenant=acme/window=20260101T000000Z/manifest.json`,
    );
    expect(manifest).toMatchObject({ rows: 25, complete: true });
    // 12 repeated deliveries at least; more when a workflow task was redone after writing its batch.
    expect(manifest?.duplicates_dropped).toBeGreaterThanOrEqual(12);
    // Committed batches, carried or stored, leave the inbox.
    const { store, prefix } = storeResolverFor(config)(
      `${output}events/_work/inbox/tenant=acme/window=20260101T000000Z/`,
    );
    const left: string[] = [];
    for await (const info of store.list(prefix)) left.push(info.key);
    expect(left).toEqual([]);
  });

  it('stores each event once, continues as new, and re-commits for a late delivery', async () => {
    const output = s3Location('events-window');
    // Ten batches of three, each in a slot of its own, so the window hears from ten slots; every
    // batch repeats an event of the one before (a resent delivery). The window continues as new every
    // three signals.
    const base = slotInput(output, { windowSignalsPerRun: 3 });
    const slots = Array.from({ length: 10 }, (_, batch) => ({
      ...base,
      slotStart: base.slotStart - batch * 1_000,
    }));
    await Promise.all(
      slots.map((input, batch) => {
        const ids = [`e-${batch * 2}`, `e-${batch * 2 + 1}`, `e-${Math.max(0, batch * 2 - 1)}`];
        return deliverBatch(
          input,
          `b${batch}`,
          ids.map((id, i) => record(id, `2026-01-01T00:01:0${i}.000Z`)),
        );
      }),
    );
    for (const input of slots) await temporal.workflow.getHandle(slotId(input)).result();
    const workflowId = windowId(base);
    const first = (await temporal.workflow.getHandle(workflowId).result()) as EventWindowResult;
    expect(first).toMatchObject({ rows: 20, deliveries: 30, batches: 10 });
    expect(first.generation).toBeGreaterThan(1);
    expect((await readSink(config, output)).map((r) => r.event_id).sort()).toEqual(
      Array.from({ length: 20 }, (_, i) => `e-${i}`).sort(),
    );

    // After the window finished: a late delivery starts it again and lands next to the others.
    const late = slotInput(output);
    await deliverBatch(late, 'late', [
      record('e-late', '2026-01-01T02:00:00.000Z'),
      record('e-3', '2026-01-01T02:00:00.000Z'),
    ]);
    await temporal.workflow.getHandle(slotId(late)).result();
    const second = (await temporal.workflow.getHandle(workflowId).result()) as EventWindowResult;
    expect(second).toMatchObject({ rows: 21, deliveries: 2, commits: 1 });
    const rows = await readSink(config, output);
    expect(rows).toHaveLength(21);
    // The first delivery of an event is the one kept.
    expect(rows.find((r) => r.event_id === 'e-3')?.received_at).not.toContain('02:00:00');
    const manifest = await readObjectJson<{
      commits: number;
      rows: number;
      deliveries_merged: number;
      duplicates_dropped: number;
      complete: boolean;
    }>(config, `${output}events/tenant=acme/window=20260101T000000Z/manifest.json`);
    expect(manifest).toMatchObject({
      rows: 21,
      deliveries_merged: 32,
      duplicates_dropped: 11,
      complete: true,
    });
    expect(manifest?.commits).toBeGreaterThanOrEqual(2);
  });
});
