// The window sink workflow on its own, on the suite's Temporal and S3 with an in-process worker: it
// merges inbox batches into one row per event, continues as new instead of growing its history, and
// starts again for a delivery that arrives after it finished, re-committing the window with it.
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnrichflowConfig } from '../../config/index.js';
import { eventWindowWorkflowId, sinkLayout, type SinkEventRecord } from '../../events/sink-layout.js';
import { joinKey } from '../../storage/object-store.js';
import { storeResolverFor } from '../../workers/worker.js';
import {
  EVENT_WINDOW_WORKFLOW,
  EVENTS_ARRIVED_SIGNAL,
  type EventWindowInput,
  type EventWindowResult,
} from '../../workflows/events-types.js';
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
const SETTINGS = { windowMs: 60_000, graceMs: 0, commitIntervalMs: 0, settleMs: 300, idleMs: 800 };

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

/** Stores a batch in the window's inbox and signals it, as the receiver does. */
async function deliverBatch(input: EventWindowInput, batchId: string, records: SinkEventRecord[]) {
  const { store, prefix } = storeResolverFor(config)(input.output);
  const key = sinkLayout.inboxBatch(input.tenant, input.windowStart, batchId);
  await store.put(joinKey(prefix, 'events', key), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  await temporal.workflow.signalWithStart(EVENT_WINDOW_WORKFLOW, {
    workflowId: eventWindowWorkflowId(input.output, input.settings.windowMs, input.tenant, input.windowStart),
    taskQueue: config.temporal.taskQueue,
    args: [input],
    signal: EVENTS_ARRIVED_SIGNAL,
    signalArgs: [{ key, events: records.length, receivedAt: Date.now() }],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  });
}

describe('event window workflow', () => {
  it('stores each event once, continues as new, and re-commits for a late delivery', async () => {
    const output = s3Location('events-window');
    const input: EventWindowInput = {
      output,
      tenant: 'acme',
      windowStart: WINDOW_START,
      settings: SETTINGS,
      signalsPerRun: 3,
    };
    const workflowId = eventWindowWorkflowId(output, SETTINGS.windowMs, 'acme', WINDOW_START);
    // Ten batches of three; every batch repeats an event of the one before (a resent delivery).
    for (let batch = 0; batch < 10; batch += 1) {
      const ids = [`e-${batch * 2}`, `e-${batch * 2 + 1}`, `e-${Math.max(0, batch * 2 - 1)}`];
      await deliverBatch(
        input,
        `b${batch}`,
        ids.map((id, i) => record(id, `2026-01-01T00:01:0${i}.000Z`)),
      );
    }
    const first = (await temporal.workflow.getHandle(workflowId).result()) as EventWindowResult;
    expect(first).toMatchObject({ rows: 20, deliveries: 30, batches: 10 });
    expect(first.generation).toBeGreaterThan(1);
    expect((await readSink(config, output)).map((r) => r.event_id).sort()).toEqual(
      Array.from({ length: 20 }, (_, i) => `e-${i}`).sort(),
    );

    // After the window finished: a late delivery starts it again and lands next to the others.
    await deliverBatch(input, 'late', [
      record('e-late', '2026-01-01T02:00:00.000Z'),
      record('e-3', '2026-01-01T02:00:00.000Z'),
    ]);
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
