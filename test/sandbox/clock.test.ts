// One clock for every date served relative to today: posts' `created_at` and `days_since_posted` agree
// with the clock's current day, as the events' history does; the clock is the current time by default
// and fixed with the `clock` option.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULK_ENRICH_ROUTES, BUSINESS_EVENT_TYPES, ROUTES } from '../../contract/index.js';
import { call, okBody, startTestSandbox, type TestSandbox } from './support.js';

const DAY_MS = 86_400_000;
const startOfDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

interface Post {
  days_since_posted: number;
  created_at: string;
}

let now = Date.parse('2026-07-15T10:30:00Z');
let fixed: TestSandbox;
let current: TestSandbox;

beforeAll(async () => {
  [fixed, current] = await Promise.all([
    startTestSandbox({ clock: () => now, events: {} }),
    startTestSandbox(),
  ]);
});
afterAll(async () => {
  await Promise.all([fixed.close(), current.close()]);
});

async function companyPosts(sandbox: TestSandbox): Promise<Post[]> {
  const ids = sandbox.app.sandbox.store.businessIds.slice(0, 50);
  const route = BULK_ENRICH_ROUTES.network_posts;
  const body = okBody<{ data: { data: Post }[] }>(
    route,
    await call(sandbox.app, 'POST', route.path, { business_ids: ids }),
  );
  expect(body.data.length).toBeGreaterThan(0);
  return body.data.map((row) => row.data);
}

async function prospectPosts(sandbox: TestSandbox): Promise<Post[]> {
  const rows = await sandbox.app.sandbox.store.query(
    'SELECT prospect_id FROM prospect_posts ORDER BY pix LIMIT 10',
  );
  const posts: Post[] = [];
  for (const row of rows) {
    const response = await call(sandbox.app, 'POST', ROUTES.enrichProspectPosts.path, {
      prospect_id: String(row.prospect_id),
    });
    posts.push(okBody<{ data: Post }>(ROUTES.enrichProspectPosts, response).data);
  }
  return posts;
}

/** Whole days from a post's creation to the start of the clock's day. */
const daysBefore = (today: number, post: Post) => Math.floor((today - Date.parse(post.created_at)) / DAY_MS);

describe('posts', () => {
  it("agree with the fixed clock's day, and move with it", async () => {
    now = Date.parse('2026-07-15T10:30:00Z');
    const first = [...(await companyPosts(fixed)), ...(await prospectPosts(fixed))];
    for (const post of first) expect(daysBefore(startOfDay(now), post)).toBe(post.days_since_posted);
    now += 400 * DAY_MS;
    const later = [...(await companyPosts(fixed)), ...(await prospectPosts(fixed))];
    expect(later.map((p) => p.days_since_posted)).toEqual(first.map((p) => p.days_since_posted));
    later.forEach((post, i) =>
      expect(Date.parse(post.created_at) - Date.parse(first[i]?.created_at ?? '')).toBe(400 * DAY_MS),
    );
  });

  it('agree with the current day by default', async () => {
    const before = startOfDay(Date.now());
    const posts = [...(await companyPosts(current)), ...(await prospectPosts(current))];
    const after = startOfDay(Date.now());
    for (const post of posts) {
      expect([daysBefore(before, post), daysBefore(after, post)]).toContain(post.days_since_posted);
    }
  });
});

describe('events on the same clock', () => {
  it('end on the day the posts are relative to', async () => {
    now = Date.parse('2027-03-02T08:00:00Z');
    const ids = fixed.app.sandbox.store.businessIds.slice(0, 40);
    const response = await call(fixed.app, 'POST', ROUTES.fetchEvents.path, {
      business_ids: ids,
      event_types: [...BUSINESS_EVENT_TYPES],
    });
    const times = okBody<{ data: { event_time: string }[] }>(ROUTES.fetchEvents, response).data.map((e) =>
      Date.parse(e.event_time),
    );
    expect(times.length).toBeGreaterThan(0);
    const latest = Math.max(...times);
    expect(latest).toBeLessThanOrEqual(startOfDay(now));
    expect(latest).toBeGreaterThan(startOfDay(now) - 3 * DAY_MS);
    // The business fetch `events` filter sees the same times: the last 90 days hold these businesses.
    const recent = await call(fixed.app, 'POST', ROUTES.fetchBusinesses.path, {
      mode: 'full',
      size: 60_000,
      page_size: 1,
      filters: { events: { values: [...BUSINESS_EVENT_TYPES], last_occurrence: 90 } },
    });
    expect(okBody<{ total_results: number }>(ROUTES.fetchBusinesses, recent).total_results).toBeGreaterThan(
      0,
    );
  });
});
