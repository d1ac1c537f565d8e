// The generated world: the same seed gives byte-identical answers from two fresh generations (one with
// prospects made in a worker thread, one inline), the file is reused while seed and sizes match and
// rebuilt when they do not, and the committed demo inputs still match their generators.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULK_DATASETS, BULK_ENRICH_ROUTES, ROUTES } from '../../contract/index.js';
import { buildSandbox } from '../../sandbox/app.js';
import { SAMPLE_PATH, sampleInputLines } from '../../sandbox/sample-input.js';
import { SAMPLE_PEOPLE_PATH, samplePeople } from '../../sandbox/sample-people.js';
import { isFictionalPhone, isReservedMailAddress } from '../../sandbox/data/contacts.js';
import { API_KEY, call, tempDir } from './support.js';

const WORLD = { seed: 'determinism', businesses: 600, prospects: 2500 } as const;
const keys = [{ name: 'alpha', key: API_KEY }];

async function answers(app: FastifyInstance): Promise<string[]> {
  const strip = (text: string) => {
    const body = JSON.parse(text) as Record<string, unknown>;
    delete body.response_context;
    return JSON.stringify(body);
  };
  const ids = app.sandbox.store.businessIds.slice(0, 50);
  const out: string[] = [];
  for (const dataset of BULK_DATASETS) {
    out.push(strip((await call(app, 'POST', BULK_ENRICH_ROUTES[dataset].path, { business_ids: ids })).body));
  }
  out.push(
    strip(
      (
        await call(app, 'POST', ROUTES.fetchProspects.path, {
          mode: 'full',
          size: 60000,
          page_size: 100,
          page: 3,
        })
      ).body,
    ),
  );
  out.push(
    strip(
      (
        await call(app, 'POST', ROUTES.fetchProspects.path, {
          mode: 'full',
          size: 500,
          page_size: 100,
          filters: { job_level: { values: ['manager'] }, company_country_code: { values: ['us'] } },
        })
      ).body,
    ),
  );
  out.push(
    strip(
      (
        await call(app, 'POST', ROUTES.fetchBusinesses.path, {
          mode: 'full',
          size: 600,
          page_size: 200,
          page: 2,
        })
      ).body,
    ),
  );
  const [tree] = await app.sandbox.store.query('SELECT business_id FROM hierarchies ORDER BY bix LIMIT 1');
  out.push(
    strip(
      (await call(app, 'POST', ROUTES.enrichHierarchy.path, { business_id: String(tree?.business_id) })).body,
    ),
  );
  out.push(strip((await call(app, 'POST', ROUTES.businessStats.path, { filters: {} })).body));
  return out;
}

describe('same seed, same data', () => {
  const dirs = [tempDir(), tempDir(), tempDir()];
  let first: FastifyInstance;
  let second: FastifyInstance;

  beforeAll(async () => {
    first = await buildSandbox({
      dataDir: dirs[0]!.dir,
      ...WORLD,
      apiKeys: keys,
      rateLimitPerMinute: 0,
      events: false,
      generationWorker: 'always',
    });
    second = await buildSandbox({
      dataDir: dirs[1]!.dir,
      ...WORLD,
      apiKeys: keys,
      rateLimitPerMinute: 0,
      events: false,
      generationWorker: 'never',
    });
  });
  afterAll(async () => {
    await first.close();
    await second.close();
    for (const dir of dirs) dir.remove();
  });

  it('gives byte-identical fetch and enrichment results from two fresh generations', async () => {
    const a = await answers(first);
    const b = await answers(second);
    expect(a.length).toBe(BULK_DATASETS.length + 5);
    expect(a).toEqual(b);
    expect(first.sandbox.store.meta.generated).toBe(true);
  });

  it('gives different data for a different seed', async () => {
    const other = await buildSandbox({
      dataDir: dirs[2]!.dir,
      ...WORLD,
      seed: 'another',
      apiKeys: keys,
      rateLimitPerMinute: 0,
      events: false,
    });
    try {
      expect(other.sandbox.store.businessIds.slice(0, 10)).not.toEqual(
        first.sandbox.store.businessIds.slice(0, 10),
      );
    } finally {
      await other.close();
    }
  });
});

describe('the database file', () => {
  const dir = tempDir();
  afterAll(() => dir.remove());

  it('records seed and sizes, is reused while they match and rebuilt when they change', async () => {
    const options = {
      dataDir: dir.dir,
      seed: 'reuse',
      businesses: 300,
      prospects: 900,
      apiKeys: keys,
      events: false,
    } as const;
    const made = await buildSandbox(options);
    const meta = made.sandbox.store.meta;
    const ids = made.sandbox.store.businessIds.slice();
    await made.close();
    expect(meta).toMatchObject({ seed: 'reuse', businesses: 300, prospects: 900, generated: true });

    const reused = await buildSandbox(options);
    expect(reused.sandbox.store.meta.generated).toBe(false);
    expect(reused.sandbox.store.businessIds).toEqual(ids);
    await reused.close();

    const resized = await buildSandbox({ ...options, prospects: 1000 });
    expect(resized.sandbox.store.meta).toMatchObject({ generated: true, prospects: 1000 });
    const [count] = await resized.sandbox.store.query('SELECT count(*) AS n FROM prospects');
    expect(Number(count?.n)).toBe(1000);
    await resized.close();
  });
});

describe('demo input', () => {
  it('samples/companies.csv is what sandbox/sample-input.ts writes for the default seed', () => {
    const committed = readFileSync(SAMPLE_PATH, 'utf8');
    expect(committed).toBe(`${sampleInputLines().join('\n')}\n`);
    const lines = committed.trimEnd().split('\n');
    expect(lines[0]).toBe('company,website,domain,network_url,country');
    expect(lines.length).toBeGreaterThanOrEqual(251);
    expect(lines.filter((line) => /^,*$|^,,,,[A-Z]*$/.test(line)).length).toBeGreaterThan(0);
  });

  it('samples/people.csv is what sandbox/sample-people.ts writes: known, unknown and unusable people, on reserved addresses and numbers only', () => {
    const committed = readFileSync(SAMPLE_PEOPLE_PATH, 'utf8');
    const sample = samplePeople();
    expect(committed).toBe(`${sample.lines.join('\n')}\n`);
    const lines = committed.trimEnd().split('\n');
    expect(lines[0]).toBe('Full Name,Company,Work Email,Phone,LinkedIn URL');
    const count = (kind: string) => sample.rows.filter((r) => r.kind === kind).length;
    expect(count('known')).toBeGreaterThan(250);
    expect(count('unknown')).toBeGreaterThan(5);
    expect(count('unusable')).toBeGreaterThan(5);
    for (const line of lines.slice(1)) {
      const [, , email, phone] = line.split(',') as [string, string, string, string, string];
      if (email.includes('@') && /@[^\s@]+\.[^\s@]+/.test(email))
        expect(isReservedMailAddress(email.trim()), email).toBe(true);
      const digits = phone.replace(/\D/g, '').replace(/^00/, '');
      if (digits.length >= 8) expect(isFictionalPhone(`+${digits}`), phone).toBe(true);
    }
  });
});
