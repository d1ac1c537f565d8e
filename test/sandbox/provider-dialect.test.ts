// What the provider's clients send besides the spec's form: `type` inside filter objects, the provider's
// field and path names, country and region codes in upper case, and filters given as null. The sandbox
// answers them as the service does (the same as the spec's form), and strict mode refuses the aliases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BULK_ENRICH_ROUTES,
  BusinessFetchFiltersSchema,
  FILTER_TYPES,
  ProspectFiltersSchema,
  ROUTES,
  type RouteSpec,
} from '../../contract/index.js';
import { call, detailOf, okBody, startTestSandbox, type TestSandbox } from './support.js';

/** One valid value of every business filter (fetch and stats). */
const BUSINESS_FILTERS: Record<string, Record<string, unknown>> = {
  country_code: { values: ['us'] },
  region_country_code: { values: ['us-ca'] },
  company_size: { values: ['11-50'] },
  company_revenue: { values: ['1M-5M'] },
  company_age: { values: ['3-6'] },
  listing_category: { values: ['Restaurant'] },
  naics_category: { values: ['54'] },
  network_category: { values: ['software development'] },
  company_tech_stack_category: { values: ['Marketing'] },
  company_tech_stack_tech: { values: ['HTML5'] },
  company_name: { values: ['Acme'] },
  number_of_locations: { values: ['2-5'] },
  city_region_country: { values: ['Miami, FL, US'] },
  city_region: { values: ['Chicago, IL--IN'] },
  website_keywords: { values: ['machine learning'] },
  business_intent_topics: { topics: ['Security:Cloud Security'], topic_intent_level: 'high_intent' },
  events: { values: ['new_funding_round'], last_occurrence: 90 },
  has_website: { value: true },
};

/** One valid value of every prospect filter. */
const PROSPECT_FILTERS: Record<string, Record<string, unknown>> = {
  has_email: { value: true },
  has_phone_number: { value: false },
  has_website: { value: true },
  job_title: { values: ['engineer'], include_related_job_titles: true },
  job_level: { values: ['manager'] },
  job_department: { values: ['engineering'] },
  business_id: { values: ['8adce3ca1cef0c986b22310e369a0793'] },
  country_code: { values: ['us'] },
  region_country_code: { values: ['us-ca'] },
  city_region_country: { values: ['Miami, FL, US'] },
  company_size: { values: ['11-50'] },
  company_revenue: { values: ['1M-5M'] },
  listing_category: { values: ['Restaurant'] },
  naics_category: { values: ['54'] },
  network_category: { values: ['software development'] },
  company_country_code: { values: ['us'] },
  company_region_country_code: { values: ['us-ca'] },
  total_experience_months: { gte: 12 },
  current_role_months: { lte: 24 },
  company_name: { values: ['Acme'] },
};

/** The `type` values a filter's schema accepts (the non-null branch of a nullable filter). */
function typesOf(schema: unknown): readonly string[] {
  const branches = (schema as { anyOf?: unknown[] }).anyOf ?? [schema];
  const object = branches.find((b) => (b as { type?: string }).type === 'object') as {
    properties: { type?: { enum: string[] } };
  };
  return object.properties.type?.enum ?? [];
}

/** A `type` of another form, which does not fit a filter accepting `fits`. */
function misfit(fits: readonly string[]): string {
  const all = Object.values(FILTER_TYPES).flat();
  return all.find((type) => !fits.includes(type)) as string;
}

let sandbox: TestSandbox;
let strict: TestSandbox;

beforeAll(async () => {
  [sandbox, strict] = await Promise.all([startTestSandbox(), startTestSandbox({ strict: true })]);
});
afterAll(async () => {
  await Promise.all([sandbox.close(), strict.close()]);
});

// The largest `size`, so that `total_results` counts every match rather than the first `size`.
const businessFetch = (filters: unknown) => ({ mode: 'full', size: 60_000, page_size: 1, filters });
const prospectFetch = (filters: unknown) => ({ mode: 'full', size: 60_000, page_size: 1, filters });

async function total(route: RouteSpec, body: unknown, app = sandbox.app): Promise<number> {
  const response = await call(app, route.method, route.path, body);
  return okBody<{ total_results: number }>(route, response).total_results;
}

const FILTERED: {
  route: RouteSpec;
  filters: Record<string, Record<string, unknown>>;
  body: (f: unknown) => unknown;
}[] = [
  { route: ROUTES.fetchBusinesses, filters: BUSINESS_FILTERS, body: businessFetch },
  { route: ROUTES.businessStats, filters: BUSINESS_FILTERS, body: (filters) => ({ filters }) },
  { route: ROUTES.fetchProspects, filters: PROSPECT_FILTERS, body: prospectFetch },
];

describe('`type` inside filter objects', () => {
  it('has a value for every filter of the contract', () => {
    expect(Object.keys(BUSINESS_FILTERS).sort()).toEqual(
      Object.keys(BusinessFetchFiltersSchema.properties).sort(),
    );
    expect(Object.keys(PROSPECT_FILTERS).sort()).toEqual(
      Object.keys(ProspectFiltersSchema.properties).sort(),
    );
  });

  for (const { route, filters, body } of FILTERED) {
    const schema = route === ROUTES.fetchProspects ? ProspectFiltersSchema : BusinessFetchFiltersSchema;
    it(`${route.operationId}: a fitting type on any filter answers as without it`, async () => {
      for (const [name, value] of Object.entries(filters)) {
        const types = typesOf(schema.properties[name as keyof typeof schema.properties]);
        expect(types.length, name).toBeGreaterThan(0);
        const plain = await total(route, body({ [name]: value }));
        for (const type of types) {
          expect(await total(route, body({ [name]: { type, ...value } })), `${name} ${type}`).toBe(plain);
        }
      }
    });

    it(`${route.operationId}: a type that does not fit is a 422 naming the filter`, async () => {
      for (const [name, value] of Object.entries(filters)) {
        const types = typesOf(schema.properties[name as keyof typeof schema.properties]);
        const response = await call(
          sandbox.app,
          route.method,
          route.path,
          body({ [name]: { type: misfit(types), ...value } }),
        );
        expect(detailOf(response).map((d) => d.loc)).toEqual([['body', 'filters', name, 'type']]);
      }
    });
  }

  it('accepts the request shapes of the provider CLI on a filtered business search', async () => {
    const filters = {
      country_code: { type: 'includes', values: ['US'] },
      company_size: { type: 'includes', values: ['11-50', '51-200'] },
      linkedin_category: { type: 'includes', values: ['software development'] },
      events: { type: 'includes', values: ['new_funding_round'], last_occurrence: 45 },
    };
    expect(await total(ROUTES.fetchBusinesses, businessFetch(filters))).toBeGreaterThanOrEqual(0);
  });
});

describe('provider field and path names', () => {
  it('filters: linkedin_category and google_category mean network_category and listing_category', async () => {
    for (const { route, body } of FILTERED) {
      const spec = await total(
        route,
        body({
          network_category: { values: ['software development'] },
          listing_category: { values: ['Restaurant', 'Software company'] },
        }),
      );
      const alias = await total(
        route,
        body({
          linkedin_category: { values: ['software development'] },
          google_category: { values: ['Restaurant', 'Software company'] },
        }),
      );
      expect(alias, route.operationId).toBe(spec);
    }
    const software = await total(
      ROUTES.fetchBusinesses,
      businessFetch({ linkedin_category: { values: ['software development'] } }),
    );
    expect(software).toBeGreaterThan(0);
  });

  it('autocomplete: linkedin_category and google_category complete the same values', async () => {
    for (const [alias, name] of [
      ['linkedin_category', 'network_category'],
      ['google_category', 'listing_category'],
    ]) {
      const a = okBody<unknown[]>(
        ROUTES.autocomplete,
        await call(sandbox.app, 'GET', `/v1/businesses/autocomplete?field=${alias}&query=s`),
      );
      const b = okBody<unknown[]>(
        ROUTES.autocomplete,
        await call(sandbox.app, 'GET', `/v1/businesses/autocomplete?field=${name}&query=s`),
      );
      expect(a.length).toBeGreaterThan(0);
      expect(a).toEqual(b);
    }
  });

  it('business match: linkedin_url matches as network_url, answered under the spec name', async () => {
    const ids = sandbox.app.sandbox.store.businessIds.slice(0, 20);
    const firmographics = okBody<{
      data: { business_id: string; data: { network_profile?: string | null } }[];
    }>(
      BULK_ENRICH_ROUTES.firmographics,
      await call(sandbox.app, 'POST', BULK_ENRICH_ROUTES.firmographics.path, { business_ids: ids }),
    ).data.filter((row) => row.data.network_profile);
    expect(firmographics.length).toBeGreaterThan(0);
    const match = async (key: string) =>
      okBody<{ matched_businesses: { input: Record<string, unknown>; business_id: string }[] }>(
        ROUTES.matchBusinesses,
        await call(sandbox.app, 'POST', '/v1/businesses/match', {
          businesses_to_match: firmographics.map((row) => ({ [key]: row.data.network_profile })),
        }),
      ).matched_businesses;
    const alias = await match('linkedin_url');
    expect(alias.map((m) => m.business_id)).toEqual(firmographics.map((row) => row.business_id));
    expect(alias).toEqual(await match('network_url'));
  });

  it('prospect match: linkedin matches as network', async () => {
    const rows = await sandbox.app.sandbox.store.query(
      'SELECT prospect_id, record_json FROM prospects LIMIT 3',
    );
    const profiles = rows.map((row) => (JSON.parse(String(row.record_json)) as { network: string }).network);
    const body = okBody<{ matched_prospects: { prospect_id: string; input: unknown }[] }>(
      ROUTES.matchProspects,
      await call(sandbox.app, 'POST', '/v1/prospects/match', {
        prospects_to_match: profiles.map((network) => ({ linkedin: `https://www.${network}` })),
      }),
    );
    expect(body.matched_prospects.map((m) => m.prospect_id)).toEqual(
      rows.map((row) => String(row.prospect_id)),
    );
    expect(body.matched_prospects[0]?.input).toEqual({ network: `https://www.${profiles[0]}` });
  });

  it('match items: keys the service does not know are ignored, as the service ignores them', async () => {
    const response = await call(sandbox.app, 'POST', '/v1/businesses/match', {
      businesses_to_match: [{ name: 'Acme', linkedin_company_url: 'linkedin.com/company/acme' }],
    });
    expect(
      okBody<{ matched_businesses: { input: unknown }[] }>(ROUTES.matchBusinesses, response)
        .matched_businesses[0]?.input,
    ).toEqual({ name: 'Acme' });
  });

  it('/linkedin_posts/ paths answer as /network_posts/', async () => {
    const ids = sandbox.app.sandbox.store.businessIds.slice(0, 10);
    const spec = await call(sandbox.app, 'POST', BULK_ENRICH_ROUTES.network_posts.path, {
      business_ids: ids,
    });
    const alias = await call(sandbox.app, 'POST', '/v1/businesses/linkedin_posts/bulk_enrich', {
      business_ids: ids,
    });
    expect(okBody(BULK_ENRICH_ROUTES.network_posts, alias).data).toEqual(
      okBody(BULK_ENRICH_ROUTES.network_posts, spec).data,
    );
    const rows = await sandbox.app.sandbox.store.query('SELECT prospect_id FROM prospect_posts LIMIT 1');
    const prospect = { prospect_id: String(rows[0]?.prospect_id) };
    const posts = await call(sandbox.app, 'POST', '/v1/prospects/linkedin_posts/enrich', prospect);
    expect(okBody<{ data: unknown }>(ROUTES.enrichProspectPosts, posts).data).not.toBeNull();
  });
});

describe('prospect has_website (provider document)', () => {
  it('splits prospects by whether their employer has a website', async () => {
    const all = await total(ROUTES.fetchProspects, prospectFetch({}));
    const withSite = await total(ROUTES.fetchProspects, prospectFetch({ has_website: { value: true } }));
    const without = await total(ROUTES.fetchProspects, prospectFetch({ has_website: { value: false } }));
    expect(withSite).toBeGreaterThan(0);
    expect(without).toBeGreaterThan(0);
    expect(withSite + without).toBe(all);
  });
});

describe('country and region codes', () => {
  it('either case selects the same records', async () => {
    const cases: [RouteSpec, (f: unknown) => unknown, string][] = [
      [ROUTES.fetchBusinesses, businessFetch, 'country_code'],
      [ROUTES.fetchProspects, prospectFetch, 'country_code'],
      [ROUTES.fetchProspects, prospectFetch, 'company_country_code'],
    ];
    for (const [route, body, name] of cases) {
      const lower = await total(route, body({ [name]: { values: ['us', 'gb'] } }));
      expect(lower, name).toBeGreaterThan(0);
      expect(await total(route, body({ [name]: { values: ['US', 'GB'] } })), name).toBe(lower);
    }
    for (const [route, body, name] of [
      [ROUTES.fetchBusinesses, businessFetch, 'region_country_code'],
      [ROUTES.fetchProspects, prospectFetch, 'region_country_code'],
      [ROUTES.fetchProspects, prospectFetch, 'company_region_country_code'],
    ] as const) {
      const lower = await total(route, body({ [name]: { values: ['us-ca', 'us-ny'] } }));
      expect(lower, name).toBeGreaterThan(0);
      expect(await total(route, body({ [name]: { values: ['US-CA', 'US-NY'] } })), name).toBe(lower);
    }
  });
});

describe('a filter given as null', () => {
  it('means no filter, on every endpoint that takes it', async () => {
    for (const { route, filters, body } of FILTERED) {
      const unfiltered = await total(route, body({}));
      for (const name of Object.keys(filters)) {
        expect(await total(route, body({ [name]: null })), `${route.operationId} ${name}`).toBe(unfiltered);
      }
    }
  });
});

describe('strict mode', () => {
  it('refuses provider names and unknown match keys, and serves the spec names', async () => {
    const filters = await call(
      strict.app,
      'POST',
      '/v1/businesses',
      businessFetch({ linkedin_category: { values: ['x'] } }),
    );
    expect(detailOf(filters)).toEqual([
      {
        loc: ['body', 'filters', 'linkedin_category'],
        msg: 'extra fields not permitted',
        type: 'value_error.extra',
      },
    ]);
    const match = await call(strict.app, 'POST', '/v1/businesses/match', {
      businesses_to_match: [{ linkedin_url: 'x' }],
    });
    expect(detailOf(match).map((d) => d.loc)).toEqual([['body', 'businesses_to_match', 0, 'linkedin_url']]);
    const autocomplete = await call(strict.app, 'GET', '/v1/businesses/autocomplete?field=google_category');
    expect(detailOf(autocomplete).map((d) => d.loc)).toEqual([['query', 'field']]);
    const ids = strict.app.sandbox.store.businessIds.slice(0, 2);
    expect(
      (await call(strict.app, 'POST', '/v1/businesses/linkedin_posts/bulk_enrich', { business_ids: ids }))
        .statusCode,
    ).toBe(404);
    expect(
      await total(
        ROUTES.fetchBusinesses,
        businessFetch({ network_category: { values: ['software development'] } }),
        strict.app,
      ),
    ).toBeGreaterThan(0);
  });
});
