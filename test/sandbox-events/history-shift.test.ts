// The seeded event history is stored at its fixed anchor (deterministic data) but served shifted by
// whole days so that it ends at the start of today: `--since 30d` finds history, and live events are
// not moved. With `historyEndsToday: false` the stored times are served as they are.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUSINESS_EVENT_TYPES } from '../../contract/enums.js';
import { buildSandbox } from '../../sandbox/app.js';
import { DEFAULT_EVENTS_ANCHOR } from '../../sandbox/events/index.js';
import { ADMIN_KEY, KEYS, WORLD, makeDataDir, prepareWorld, removeWorldTemplate } from './support.js';

const DAY_MS = 86_400_000;
let data: ReturnType<typeof makeDataDir>;

afterAll(removeWorldTemplate);
beforeEach(async () => {
  data = makeDataDir();
  await prepareWorld(data.dir);
});
afterEach(() => data.remove());

async function servedTimes(historyEndsToday: boolean, clock: () => number) {
  const app = await buildSandbox({
    dataDir: data.dir,
    ...WORLD,
    apiKeys: [{ name: 'alpha', key: KEYS.alpha }],
    adminKey: ADMIN_KEY,
    rateLimitPerMinute: 0,
    preloadDatasets: [],
    clock,
    events: { historyEndsToday },
  });
  try {
    const ids = app.sandbox.store.businessIds.slice(0, 40);
    const fetch = (body: Record<string, unknown>) =>
      app.inject({
        method: 'POST',
        url: '/v1/businesses/events',
        headers: { api_key: KEYS.alpha },
        payload: { business_ids: ids, event_types: [...BUSINESS_EVENT_TYPES], ...body },
      });
    const all = (await fetch({})).json<{ data: { event_id: string; event_time: string }[] }>().data;
    const since = new Date(clock() - 30 * DAY_MS).toISOString();
    const recent = (await fetch({ timestamp_from: since })).json<{ data: { event_time: string }[] }>().data;
    return { all, recent, since };
  } finally {
    await app.close();
  }
}

describe('served event history', () => {
  it('ends at the start of today when shifted, and at the stored anchor when not', async () => {
    const now = Date.parse('2026-11-22T15:30:00Z');
    const shifted = await servedTimes(true, () => now);
    const stored = await servedTimes(false, () => now);
    expect(shifted.all.map((e) => e.event_id).sort()).toEqual(stored.all.map((e) => e.event_id).sort());
    const shift = Date.parse('2026-11-22T00:00:00Z') - Date.parse(DEFAULT_EVENTS_ANCHOR);
    const storedById = new Map(stored.all.map((e) => [e.event_id, Date.parse(e.event_time)]));
    for (const event of shifted.all)
      expect(Date.parse(event.event_time)).toBe((storedById.get(event.event_id) ?? 0) + shift);
    // The last 30 days hold about a third of the 90-day history when shifted, and nothing when not.
    expect(shifted.recent.length).toBeGreaterThan(0);
    expect(shifted.recent.every((e) => e.event_time >= shifted.since)).toBe(true);
    expect(stored.recent).toEqual([]);
  });
});
