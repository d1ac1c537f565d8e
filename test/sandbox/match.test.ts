// Business and prospect matching: input order and length kept, null where nothing matched, matches by
// domain / URL / network URL / name anchored by domain, and by email, phone, profile or name + company.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../contract/index.js';
import { generateBusinessRows, type BusinessRow } from '../../sandbox/data/businesses.js';
import { PROSPECT_COLUMNS, prospectBatches } from '../../sandbox/data/prospect-batches.js';
import { generateProspect } from '../../sandbox/data/prospects.js';
import { employerWeights } from '../../sandbox/data/businesses.js';
import { seedKey } from '../../sandbox/data/random.js';
import { BusinessKeys } from '../../sandbox/query/business-keys.js';
import { matchBusinesses as matchInStore } from '../../sandbox/query/match.js';
import { call, okBody, startTestSandbox, TEST_WORLD, type TestSandbox } from './support.js';

let sandbox: TestSandbox;
let rows: BusinessRow[];

beforeAll(async () => {
  sandbox = await startTestSandbox();
  rows = generateBusinessRows(TEST_WORLD.seed, TEST_WORLD.businesses);
});
afterAll(() => sandbox.close());

type Matched = {
  matched_businesses: { input: unknown; business_id: string | null }[];
  total_results: number;
  total_matches: number;
};

async function matchBusinesses(items: Record<string, string>[]): Promise<(string | null)[]> {
  const body = okBody<Matched>(
    ROUTES.matchBusinesses,
    await call(sandbox.app, 'POST', ROUTES.matchBusinesses.path, { businesses_to_match: items }),
  );
  expect(body.matched_businesses.map((m) => m.input)).toEqual(items);
  expect(body.total_results).toBe(items.length);
  expect(body.total_matches).toBe(body.matched_businesses.filter((m) => m.business_id !== null).length);
  return body.matched_businesses.map((m) => m.business_id);
}

describe('business match', () => {
  it('matches by domain, URL spellings, network URL and name with domain, in input order', async () => {
    const withSite = rows.filter((row) => row.domain !== null);
    const [a, b, c, d, e] = withSite as [BusinessRow, BusinessRow, BusinessRow, BusinessRow, BusinessRow];
    const result = await matchBusinesses([
      { domain: a.domain as string },
      { url: `HTTPS://WWW.${(b.domain as string).toUpperCase()}/about?x=1` },
      { name: 'nobody at all', domain: 'no-such-company-anywhere.example' },
      { network_url: `https://www.${c.networkUrl}/` },
      { name: d.name.toUpperCase(), domain: `www.${d.domain as string}` },
      { url: `https://blog.${e.domain as string}` },
    ]);
    expect(result).toEqual([a.businessId, b.businessId, null, c.businessId, d.businessId, e.businessId]);
  });

  it('does not match a name given with the wrong domain, but matches the domain alone', async () => {
    const [a, b] = rows.filter((row) => row.domain !== null) as [BusinessRow, BusinessRow];
    const result = await matchBusinesses([
      { name: b.name, domain: a.domain as string },
      { domain: a.domain as string },
    ]);
    expect(result).toEqual([null, a.businessId]);
  });

  it('matches a name alone only when exactly one business carries it', async () => {
    const counts = new Map<string, number>();
    for (const row of rows) counts.set(row.nameNorm, (counts.get(row.nameNorm) ?? 0) + 1);
    const unique = rows.find((row) => counts.get(row.nameNorm) === 1) as BusinessRow;
    const result = await matchBusinesses([
      { name: `${unique.name}, Inc.` },
      { name: 'Surely Nonexistent Holdings' },
    ]);
    expect(result).toEqual([unique.businessId, null]);
  });
});

describe('business match from in-memory keys', () => {
  it('answers exactly as the table query does, for every kind of input', async () => {
    const { store } = sandbox.app.sandbox;
    const keys = await BusinessKeys.load(store);
    const counts = new Map<string, number>();
    for (const row of rows) counts.set(row.nameNorm, (counts.get(row.nameNorm) ?? 0) + 1);
    const inputs = rows.slice(0, 400).flatMap((row, i) => {
      const other = rows[(i * 37 + 11) % rows.length] as BusinessRow;
      return [
        ...(row.domain ? [{ domain: row.domain }, { url: `https://shop.${row.domain}/x` }] : []),
        { network_url: `https://${row.networkUrl}` },
        { name: row.name },
        { name: row.name, domain: other.domain ?? 'none.example' },
        ...(row.domain ? [{ name: `${row.name} LLC`, domain: `www.${row.domain}` }] : []),
      ];
    });
    inputs.push({ name: 'Surely Nonexistent Holdings' }, { domain: 'no-such.example' });
    const fromKeys = await matchInStore(store, inputs, keys);
    const fromQuery = await matchInStore(store, inputs);
    expect(fromKeys).toEqual(fromQuery);
    // The sample covers matches, misses, and names shared by several businesses (no match by name alone).
    expect(fromKeys.filter((id) => id !== null).length).toBeGreaterThan(1000);
    expect(fromKeys.filter((id) => id === null).length).toBeGreaterThan(100);
    expect(rows.slice(0, 400).some((row) => (counts.get(row.nameNorm) ?? 0) > 1)).toBe(true);
  });
});

describe('prospect match', () => {
  it('matches by email, phone, network profile, and full name with company name', async () => {
    const key = seedKey(TEST_WORLD.seed);
    const context = {
      key,
      rows,
      employerWeights: employerWeights(rows),
      emails: new Set<string>(),
      phones: new Set<string>(),
    };
    // Replaying the generator gives the same people, with the email and phone behind the stored hashes.
    const people = Array.from({ length: 400 }, (_, pix) => generateProspect(pix, context));
    const stored = [...prospectBatches(TEST_WORLD.seed, rows, 400, 400)][0]?.prospects ?? [];
    expect(people.map((p) => p.prospectId)).toEqual(stored.filter((_, i) => i % PROSPECT_COLUMNS === 1));
    const withEmail = people.find((p) => p.email) as (typeof people)[number];
    const withPhone = people.find((p) => p.phone && p !== withEmail) as (typeof people)[number];
    const named = people[10] as (typeof people)[number];
    const namedRecord = JSON.parse(named.recordJson) as {
      full_name: string;
      company_name: string;
      network: string;
    };
    const profiled = JSON.parse((people[20] as (typeof people)[number]).recordJson) as {
      network: string;
      prospect_id: string;
    };
    const items = [
      { email: (withEmail.email as string).toUpperCase() },
      { phone_number: (withPhone.phone as string).replace(/ /g, '-') },
      { network: `https://www.${profiled.network}` },
      { full_name: namedRecord.full_name.toLowerCase(), company_name: namedRecord.company_name },
      { full_name: namedRecord.full_name, company_name: 'Some Other Company' },
      { email: 'nobody@nowhere.example' },
    ];
    const body = okBody<{ matched_prospects: { prospect_id: string | null }[] }>(
      ROUTES.matchProspects,
      await call(sandbox.app, 'POST', ROUTES.matchProspects.path, { prospects_to_match: items }),
    );
    expect(body.matched_prospects.map((m) => m.prospect_id)).toEqual([
      withEmail.prospectId,
      withPhone.prospectId,
      profiled.prospect_id,
      named.prospectId,
      null,
      null,
    ]);
  });
});
