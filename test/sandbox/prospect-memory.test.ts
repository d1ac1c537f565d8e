// Prospect match and prospect records from memory answer exactly as the queries do: match on several
// hundred inputs (each key kind of known people, case and spacing variants, employer constraints, names
// shared by several people, unknown people, names without a company), records of every prospect dataset
// for known, repeated, unknown and upper-case ids.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROSPECT_DATASETS, ROUTES, type ProspectMatchInput } from '../../contract/index.js';
import { employerWeights, generateBusinessRows } from '../../sandbox/data/businesses.js';
import { generateProspect, type ProspectRow } from '../../sandbox/data/prospects.js';
import { seedKey } from '../../sandbox/data/random.js';
import { BusinessKeys } from '../../sandbox/query/business-keys.js';
import { matchProspects } from '../../sandbox/query/match.js';
import { ProspectKeys } from '../../sandbox/query/prospect-keys.js';
import { lookupProspectRecords } from '../../sandbox/query/prospect-records.js';
import { call, okBody, startTestSandbox, TEST_WORLD, type TestSandbox } from './support.js';

let sandbox: TestSandbox;
let keys: ProspectKeys;
let people: ProspectRow[];

beforeAll(async () => {
  sandbox = await startTestSandbox();
  const { store } = sandbox.app.sandbox;
  keys = await ProspectKeys.load(store, await BusinessKeys.load(store));
  const rows = generateBusinessRows(TEST_WORLD.seed, TEST_WORLD.businesses);
  const context = {
    key: seedKey(TEST_WORLD.seed),
    rows,
    employerWeights: employerWeights(rows),
    emails: new Set<string>(),
    phones: new Set<string>(),
  };
  // Replaying the generator gives the addresses and numbers behind the stored hashes.
  people = Array.from({ length: 1500 }, (_, pix) => generateProspect(pix, context));
});
afterAll(() => sandbox.close());

interface Profile {
  full_name: string;
  company_name: string;
  network: string;
}

function inputsFor(): ProspectMatchInput[] {
  const profile = (p: ProspectRow) => JSON.parse(p.recordJson) as Profile;
  const nameCount = new Map<string, number>();
  for (const p of people) nameCount.set(p.fullNameNorm, (nameCount.get(p.fullNameNorm) ?? 0) + 1);
  const inputs: ProspectMatchInput[] = [];
  people.slice(0, 120).forEach((p, i) => {
    const other = people[(i * 37 + 11) % people.length] as ProspectRow;
    const record = profile(p);
    if (p.email) {
      inputs.push({ email: `  ${p.email.toUpperCase()} ` }, { email: p.email, business_id: p.businessId });
      inputs.push({ email: p.email, business_id: other.businessId });
    }
    if (p.personalEmail) inputs.push({ email: p.personalEmail });
    if (p.phone) inputs.push({ phone_number: p.phone.replace(/^\+/, '00').replace(/(\d{3})/g, '$1 ') });
    inputs.push(
      { network: `https://www.${record.network}/` },
      { network: record.network.toUpperCase() },
      { full_name: record.full_name.toLowerCase(), company_name: `${record.company_name}, Inc.` },
      { full_name: `  ${record.full_name.toUpperCase()}`, company_name: record.company_name.toLowerCase() },
      { full_name: record.full_name, company_name: 'Surely Nonexistent Holdings' },
      { full_name: record.full_name },
      { full_name: record.full_name, company_name: record.company_name, business_id: other.businessId },
      // An unknown email falls through to the next key.
      { email: `nobody.${i}@nowhere.example`, network: record.network },
    );
  });
  // Names several people share: the query's order (row index) decides among those that fit.
  for (const p of people.filter((q) => (nameCount.get(q.fullNameNorm) ?? 0) > 1).slice(0, 60)) {
    const record = profile(p);
    inputs.push({ full_name: record.full_name, company_name: record.company_name });
  }
  inputs.push(
    { email: 'nobody@nowhere.example' },
    { email: 'not an address' },
    { phone_number: '12345' },
    { phone_number: '+1 555 000 0000' },
    { network: 'https://www.network.example/in/no-such-person-0000' },
    { network: 'https://www.network.example/company/velora' },
    { network: 'network.example/in/%E0%A4%A' },
    { network: 'network.example/in/\ud800x' },
    { full_name: 'Nobody Atall', company_name: 'Nowhere Ltd' },
    { company_name: 'Velora' },
    {},
  );
  return inputs;
}

async function inBatches<T>(
  items: readonly ProspectMatchInput[],
  work: (batch: ProspectMatchInput[]) => Promise<T[]>,
) {
  const out: T[] = [];
  for (let i = 0; i < items.length; i += 50) out.push(...(await work(items.slice(i, i + 50))));
  return out;
}

describe('prospect match from in-memory keys', () => {
  it('answers exactly as the query does, for every kind of input', async () => {
    const { store } = sandbox.app.sandbox;
    const inputs = inputsFor();
    expect(inputs.length).toBeGreaterThan(1000);
    const fromKeys = await inBatches(inputs, (batch) => matchProspects(store, batch, keys));
    const fromQuery = await inBatches(inputs, (batch) => matchProspects(store, batch));
    expect(fromKeys).toEqual(fromQuery);
    // The sample has matches and misses of every kind.
    expect(fromKeys.filter((id) => id !== null).length).toBeGreaterThan(700);
    expect(fromKeys.filter((id) => id === null).length).toBeGreaterThan(300);
    // All of it at once too (one query for all the keys).
    expect(await matchProspects(store, inputs, keys)).toEqual(await matchProspects(store, inputs));
  });

  it('is what the route answers once the keys are loaded', async () => {
    // Those the contract lets through (a name needs a company name there: 422 otherwise).
    const inputs = inputsFor()
      .filter((input) => !input.full_name || input.company_name)
      .slice(0, 50);
    const expected = await matchProspects(sandbox.app.sandbox.store, inputs);
    const body = okBody<{ matched_prospects: { prospect_id: string | null }[] }>(
      ROUTES.matchProspects,
      await call(sandbox.app, 'POST', ROUTES.matchProspects.path, { prospects_to_match: inputs }),
    );
    expect(body.matched_prospects.map((m) => m.prospect_id)).toEqual(expected);
  });

  it('maps ids to row indexes and back', () => {
    for (const p of people.slice(0, 200)) {
      expect(keys.pixOf(p.prospectId)).toBe(p.pix);
      expect(keys.idOf(p.pix)).toBe(p.prospectId);
    }
    expect(keys.pixOf((people[0] as ProspectRow).prospectId.toUpperCase())).toBeUndefined();
    expect(keys.pixOf('0'.repeat(40))).toBeUndefined();
  });
});

describe('prospect records from memory', () => {
  it('serve the bytes the query serves, for every prospect dataset', async () => {
    const { store, prospectRecords } = sandbox.app.sandbox;
    // Profiles and contacts may be loading already (they load at start); posts load when asked.
    await prospectRecords.preload([...PROSPECT_DATASETS]);
    await prospectRecords.settle();
    const ids = [
      ...people.slice(0, 300).map((p) => p.prospectId),
      (people[5] as ProspectRow).prospectId,
      (people[7] as ProspectRow).prospectId.toUpperCase(),
      '0'.repeat(40),
    ];
    for (const dataset of PROSPECT_DATASETS) {
      expect(prospectRecords.isLoaded(dataset)).toBe(true);
      const fromMemory = await lookupProspectRecords(store, dataset, ids, {
        keys: () => keys,
        records: prospectRecords,
      });
      const fromQuery = await lookupProspectRecords(store, dataset, ids);
      expect(fromMemory.map((b) => b?.toString('utf8') ?? null)).toEqual(
        fromQuery.map((b) => b?.toString('utf8') ?? null),
      );
      expect(fromMemory.filter((b) => b !== null).length).toBeGreaterThan(20);
      expect(fromMemory.at(-1)).toBeNull();
    }
  });
});
