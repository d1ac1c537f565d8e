// The seeded event history and `POST /v1/businesses/events`: the same seed gives the same events on
// any machine (fixed anchor, recorded in the data), and fetches filter by business, type and time.
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROUTES } from '../../contract/routes.js';
import { checkResponse } from '../../contract/validation.js';
import {
  DEFAULT_EVENTS_ANCHOR,
  generateEvents,
  type GenerateEventsResult,
} from '../../sandbox/events/index.js';
import {
  ADMIN_KEY,
  businessId,
  headersFor,
  makeDataDir,
  prepareWorld,
  removeWorldTemplate,
  seedBusinesses,
  startEventsApp,
  type EventsApp,
} from './support.js';

const BUSINESSES = 60;
const DAY_MS = 86_400_000;

interface EventRow {
  event_id: string;
  business_id: string;
  event_name: string;
  event_time: string;
  data: Record<string, unknown>;
}

async function generateInto(dir: string, seed: string | number): Promise<GenerateEventsResult> {
  await seedBusinesses(dir, BUSINESSES);
  const instance = await DuckDBInstance.create(join(dir, 'sandbox.duckdb'));
  const connection = await instance.connect();
  try {
    return await generateEvents({ connection, seed });
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function dumpEvents(dir: string): Promise<{ events: string; meta: Record<string, string> }> {
  const instance = await DuckDBInstance.create(join(dir, 'sandbox.duckdb'));
  const connection = await instance.connect();
  try {
    const events = await connection.runAndReadAll(
      `SELECT event_id, business_id, event_name, strftime(event_time, '%Y-%m-%dT%H:%M:%S') AS t, data
       FROM events ORDER BY event_id`,
    );
    const meta = await connection.runAndReadAll('SELECT name, value FROM events_meta ORDER BY name');
    return {
      events: JSON.stringify(events.getRowsJson()),
      meta: Object.fromEntries(meta.getRowsJson().map(([name, value]) => [name as string, value as string])),
    };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

afterAll(removeWorldTemplate);

describe('generated event history', () => {
  const dirs: ReturnType<typeof makeDataDir>[] = [];
  const newDir = () => {
    const dir = makeDataDir();
    dirs.push(dir);
    return dir.dir;
  };
  afterEach(() => dirs.splice(0).forEach((dir) => dir.remove()));

  it('is identical for the same seed, different for another, and ends at the recorded anchor', async () => {
    const [a, b, c] = [newDir(), newDir(), newDir()];
    const first = await generateInto(a, 7);
    await generateInto(b, 7);
    await generateInto(c, 8);
    const [dumpA, dumpB, dumpC] = await Promise.all([dumpEvents(a), dumpEvents(b), dumpEvents(c)]);

    expect(first.events).toBeGreaterThan(BUSINESSES / 2);
    expect(dumpA.events).toBe(dumpB.events);
    expect(dumpC.events).not.toBe(dumpA.events);
    expect(dumpA.meta).toMatchObject({ anchor: DEFAULT_EVENTS_ANCHOR, days: '90', seed: '7' });
    expect(dumpA.meta.generated_events).toBe(String(first.events));

    const rows = JSON.parse(dumpA.events) as [string, string, string, string, string][];
    const anchorMs = Date.parse(DEFAULT_EVENTS_ANCHOR);
    for (const [eventId, business, , time, data] of rows) {
      expect(eventId).toMatch(/^[a-f0-9]{32}$/);
      expect(business).toMatch(/^[a-f0-9]{32}$/);
      const ms = Date.parse(`${time}Z`);
      expect(ms).toBeLessThanOrEqual(anchorMs);
      expect(ms).toBeGreaterThanOrEqual(anchorMs - 90 * DAY_MS);
      expect(typeof JSON.parse(data)).toBe('object');
    }
  });
});

describe('events of two sandboxes generated from the same seed', () => {
  it('are byte-identical in fetch responses', async () => {
    const bodies: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const data = makeDataDir();
      const sandbox = await startEventsApp(data.dir);
      try {
        const response = await sandbox.app.inject({
          method: 'POST',
          url: '/v1/businesses/events',
          headers: headersFor('alpha'),
          payload: {
            business_ids: sandbox.businessIds.slice(0, 40),
            event_types: ROUTES.fetchEvents.body.properties.event_types.items.enum,
          },
        });
        expect(response.statusCode).toBe(200);
        const { response_context: _context, ...rest } = response.json<Record<string, unknown>>();
        expect(rest.total_results).toBeGreaterThan(0);
        bodies.push(JSON.stringify(rest));
      } finally {
        await sandbox.close();
        data.remove();
      }
    }
    expect(bodies[1]).toBe(bodies[0]);
  });
});

describe('POST /v1/businesses/events', () => {
  let data: ReturnType<typeof makeDataDir>;
  let sandbox: EventsApp;

  beforeEach(async () => {
    data = makeDataDir();
    await prepareWorld(data.dir);
    sandbox = await startEventsApp(data.dir);
  });
  afterEach(async () => {
    await sandbox.close();
    data.remove();
  });

  const fetchEvents = (payload: unknown, headers = headersFor('alpha')) =>
    sandbox.app.inject({ method: 'POST', url: '/v1/businesses/events', headers, payload: payload as object });

  /** Every event of the generated world, fetched 40 businesses at a time. */
  async function storedEvents(): Promise<EventRow[]> {
    const all = sandbox.businessIds;
    const rows: EventRow[] = [];
    for (let i = 0; i < all.length; i += 40) {
      const response = await fetchEvents({
        business_ids: all.slice(i, i + 40),
        event_types: ROUTES.fetchEvents.body.properties.event_types.items.enum,
      });
      expect(response.statusCode).toBe(200);
      rows.push(...response.json<{ data: EventRow[] }>().data);
    }
    return rows;
  }

  it('returns the events of the given businesses and types, newest first, in the contract shape', async () => {
    const all = await storedEvents();
    // The generator covers most businesses, over the 90 days before the data's anchor.
    expect(new Set(all.map((e) => e.business_id)).size).toBeGreaterThan(sandbox.businessIds.length / 3);
    const target = all[0];
    expect(target).toBeDefined();
    if (!target) return;
    const expected = all.filter(
      (e) => e.business_id === target.business_id && e.event_name === target.event_name,
    );

    const response = await fetchEvents({
      business_ids: [target.business_id],
      event_types: [target.event_name],
    });
    expect(response.statusCode).toBe(200);
    const body = response.json<{ total_results: number; data: EventRow[]; response_context: object }>();
    expect(checkResponse(ROUTES.fetchEvents.response, body)).toEqual({ ok: true });
    expect(body.response_context).toMatchObject({ request_status: 'success' });
    expect(body.total_results).toBe(expected.length);
    expect(body.data.map((e) => e.event_id).sort()).toEqual(expected.map((e) => e.event_id).sort());
    const times = body.data.map((e) => Date.parse(e.event_time));
    expect(times).toEqual([...times].sort((x, y) => y - x));
  });

  it('filters by time window; a date-only upper bound includes that whole day', async () => {
    const all = await storedEvents();
    const business = all[0]?.business_id ?? '';
    const mine = all.filter((e) => e.business_id === business);
    const types = [...new Set(mine.map((e) => e.event_name))];
    const middle = mine[Math.floor(mine.length / 2)];
    if (!middle) throw new Error('no events generated for the business');
    const day = middle.event_time.slice(0, 10);

    const since = await fetchEvents({
      business_ids: [business],
      event_types: types,
      timestamp_from: middle.event_time,
    });
    expect(
      since
        .json<{ data: EventRow[] }>()
        .data.map((e) => e.event_id)
        .sort(),
    ).toEqual(
      mine
        .filter((e) => e.event_time >= middle.event_time)
        .map((e) => e.event_id)
        .sort(),
    );
    const until = await fetchEvents({ business_ids: [business], event_types: types, timestamp_to: day });
    expect(
      until
        .json<{ data: EventRow[] }>()
        .data.map((e) => e.event_id)
        .sort(),
    ).toEqual(
      mine
        .filter((e) => e.event_time.slice(0, 10) <= day)
        .map((e) => e.event_id)
        .sort(),
    );
  });

  it('answers miss for a business without events, and finds an event emitted while running', async () => {
    const quiet = businessId(999);
    const none = await fetchEvents({ business_ids: [quiet], event_types: ['new_product'] });
    expect(none.statusCode).toBe(200);
    expect(none.json()).toMatchObject({
      response_context: { request_status: 'miss' },
      total_results: 0,
      data: [],
    });

    const emitted = await sandbox.app.inject({
      method: 'POST',
      url: '/_admin/events',
      headers: { 'x-admin-key': ADMIN_KEY },
      payload: {
        events: [{ business_id: quiet, event_name: 'new_product', data: { product_name: 'Quiet One' } }],
      },
    });
    expect(emitted.statusCode).toBe(200);
    const found = await fetchEvents({ business_ids: [quiet], event_types: ['new_product'] });
    expect(found.json<{ data: EventRow[] }>().data).toEqual([
      expect.objectContaining({
        business_id: quiet,
        event_name: 'new_product',
        data: { product_name: 'Quiet One' },
      }),
    ]);
  });

  it('answers 422 for 41 ids, repeated ids, unknown event types and impossible dates', async () => {
    const cases: [unknown, (string | number)[], string][] = [
      [
        { business_ids: Array.from({ length: 41 }, (_, i) => businessId(i)), event_types: ['new_office'] },
        ['body', 'business_ids'],
        'value_error.list.max_items',
      ],
      [
        { business_ids: [businessId(1), businessId(1)], event_types: ['new_office'] },
        ['body', 'business_ids'],
        'value_error.list.unique_items',
      ],
      [
        { business_ids: [businessId(1)], event_types: ['moon_landing'] },
        ['body', 'event_types', 0],
        'type_error.enum',
      ],
      [
        { business_ids: [businessId(1)], event_types: [] },
        ['body', 'event_types'],
        'value_error.list.min_items',
      ],
      [
        { business_ids: [businessId(1)], event_types: ['new_office'], timestamp_from: '2025-02-30' },
        ['body', 'timestamp_from'],
        'value_error.datetime',
      ],
      [
        { business_ids: [businessId(1)], event_types: ['new_office'], since: '2025-01-01' },
        ['body', 'since'],
        'value_error.extra',
      ],
    ];
    for (const [payload, loc, type] of cases) {
      const response = await fetchEvents(payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(422);
      expect(response.json<{ detail: unknown[] }>().detail).toContainEqual(
        expect.objectContaining({ loc, type }),
      );
    }
  });
});
