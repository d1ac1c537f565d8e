// Invalid input answers 422 with the FastAPI/Pydantic-v1 body naming the field, for every limit and
// enum of the contract; and no input at all makes the sandbox answer 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULK_ENRICH_ROUTES, ROUTES, type RouteSpec } from '../../contract/index.js';
import { SeededRandom } from '../../sandbox/data/random.js';
import { call, detailOf, startTestSandbox, type TestSandbox } from './support.js';

let sandbox: TestSandbox;
let id: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  id = sandbox.app.sandbox.store.businessIds[0] as string;
});
afterAll(() => sandbox.close());

const prospectFetch = (extra: Record<string, unknown>) => ({
  mode: 'full',
  size: 100,
  page_size: 10,
  ...extra,
});

interface Case {
  name: string;
  route: RouteSpec;
  url?: string;
  body?: unknown;
  loc: (string | number)[];
  type: string;
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => i.toString(16).padStart(32, '0'));

const CASES: Case[] = [
  {
    name: '51 business ids',
    route: BULK_ENRICH_ROUTES.firmographics,
    body: { business_ids: ids(51) },
    loc: ['body', 'business_ids'],
    type: 'value_error.list.max_items',
  },
  {
    name: 'no business ids',
    route: BULK_ENRICH_ROUTES.technographics,
    body: { business_ids: [] },
    loc: ['body', 'business_ids'],
    type: 'value_error.list.min_items',
  },
  {
    name: 'missing business_ids',
    route: BULK_ENRICH_ROUTES.website_changes,
    body: {},
    loc: ['body', 'business_ids'],
    type: 'value_error.missing',
  },
  {
    name: 'malformed business id',
    route: BULK_ENRICH_ROUTES.firmographics,
    body: { business_ids: ['xyz'] },
    loc: ['body', 'business_ids', 0],
    type: 'value_error.str.regex',
  },
  {
    name: 'unknown body key',
    route: BULK_ENRICH_ROUTES.firmographics,
    body: { business_ids: ids(1), extra: 1 },
    loc: ['body', 'extra'],
    type: 'value_error.extra',
  },
  {
    name: 'ids of the wrong type',
    route: BULK_ENRICH_ROUTES.firmographics,
    body: { business_ids: 'abc' },
    loc: ['body', 'business_ids'],
    type: 'type_error.list',
  },
  {
    name: 'keywords not a list',
    route: BULK_ENRICH_ROUTES.company_website_keywords,
    body: { business_ids: ids(1), parameters: { keywords: 'a' } },
    loc: ['body', 'parameters', 'keywords'],
    type: 'type_error.list',
  },
  {
    name: 'date not a timestamp',
    route: BULK_ENRICH_ROUTES.financial_indicators,
    body: { business_ids: ids(1), parameters: { date: 'yesterday' } },
    loc: ['body', 'parameters', 'date'],
    type: 'value_error.datetime',
  },
  {
    name: 'page_size 101',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ page_size: 101, size: 1000 }),
    loc: ['body', 'page_size'],
    type: 'value_error.number.not_le',
  },
  {
    name: 'page_size 0',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ page_size: 0 }),
    loc: ['body', 'page_size'],
    type: 'value_error.number.not_ge',
  },
  {
    name: 'size 60001',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ size: 60_001 }),
    loc: ['body', 'size'],
    type: 'value_error.number.not_le',
  },
  {
    name: 'size below page_size',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ size: 5, page_size: 10 }),
    loc: ['body', '__root__'],
    type: 'value_error',
  },
  {
    name: 'page 0',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ page: 0 }),
    loc: ['body', 'page'],
    type: 'value_error.number.not_ge',
  },
  {
    name: 'size as text',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ size: '100' }),
    loc: ['body', 'size'],
    type: 'type_error.integer',
  },
  {
    name: 'bad mode',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ mode: 'everything' }),
    loc: ['body', 'mode'],
    type: 'type_error.enum',
  },
  {
    name: 'bad job level',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ filters: { job_level: { values: ['emperor'] } } }),
    loc: ['body', 'filters', 'job_level', 'values', 0],
    type: 'type_error.enum',
  },
  {
    name: 'bad department',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ filters: { job_department: { values: ['magic'] } } }),
    loc: ['body', 'filters', 'job_department', 'values', 0],
    type: 'type_error.enum',
  },
  {
    name: 'bad company size',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ filters: { company_size: { values: ['2-3'] } } }),
    loc: ['body', 'filters', 'company_size', 'values', 0],
    type: 'type_error.enum',
  },
  {
    name: 'bad revenue range',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ filters: { company_revenue: { values: ['lots'] } } }),
    loc: ['body', 'filters', 'company_revenue', 'values', 0],
    type: 'type_error.enum',
  },
  {
    name: 'unknown filter',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ filters: { shoe_size: { values: ['9'] } } }),
    loc: ['body', 'filters', 'shoe_size'],
    type: 'value_error.extra',
  },
  {
    name: 'range as text',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ filters: { total_experience_months: { gte: 'ten' } } }),
    loc: ['body', 'filters', 'total_experience_months', 'gte'],
    type: 'type_error.integer',
  },
  {
    name: 'inverted range',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ filters: { current_role_months: { gte: 10, lte: 5 } } }),
    loc: ['body', 'filters', 'current_role_months', '__root__'],
    type: 'value_error',
  },
  {
    name: 'has_email not boolean',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ filters: { has_email: { value: 'yes' } } }),
    loc: ['body', 'filters', 'has_email', 'value'],
    type: 'type_error.bool',
  },
  {
    name: '301 job titles',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ filters: { job_title: { values: Array.from({ length: 301 }, () => 'cto') } } }),
    loc: ['body', 'filters', 'job_title', 'values'],
    type: 'value_error.list.max_items',
  },
  {
    name: '1001 excluded ids',
    route: ROUTES.fetchProspects,
    body: prospectFetch({ exclude: Array.from({ length: 1001 }, () => 'a'.repeat(40)) }),
    loc: ['body', 'exclude'],
    type: 'value_error.list.max_items',
  },
  {
    name: 'business page_size 501',
    route: ROUTES.fetchBusinesses,
    body: { mode: 'full', size: 1000, page_size: 501 },
    loc: ['body', 'page_size'],
    type: 'value_error.number.not_le',
  },
  {
    name: 'business size below page_size',
    route: ROUTES.fetchBusinesses,
    body: { mode: 'full', size: 1, page_size: 2 },
    loc: ['body', '__root__'],
    type: 'value_error',
  },
  {
    name: 'bad company age',
    route: ROUTES.fetchBusinesses,
    body: { mode: 'full', size: 10, page_size: 10, filters: { company_age: { values: ['ancient'] } } },
    loc: ['body', 'filters', 'company_age', 'values', 0],
    type: 'type_error.enum',
  },
  {
    name: 'bad country code',
    route: ROUTES.businessStats,
    body: { filters: { country_code: { values: ['USA'] } } },
    loc: ['body', 'filters', 'country_code', 'values', 0],
    type: 'value_error.str.regex',
  },
  {
    name: 'stats without filters',
    route: ROUTES.businessStats,
    body: {},
    loc: ['body', 'filters'],
    type: 'value_error.missing',
  },
  {
    name: '51 businesses to match',
    route: ROUTES.matchBusinesses,
    body: { businesses_to_match: Array.from({ length: 51 }, () => ({ domain: 'a.com' })) },
    loc: ['body', 'businesses_to_match'],
    type: 'value_error.list.max_items',
  },
  {
    name: 'name over 256 characters',
    route: ROUTES.matchBusinesses,
    body: { businesses_to_match: [{ name: 'n'.repeat(257) }] },
    loc: ['body', 'businesses_to_match', 0, 'name'],
    type: 'value_error.any_str.max_length',
  },
  {
    name: 'full name without company',
    route: ROUTES.matchProspects,
    body: { prospects_to_match: [{ full_name: 'Ana Silva' }] },
    loc: ['body', 'prospects_to_match', 0, '__root__'],
    type: 'value_error',
  },
  {
    name: 'bad prospect id',
    route: ROUTES.enrichProspectPosts,
    body: { prospect_id: 'short' },
    loc: ['body', 'prospect_id'],
    type: 'value_error.str.regex',
  },
  {
    name: 'bad offline_mode',
    route: ROUTES.enrichProspectPosts,
    body: { prospect_id: 'a'.repeat(40), parameters: { offline_mode: true } },
    loc: ['body', 'parameters', 'offline_mode'],
    type: 'type_error.enum',
  },
  {
    name: 'hierarchy without id',
    route: ROUTES.enrichHierarchy,
    body: { parameters: {} },
    loc: ['body', 'business_id'],
    type: 'value_error.missing',
  },
  {
    name: 'response_bytes over the limit',
    route: ROUTES.healthcheckPayload,
    url: '/healthcheck/http_payload/1000001',
    loc: ['path', 'response_bytes'],
    type: 'value_error.number.not_le',
  },
  {
    name: 'response_bytes not a number',
    route: ROUTES.healthcheckPayload,
    url: '/healthcheck/http_payload/lots',
    loc: ['path', 'response_bytes'],
    type: 'type_error.integer',
  },
  {
    name: 'response_bytes too small for a JSON string',
    route: ROUTES.healthcheckPayload,
    url: '/healthcheck/http_payload/1',
    loc: ['path', 'response_bytes'],
    type: 'value_error.number.not_ge',
  },
  {
    name: 'autocomplete without field',
    route: ROUTES.autocomplete,
    url: '/v1/businesses/autocomplete?query=a',
    loc: ['query', 'field'],
    type: 'value_error.missing',
  },
  {
    name: 'autocomplete bad field',
    route: ROUTES.autocomplete,
    url: '/v1/businesses/autocomplete?field=shoe_size',
    loc: ['query', 'field'],
    type: 'type_error.enum',
  },
  {
    name: 'autocomplete bad boolean',
    route: ROUTES.autocomplete,
    url: '/v1/businesses/autocomplete?field=country&semantic_search=maybe',
    loc: ['query', 'semantic_search'],
    type: 'type_error.bool',
  },
];

describe('422 for each limit and enum', () => {
  it.each(CASES)('$name', async ({ route, url, body, loc, type }) => {
    const response = await call(sandbox.app, route.method, url ?? route.path, body);
    const detail = detailOf(response);
    expect(detail).toContainEqual(expect.objectContaining({ loc, type }));
  });

  it('gives the documented message and limit for an oversized request', async () => {
    const detail = detailOf(
      await call(sandbox.app, 'POST', ROUTES.fetchProspects.path, prospectFetch({ size: 60_001 })),
    );
    expect(detail).toEqual([
      {
        loc: ['body', 'size'],
        msg: 'ensure this value is less than or equal to 60000',
        type: 'value_error.number.not_le',
        ctx: { limit_value: 60000 },
      },
    ]);
    const root = detailOf(
      await call(sandbox.app, 'POST', ROUTES.fetchProspects.path, prospectFetch({ size: 5 })),
    );
    expect(root[0]?.msg).toBe("'size' must be greater than or equal to 'page_size'");
  });

  it('answers malformed JSON with a jsondecode error at the failing position', async () => {
    const detail = detailOf(
      await call(sandbox.app, 'POST', BULK_ENRICH_ROUTES.firmographics.path, '{"business_ids": [}'),
    );
    expect(detail).toHaveLength(1);
    expect(detail[0]?.type).toBe('value_error.jsondecode');
    expect(detail[0]?.loc).toEqual(['body', 18]);
  });

  it('answers a missing body with field required', async () => {
    const response = await sandbox.app.inject({
      method: 'POST',
      url: ROUTES.matchBusinesses.path,
      headers: { api_key: 'sandbox-test-key-0001' },
    });
    expect(detailOf(response)).toEqual([
      { loc: ['body'], msg: 'field required', type: 'value_error.missing' },
    ]);
  });

  it('rejects a cursor it did not issue for this query', async () => {
    const detail = detailOf(
      await call(
        sandbox.app,
        'POST',
        ROUTES.fetchProspects.path,
        prospectFetch({ next_cursor: 'bm90LWEtY3Vyc29y' }),
      ),
    );
    expect(detail[0]?.loc).toEqual(['body', 'next_cursor']);
  });
});

/** Odd JSON values, built from a seeded stream so a failure can be replayed. */
function oddValue(r: SeededRandom, depth: number): unknown {
  const atoms: unknown[] = [
    null,
    true,
    false,
    0,
    -1,
    1.5,
    1e308,
    -0,
    '',
    ' ',
    'null',
    '\u0000',
    '💥',
    'a'.repeat(300),
    id,
    'f'.repeat(40),
    '"',
    '{}',
    '[]',
  ];
  const roll = r.next();
  if (depth > 2 || roll < 0.5) return r.pick(atoms);
  if (roll < 0.75) return Array.from({ length: r.int(0, 4) }, () => oddValue(r, depth + 1));
  const keys = [
    'business_ids',
    'filters',
    'mode',
    'size',
    'page_size',
    'page',
    'values',
    'gte',
    'next_cursor',
    'exclude',
    'parameters',
    '__proto__',
    'constructor',
    'x',
  ];
  return Object.fromEntries(
    Array.from({ length: r.int(0, 4) }, () => [r.pick(keys), oddValue(r, depth + 1)]),
  );
}

describe('no input makes a 5xx', () => {
  it('survives many odd bodies on every POST route', async () => {
    const r = new SeededRandom(11, 22, 33, 44);
    const routes = [...Object.values(ROUTES), ...Object.values(BULK_ENRICH_ROUTES)].filter(
      (route) => route.method === 'POST' && route.tag !== 'Webhooks' && route.operationId !== 'fetchEvents',
    );
    const raw = ['', '{', 'nul', '[1,', '{"a":1}}', '\u0000', '{"business_ids":["' + id + '"],}', 'true'];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 600; i += 1) {
      const route = r.pick(routes);
      const body = r.chance(0.1) ? r.pick(raw) : JSON.stringify(oddValue(r, 0));
      const response = await call(sandbox.app, 'POST', route.path, body);
      statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
      expect(response.statusCode, `${route.path} ${body}`).toBeLessThan(500);
    }
    // Structured near-misses: valid shapes with extreme values.
    const extremes: [RouteSpec, unknown][] = [
      [
        ROUTES.fetchProspects,
        prospectFetch({
          page: 2 ** 31,
          filters: { total_experience_months: { gte: -(2 ** 53), lte: 2 ** 53 } },
        }),
      ],
      [
        ROUTES.fetchProspects,
        prospectFetch({ filters: { job_title: { values: ['%', "'; DROP TABLE prospects; --", '   '] } } }),
      ],
      [
        ROUTES.fetchProspects,
        prospectFetch({
          filters: { company_name: { values: ['\\', "O'Brien"] }, city_region_country: { values: [''] } },
        }),
      ],
      [
        ROUTES.fetchBusinesses,
        {
          mode: 'preview',
          size: 60000,
          page_size: 500,
          page: 120,
          filters: {
            naics_category: { values: ['54'] },
            events: { values: ['new_product'], last_occurrence: -5 },
          },
        },
      ],
      [ROUTES.fetchBusinesses, { mode: 'full', size: 10, page_size: 10, next_cursor: '' }],
      [
        ROUTES.matchBusinesses,
        {
          businesses_to_match: [
            {},
            { url: 'http://' },
            { domain: '..' },
            { network_url: 'network.example/company/%E0%A4%A' },
          ],
        },
      ],
      [
        ROUTES.matchProspects,
        { prospects_to_match: [{}, { email: '@' }, { phone_number: '+' }, { network: '%%%' }] },
      ],
    ];
    for (const [route, body] of extremes) {
      const response = await call(sandbox.app, 'POST', route.path, body);
      expect(response.statusCode, `${route.path} ${JSON.stringify(body)} → ${response.body}`).toBeLessThan(
        500,
      );
    }
    expect(statuses.get(422) ?? 0).toBeGreaterThan(0);
  });
});
