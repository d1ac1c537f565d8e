// Every endpoint of the sandbox (events aside): a valid call whose body matches the contract, the
// envelope's correlation id and timing, 401 without a key, and the data semantics a caller relies on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BULK_DATASETS,
  BULK_ENRICH_ROUTES,
  CORRELATION_ID_HEADER,
  ROUTES,
  SERVICE_VERSION,
  buildOpenApiDocument,
} from '../../contract/index.js';
import { API_KEY, call, okBody, startTestSandbox, type TestSandbox } from './support.js';

let sandbox: TestSandbox;
let ids: readonly string[];

beforeAll(async () => {
  sandbox = await startTestSandbox();
  ids = sandbox.app.sandbox.store.businessIds;
});
afterAll(() => sandbox.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function idsWithout(dataset: string): Promise<string[]> {
  const rows = await sandbox.app.sandbox.store.query(
    `SELECT business_id FROM businesses WHERE bix NOT IN (SELECT bix FROM dataset_${dataset}) ORDER BY bix LIMIT 5`,
  );
  return rows.map((row) => String(row.business_id));
}

async function idsWith(dataset: string, limit = 5): Promise<string[]> {
  const rows = await sandbox.app.sandbox.store.query(
    `SELECT business_id FROM dataset_${dataset} ORDER BY bix LIMIT ${limit}`,
  );
  return rows.map((row) => String(row.business_id));
}

describe('operational endpoints', () => {
  it('answers the healthcheck and version as JSON strings, without a key', async () => {
    const health = await call(sandbox.app, 'GET', '/healthcheck/http', undefined, {});
    expect(okBody(ROUTES.healthcheck, health)).toBe('OK');
    const version = await call(sandbox.app, 'GET', '/version/', undefined, {});
    expect(okBody(ROUTES.version, version)).toBe(SERVICE_VERSION);
  });

  it('returns a JSON string of exactly the requested number of bytes', async () => {
    for (const bytes of [2, 3, 1000, 1_000_000]) {
      const response = await call(sandbox.app, 'GET', `/healthcheck/http_payload/${bytes}`);
      expect(okBody(ROUTES.healthcheckPayload, response)).toMatch(/^x*$/);
      expect(response.rawPayload.length).toBe(bytes);
    }
  });

  it('serves the OpenAPI document of the contract', async () => {
    const response = await call(sandbox.app, 'GET', '/openapi.json', undefined, {});
    expect(response.statusCode).toBe(200);
    const document = response.json<ReturnType<typeof buildOpenApiDocument>>();
    expect(document.info.version).toBe(SERVICE_VERSION);
    expect(Object.keys(document.paths)).toEqual(Object.keys(buildOpenApiDocument().paths));
  });

  it('puts a fresh correlation id and the measured time on every envelope', async () => {
    const first = await call(sandbox.app, 'POST', ROUTES.enrichHierarchy.path, { business_id: ids[0] });
    const second = await call(sandbox.app, 'POST', ROUTES.enrichHierarchy.path, { business_id: ids[0] });
    const a = okBody<{ response_context: { correlation_id: string; time_took_in_seconds: number } }>(
      ROUTES.enrichHierarchy,
      first,
    );
    const b = okBody<{ response_context: { correlation_id: string } }>(ROUTES.enrichHierarchy, second);
    expect(a.response_context.correlation_id).toMatch(UUID);
    expect(a.response_context.correlation_id).not.toBe(b.response_context.correlation_id);
    expect(first.headers[CORRELATION_ID_HEADER]).toBe(a.response_context.correlation_id);
    expect(a.response_context.time_took_in_seconds).toBeGreaterThan(0);
    expect(a.response_context.time_took_in_seconds).toBeLessThan(5);
  });
});

describe('authentication', () => {
  it('answers 401 with the documented body to every (K) operation without a known key', async () => {
    const keyed = [
      ROUTES.healthcheckPayload,
      ROUTES.matchBusinesses,
      ROUTES.fetchBusinesses,
      ROUTES.autocomplete,
      ROUTES.businessStats,
      ROUTES.enrichHierarchy,
      ROUTES.matchProspects,
      ROUTES.fetchProspects,
      ROUTES.enrichProspectPosts,
      ...Object.values(BULK_ENRICH_ROUTES),
    ];
    for (const route of keyed) {
      const url = route.path.replace(':response_bytes', '10');
      for (const headers of [{}, { api_key: 'not-a-key' }, { api_key: '' }] as Record<string, string>[]) {
        const response = await call(
          sandbox.app,
          route.method,
          url,
          route.method === 'GET' ? undefined : {},
          headers,
        );
        expect(response.statusCode, `${route.operationId} ${JSON.stringify(headers)}`).toBe(401);
        const body = response.json<{
          response_context: { request_status: string; correlation_id: string };
          error: unknown;
        }>();
        expect(body.response_context.request_status).toBe('failure');
        expect(body.response_context.correlation_id).toMatch(UUID);
        expect(body.error).toEqual({ code: 'UNAUTHORIZED', message: 'Invalid or missing API key' });
      }
    }
  });
});

describe('bulk enrichment', () => {
  it.each(BULK_DATASETS)(
    '%s: records of businesses with data, in input order, matching the contract',
    async (dataset) => {
      const withData = await idsWith(dataset, 3);
      expect(withData.length).toBeGreaterThan(0);
      const without = await idsWithout(dataset);
      const requested = [without[0], withData[2], withData[0], 'f'.repeat(32), withData[1]].filter(
        (id): id is string => id !== undefined,
      );
      const body = okBody<{
        total_results: number;
        data: { business_id: string; data: Record<string, unknown> }[];
        response_context: { request_status: string };
      }>(
        BULK_ENRICH_ROUTES[dataset],
        await call(sandbox.app, 'POST', BULK_ENRICH_ROUTES[dataset].path, { business_ids: requested }),
      );
      const expected = requested.filter((id) => withData.includes(id));
      expect(body.data.map((row) => row.business_id)).toEqual(expected);
      expect(body.total_results).toBe(expected.length);
      expect(body.response_context.request_status).toBe('success');
    },
  );

  it("leaves out ids without data and says 'miss' when none has any", async () => {
    const without = await idsWithout('pc_strategy_10k');
    const body = okBody<{
      total_results: number;
      data: unknown[];
      response_context: { request_status: string };
    }>(
      BULK_ENRICH_ROUTES.pc_strategy_10k,
      await call(sandbox.app, 'POST', BULK_ENRICH_ROUTES.pc_strategy_10k.path, {
        business_ids: [...without, 'a'.repeat(32)],
      }),
    );
    expect(body).toMatchObject({ total_results: 0, data: [], response_context: { request_status: 'miss' } });
  });

  it('has 10-K and financial records only for listed companies with a ticker', async () => {
    const store = sandbox.app.sandbox.store;
    for (const dataset of [
      'pc_business_challenges_10k',
      'pc_strategy_10k',
      'pc_competitive_landscape_10k',
      'financial_indicators',
    ]) {
      const [row] = await store.query(
        `SELECT count(*) AS n, count(*) FILTER (WHERE b.is_public) AS listed FROM dataset_${dataset} d JOIN businesses b USING (bix)`,
      );
      expect(Number(row?.n)).toBeGreaterThan(0);
      expect(Number(row?.listed)).toBe(Number(row?.n));
    }
    const [coverage] = await store.query(
      `SELECT (SELECT count(*) FROM dataset_funding_and_acquisition) AS funding, (SELECT count(*) FROM dataset_firmographics) AS firmographics, (SELECT count(*) FROM businesses) AS businesses`,
    );
    expect(Number(coverage?.funding)).toBeLessThan(Number(coverage?.businesses) / 2);
    expect(Number(coverage?.firmographics)).toBeLessThan(Number(coverage?.businesses));
  });

  it('serves the same bytes from memory as from the database', async () => {
    const records = sandbox.app.sandbox.records;
    expect(records.isLoaded('firmographics')).toBe(true);
    const sample = await idsWith('firmographics', 20);
    const fromMemory = await records.lookup(
      'firmographics',
      sample.map((id) => sandbox.app.sandbox.store.bixOf(id) as number),
    );
    const rows = await sandbox.app.sandbox.store.query(
      `SELECT json FROM dataset_firmographics ORDER BY bix LIMIT 20`,
    );
    expect(fromMemory.map((buffer) => buffer?.toString('utf8'))).toEqual(rows.map((row) => String(row.json)));
  });

  it('keeps only the requested website keywords', async () => {
    const [id] = await idsWith('company_website_keywords', 1);
    const all = okBody<{ data: { data: { text_results: { keyword: string }[] } }[] }>(
      BULK_ENRICH_ROUTES.company_website_keywords,
      await call(sandbox.app, 'POST', BULK_ENRICH_ROUTES.company_website_keywords.path, {
        business_ids: [id],
      }),
    );
    const keyword = all.data[0]?.data.text_results[0]?.keyword as string;
    const some = okBody<{ data: { data: { text_results: { keyword: string }[] } }[] }>(
      BULK_ENRICH_ROUTES.company_website_keywords,
      await call(sandbox.app, 'POST', BULK_ENRICH_ROUTES.company_website_keywords.path, {
        business_ids: [id],
        parameters: { keywords: [keyword.toUpperCase()] },
      }),
    );
    expect(some.data[0]?.data.text_results.map((r) => r.keyword)).toEqual([keyword]);
  });
});

describe('company hierarchies', () => {
  it('returns the tree with level 0 as the root and each level the children of the one above', async () => {
    const rows = await sandbox.app.sandbox.store.query(
      'SELECT business_id FROM businesses WHERE parent_bix IS NOT NULL AND root_bix <> parent_bix ORDER BY bix LIMIT 1',
    );
    const id = String(rows[0]?.business_id);
    const body = okBody<{
      entity_id: string;
      data: {
        business_id: string;
        parent_company_id: string;
        ultimate_parent_id: string;
        subsidiaries: { id: string }[];
        organization_tree: { level: number; companies: { id: string; parent_id: string | null }[] }[];
      };
    }>(
      ROUTES.enrichHierarchy,
      await call(sandbox.app, 'POST', ROUTES.enrichHierarchy.path, { business_id: id }),
    );
    expect(body.entity_id).toBe(id);
    const tree = body.data.organization_tree;
    expect(tree[0]?.level).toBe(0);
    expect(tree[0]?.companies).toHaveLength(1);
    expect(tree[0]?.companies[0]).toMatchObject({
      id: body.data.ultimate_parent_id,
      parent_id: null,
      parent_name: null,
    });
    for (let level = 1; level < tree.length; level += 1) {
      const above = new Set(tree[level - 1]?.companies.map((c) => c.id));
      expect(tree[level]?.level).toBe(level);
      for (const company of tree[level]?.companies ?? [])
        expect(above.has(company.parent_id as string)).toBe(true);
    }
    const members = tree.flatMap((level) => level.companies);
    expect(members.find((c) => c.id === id)?.parent_id).toBe(body.data.parent_company_id);
    expect(
      members
        .filter((c) => c.parent_id === id)
        .map((c) => c.id)
        .sort(),
    ).toEqual(body.data.subsidiaries.map((s) => s.id).sort());
  });

  it("says 'miss' with no data for a business outside any tree", async () => {
    const rows = await sandbox.app.sandbox.store.query(
      'SELECT business_id FROM businesses WHERE root_bix IS NULL LIMIT 1',
    );
    const body = okBody<{ data: unknown; response_context: { request_status: string } }>(
      ROUTES.enrichHierarchy,
      await call(sandbox.app, 'POST', ROUTES.enrichHierarchy.path, {
        business_id: String(rows[0]?.business_id),
      }),
    );
    expect(body.data).toBeNull();
    expect(body.response_context.request_status).toBe('miss');
  });
});

describe('stats and autocomplete', () => {
  it('counts businesses per category nested by country, revenue and size', async () => {
    const body = okBody<{
      total_results: number;
      stats: Record<string, Record<string, Record<string, number>>>;
    }>(
      ROUTES.businessStats,
      await call(sandbox.app, 'POST', ROUTES.businessStats.path, {
        filters: { country_code: { values: ['us'] } },
      }),
    );
    const [row] = await sandbox.app.sandbox.store.query(
      "SELECT count(*) AS n FROM businesses WHERE country_code = 'US'",
    );
    expect(body.total_results).toBe(Number(row?.n));
    for (const table of Object.values(body.stats)) {
      const sum = Object.values(table)
        .flatMap((inner) => Object.values(inner))
        .reduce((a, b) => a + b, 0);
      expect(sum).toBe(body.total_results);
    }
    expect(Object.keys(Object.values(body.stats.business_categories_per_location ?? {})[0] ?? {})).toEqual([
      'US',
    ]);
  });

  it('completes each of the 19 fields from the data or the fixed enums', async () => {
    const fields = (
      ROUTES.autocomplete.querystring as unknown as { properties: { field: { enum: string[] } } }
    ).properties.field.enum;
    expect(fields).toHaveLength(19);
    for (const field of fields) {
      const items = okBody<{ label: string; value: string; query: string }[]>(
        ROUTES.autocomplete,
        await call(sandbox.app, 'GET', `/v1/businesses/autocomplete?field=${field}`),
      );
      expect(items.length, field).toBeGreaterThan(0);
    }
    const levels = okBody<{ value: string }[]>(
      ROUTES.autocomplete,
      await call(sandbox.app, 'GET', '/v1/businesses/autocomplete?field=job_level&query=vice'),
    );
    expect(levels.map((item) => item.value)).toEqual(['vice president']);
    const countries = okBody<{ label: string; value: string; query: string }[]>(
      ROUTES.autocomplete,
      await call(sandbox.app, 'GET', '/v1/businesses/autocomplete?field=country_code&query=united'),
    );
    expect(countries).toContainEqual({ query: 'united', label: 'United States', value: 'us' });
  });

  it('widens job titles to related ones with semantic search', async () => {
    const plain = okBody<{ value: string }[]>(
      ROUTES.autocomplete,
      await call(sandbox.app, 'GET', '/v1/businesses/autocomplete?field=job_title&query=developer'),
    );
    const semantic = okBody<{ value: string }[]>(
      ROUTES.autocomplete,
      await call(
        sandbox.app,
        'GET',
        '/v1/businesses/autocomplete?field=job_title&query=developer&semantic_search=true',
      ),
    );
    expect(plain.every((item) => /developer/i.test(item.value))).toBe(true);
    expect(semantic.map((item) => item.value)).toContain('Software Engineer');
  });
});

describe('prospect posts', () => {
  it('returns one posts record, or a miss for a prospect without posts', async () => {
    const store = sandbox.app.sandbox.store;
    const [withPosts] = await store.query('SELECT prospect_id FROM prospect_posts ORDER BY pix LIMIT 1');
    const [withoutPosts] = await store.query(
      'SELECT prospect_id FROM prospects WHERE pix NOT IN (SELECT pix FROM prospect_posts) LIMIT 1',
    );
    const hit = okBody<{ data: { post_url: string; created_at: string }; entity_id: string }>(
      ROUTES.enrichProspectPosts,
      await call(sandbox.app, 'POST', ROUTES.enrichProspectPosts.path, {
        prospect_id: String(withPosts?.prospect_id),
      }),
    );
    expect(hit.entity_id).toBe(String(withPosts?.prospect_id));
    expect(hit.data.post_url).toMatch(/^https:\/\//);
    const miss = okBody<{ data: unknown; response_context: { request_status: string } }>(
      ROUTES.enrichProspectPosts,
      await call(sandbox.app, 'POST', ROUTES.enrichProspectPosts.path, {
        prospect_id: String(withoutPosts?.prospect_id),
      }),
    );
    expect(miss).toMatchObject({ data: null, response_context: { request_status: 'miss' } });
  });
});

describe('unknown routes', () => {
  it('answer 404 in the FastAPI form', async () => {
    const response = await call(sandbox.app, 'GET', '/v1/nothing-here', undefined, { api_key: API_KEY });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ detail: 'Not Found' });
  });
});
