// Prospect bulk enrichment (provider operations beyond spec 0.2.286) over HTTP: profiles are the records
// prospect fetch serves, contact information exists for part of the prospects and only on reserved
// domains and fictional numbers, posts are the single-prospect posts records; ids without data are left
// out as for businesses; limits and errors as for business bulk enrichment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PROSPECT_BULK_ENRICH_ROUTES,
  ROUTES,
  type ContactsInformationRecord,
  type Prospect,
} from '../../contract/index.js';
import type { FaultRule } from '../../sandbox/app.js';
import { isFictionalPhone, isReservedMailAddress } from '../../sandbox/data/contacts.js';
import { hashEmail } from '../../sandbox/data/normalize.js';
import { API_KEY, call, detailOf, okBody, startTestSandbox, type TestSandbox } from './support.js';

type Row<T> = { prospect_id: string; data: T };
interface Bulk<T> {
  response_context: { request_status: string };
  total_results: number;
  data: Row<T>[];
}

const UNKNOWN = '0'.repeat(40);
const { profiles, contacts_information: contacts, network_posts: posts } = PROSPECT_BULK_ENRICH_ROUTES;

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ clock: () => Date.parse('2026-01-01T12:00:00Z') });
});
afterAll(() => sandbox.close());

async function ids(sql: string): Promise<string[]> {
  return (await sandbox.app.sandbox.store.query(sql)).map((row) => String(row.id));
}

async function bulk<T>(route: typeof profiles | typeof contacts | typeof posts, prospectIds: string[]) {
  return okBody<Bulk<T>>(route, await call(sandbox.app, 'POST', route.path, { prospect_ids: prospectIds }));
}

async function fetchPage(filters: Record<string, unknown> = {}, pageSize = 50): Promise<Prospect[]> {
  const response = await call(sandbox.app, 'POST', ROUTES.fetchProspects.path, {
    mode: 'full',
    size: pageSize,
    page_size: pageSize,
    filters,
  });
  return okBody<{ data: Prospect[] }>(ROUTES.fetchProspects, response).data;
}

describe('profiles', () => {
  it('are the records prospect fetch serves, each id once, in the order asked, unknown ids left out', async () => {
    const page = await fetchPage();
    expect(page).toHaveLength(50);
    const asked = page.map((p) => p.prospect_id).reverse();
    const body = await bulk<Prospect>(profiles, [...asked.slice(0, 48), asked[0] as string, UNKNOWN]);
    expect(body.response_context.request_status).toBe('success');
    expect(body.total_results).toBe(48);
    expect(body.data.map((row) => row.prospect_id)).toEqual(asked.slice(0, 48));
    const byId = new Map(page.map((p) => [p.prospect_id, p]));
    for (const row of body.data) expect(row.data).toEqual(byId.get(row.prospect_id));
  });

  it('answers a miss with no data when no id is known', async () => {
    const body = await bulk(profiles, [UNKNOWN, 'f'.repeat(40)]);
    expect(body).toMatchObject({ total_results: 0, data: [], response_context: { request_status: 'miss' } });
  });
});

describe('contact information', () => {
  it('exists for part of the prospects, on reserved domains and fictional numbers only', async () => {
    const store = sandbox.app.sandbox.store;
    const [counts] = await store.query(
      'SELECT (SELECT count(*) FROM prospects) AS prospects, (SELECT count(*) FROM prospect_contacts) AS contacts',
    );
    const total = Number(counts?.prospects);
    const withContacts = Number(counts?.contacts);
    expect(withContacts).toBeGreaterThan(total * 0.3);
    expect(withContacts).toBeLessThan(total * 0.95);
    const rows = await store.query('SELECT json FROM prospect_contacts');
    let phones = 0;
    for (const row of rows) {
      const record = JSON.parse(String(row.json)) as ContactsInformationRecord;
      for (const email of record.emails ?? [])
        expect(isReservedMailAddress(String(email.address))).toBe(true);
      if (record.professions_email) expect(isReservedMailAddress(record.professions_email)).toBe(true);
      for (const phone of record.phone_numbers ?? []) {
        expect(isFictionalPhone(String(phone.phone_number)), phone.phone_number).toBe(true);
        phones += 1;
      }
      if (record.mobile_phone) expect(isFictionalPhone(record.mobile_phone)).toBe(true);
    }
    expect(phones).toBeGreaterThan(100);
    // Numbers are never shared: matching by phone finds one person.
    const [shared] = await store.query(
      'SELECT count(*) - count(DISTINCT phone_hash) AS n FROM prospects WHERE phone_hash IS NOT NULL',
    );
    expect(Number(shared?.n)).toBe(0);
  });

  it('agrees with the profile, the has_email filter and prospect match', async () => {
    const withEmail = await fetchPage({ has_email: { value: true } });
    const without = await fetchPage({ has_email: { value: false } });
    const asked = [...withEmail.slice(0, 25), ...without.slice(0, 25)];
    const body = await bulk<ContactsInformationRecord>(
      contacts,
      asked.map((p) => p.prospect_id),
    );
    const byId = new Map(body.data.map((row) => [row.prospect_id, row.data]));
    // Everyone with a work email has contacts; the rest only when they have a personal email or a phone.
    expect(body.total_results).toBe(body.data.length);
    expect(body.data.length).toBeGreaterThanOrEqual(25);
    expect(body.data.length).toBeLessThan(50);
    for (const prospect of asked) {
      const record = byId.get(prospect.prospect_id);
      const work = record?.professions_email ?? null;
      expect(work === null ? null : hashEmail(work)).toBe(prospect.professional_email_hashed ?? null);
    }

    // Each work address, personal address and phone number given out finds its prospect again.
    const items: { item: Record<string, string>; id: string }[] = [];
    for (const row of body.data) {
      const work = row.data.professions_email;
      const personal = row.data.emails?.find((e) => e.type === 'personal')?.address;
      const phone = row.data.phone_numbers?.[0]?.phone_number;
      if (work) items.push({ item: { email: work }, id: row.prospect_id });
      if (personal) items.push({ item: { email: personal.toUpperCase() }, id: row.prospect_id });
      if (phone) items.push({ item: { phone_number: phone }, id: row.prospect_id });
    }
    expect(items.some(({ item }) => item.phone_number)).toBe(true);
    const matched = okBody<{ matched_prospects: { prospect_id: string | null }[] }>(
      ROUTES.matchProspects,
      await call(sandbox.app, 'POST', ROUTES.matchProspects.path, {
        prospects_to_match: items.slice(0, 50).map(({ item }) => item),
      }),
    );
    expect(matched.matched_prospects.map((m) => m.prospect_id)).toEqual(
      items.slice(0, 50).map(({ id }) => id),
    );
  });
});

describe('posts', () => {
  it('are the single-prospect posts records, for the prospects that have posts', async () => {
    const withPosts = await ids('SELECT prospect_id AS id FROM prospect_posts ORDER BY pix LIMIT 10');
    const body = await bulk<Record<string, unknown>>(posts, [...withPosts, UNKNOWN]);
    expect(body.data.map((row) => row.prospect_id)).toEqual(withPosts);
    for (const row of body.data) {
      const single = okBody<{ data: unknown }>(
        ROUTES.enrichProspectPosts,
        await call(sandbox.app, 'POST', ROUTES.enrichProspectPosts.path, { prospect_id: row.prospect_id }),
      );
      expect(row.data).toEqual(single.data);
    }
    // The provider's path name reaches the same operation.
    const aliased = await call(sandbox.app, 'POST', '/v1/prospects/linkedin_posts/bulk_enrich', {
      prospect_ids: withPosts,
      parameters: { offline_mode: 'true' },
    });
    expect(okBody<Bulk<unknown>>(posts, aliased).data).toEqual(body.data);
  });
});

describe('limits and errors', () => {
  const some = Array.from({ length: 51 }, (_, i) => i.toString(16).padStart(40, 'a'));

  it('refuses invalid bodies with 422 naming the field', async () => {
    for (const route of [profiles, contacts, posts]) {
      const cases: [unknown, (string | number)[]][] = [
        [{ prospect_ids: some }, ['body', 'prospect_ids']],
        [{ prospect_ids: [] }, ['body', 'prospect_ids']],
        [{ prospect_ids: ['NOT-AN-ID'] }, ['body', 'prospect_ids', 0]],
        [{ business_ids: [UNKNOWN] }, ['body', 'prospect_ids']],
        [{}, ['body', 'prospect_ids']],
      ];
      for (const [payload, loc] of cases) {
        const detail = detailOf(await call(sandbox.app, 'POST', route.path, payload));
        expect(
          detail.map((d) => d.loc),
          `${route.path} ${JSON.stringify(payload).slice(0, 80)}`,
        ).toContainEqual(loc);
      }
    }
    const detail = detailOf(
      await call(sandbox.app, 'POST', posts.path, {
        prospect_ids: [UNKNOWN],
        parameters: { offline_mode: 1 },
      }),
    );
    expect(detail[0]?.loc.slice(0, 3)).toEqual(['body', 'parameters', 'offline_mode']);
  });

  it('answers 401 without a key, and 403 (no credits) and 429 as every billed operation does', async () => {
    const body = { prospect_ids: [UNKNOWN] };
    expect((await call(sandbox.app, 'POST', contacts.path, body, {})).statusCode).toBe(401);
    const rules: FaultRule[] = [
      { match: 'bulkEnrichProspect*', kind: 'no_credits', count: 3 },
      { match: '/v1/prospects/*/bulk_enrich', kind: 'rate_limit', count: 3, retryAfterSeconds: 2 },
    ];
    sandbox.app.sandbox.faults.configure({ rules });
    try {
      for (const route of [profiles, contacts, posts]) {
        const refused = await call(sandbox.app, 'POST', route.path, body);
        expect(refused.statusCode).toBe(403);
        expect(refused.json<{ details: string }>().details).toMatch(/insufficient credits/);
      }
      for (const route of [profiles, contacts, posts]) {
        const limited = await call(sandbox.app, 'POST', route.path, body, { api_key: API_KEY });
        expect(limited.statusCode).toBe(429);
        expect(limited.headers['retry-after']).toBe('2');
      }
      expect((await call(sandbox.app, 'POST', posts.path, body)).statusCode).toBe(200);
    } finally {
      sandbox.app.sandbox.faults.configure({ rules: [] });
    }
  });
});
