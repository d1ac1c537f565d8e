// Request shapes of the provider's published clients, replayed against the sandbox: its command-line
// client, its MCP server and the examples of its documentation. Each is written here from what those
// clients send (filter `type`s, provider field names, upper-case codes, the `API_KEY` header spelling,
// `request_context: {}`, no `size`); the service answers each with 2xx, and so must the sandbox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, API_KEY, type TestSandbox } from '../sandbox/support.js';
import { worldIds, type WorldIds } from './operations.js';

interface ClientRequest {
  /** Which client sends this shape. */
  client: 'cli' | 'mcp' | 'docs';
  what: string;
  method: 'GET' | 'POST';
  /** Path below the service's base address (clients put `/v1` in their base URL). */
  url: string;
  body?: unknown;
  /** Header name of the key: the documentation and the MCP server write `API_KEY`. */
  keyHeader?: string;
}

function requests(ids: WorldIds): ClientRequest[] {
  const includes = (values: string[]) => ({ type: 'includes', values });
  return [
    // The CLI: business search, one filter per option, every object typed.
    {
      client: 'cli',
      what: 'business search',
      method: 'POST',
      url: '/v1/businesses',
      body: {
        mode: 'full',
        size: 100,
        page_size: 100,
        page: 1,
        filters: {
          country_code: includes(['US', 'GB']),
          company_size: includes(['11-50', '51-200']),
          company_revenue: includes(['1M-5M', '5M-10M']),
          linkedin_category: includes(['software development']),
          company_tech_stack_tech: includes(['HTML5']),
          events: { type: 'includes', values: ['new_funding_round'], last_occurrence: 45 },
        },
      },
    },
    {
      client: 'cli',
      what: 'business search by keywords, intent and technology category',
      method: 'POST',
      url: '/v1/businesses',
      body: {
        mode: 'full',
        size: 100,
        page_size: 100,
        page: 1,
        filters: {
          website_keywords: { type: 'any_match_phrase', values: ['machine learning', 'AI'] },
          business_intent_topics: { type: 'business_intent_topics', topics: ['Security:Cloud Security'] },
          company_tech_stack_category: includes(['Marketing']),
        },
      },
    },
    {
      client: 'cli',
      what: 'prospect search',
      method: 'POST',
      url: '/v1/prospects',
      body: {
        mode: 'full',
        size: 100,
        page_size: 100,
        page: 1,
        filters: {
          business_id: includes(ids.businesses.slice(0, 5)),
          job_level: includes(['manager', 'director']),
          job_department: includes(['engineering']),
          job_title: { type: 'any_match_phrase', values: ['engineer'], include_related_job_titles: true },
          country_code: includes(['US']),
          has_email: { type: 'exists', value: true },
          total_experience_months: { type: 'range', gte: 12, lte: 240 },
          current_role_months: { type: 'range', gte: 1 },
        },
      },
    },
    {
      client: 'cli',
      what: 'prospect search by company attributes',
      method: 'POST',
      url: '/v1/prospects',
      body: {
        mode: 'full',
        size: 100,
        page_size: 100,
        page: 1,
        filters: {
          region_country_code: includes(['US-CA']),
          city_region_country: includes(['San Francisco, CA, US']),
          has_phone_number: { type: 'exists', value: true },
          has_website: { type: 'exists', value: true },
          company_size: includes(['51-200']),
          company_revenue: includes(['10M-25M']),
          company_country_code: includes(['US']),
          company_region_country_code: includes(['US-CA']),
          linkedin_category: includes(['software development']),
          google_category: includes(['Software company']),
          naics_category: includes(['5112']),
        },
      },
    },
    {
      client: 'cli',
      what: 'business match by name',
      method: 'POST',
      url: '/v1/businesses/match',
      body: { businesses_to_match: [{ name: 'Example Corp' }] },
    },
    {
      client: 'cli',
      what: 'company name autocomplete',
      method: 'GET',
      url: '/v1/businesses/autocomplete?query=a&field=company_name',
    },
    {
      client: 'cli',
      what: 'category autocomplete',
      method: 'GET',
      url: '/v1/businesses/autocomplete?query=s&field=linkedin_category',
    },
    {
      client: 'cli',
      what: 'business events',
      method: 'POST',
      url: '/v1/businesses/events',
      body: { business_ids: ids.withEvents, event_types: ['new_funding_round', 'new_product'] },
    },
    {
      client: 'cli',
      what: 'event enrollment',
      method: 'POST',
      url: '/v1/businesses/events/enrollments',
      body: {
        business_ids: ids.businesses.slice(0, 3),
        event_types: ['new_funding_round'],
        enrollment_key: 'cli-watch',
      },
    },
    { client: 'cli', what: 'list enrollments', method: 'GET', url: '/v1/businesses/events/enrollments' },
    {
      client: 'cli',
      what: 'bulk firmographics',
      method: 'POST',
      url: '/v1/businesses/firmographics/bulk_enrich',
      body: { business_ids: ids.businesses.slice(0, 50) },
    },
    {
      client: 'cli',
      what: 'bulk company posts under the provider path',
      method: 'POST',
      url: '/v1/businesses/linkedin_posts/bulk_enrich',
      body: { business_ids: ids.businesses.slice(0, 50) },
    },
    {
      client: 'cli',
      what: 'prospect posts under the provider path',
      method: 'POST',
      url: '/v1/prospects/linkedin_posts/enrich',
      body: { prospect_id: ids.withPosts },
    },
    // The MCP server: request_context {}, the key header in capitals, typed filters with one value.
    {
      client: 'mcp',
      what: 'business fetch',
      keyHeader: 'API_KEY',
      method: 'POST',
      url: '/v1/businesses',
      body: {
        mode: 'full',
        size: 20,
        page_size: 20,
        page: 1,
        request_context: {},
        filters: {
          country_code: includes(['US']),
          region_country_code: includes(['US-CA']),
          company_age: includes(['10-20']),
          google_category: includes(['Software company']),
          naics_category: includes(['5112']),
          linkedin_category: includes(['software development']),
        },
      },
    },
    {
      client: 'mcp',
      what: 'business statistics',
      keyHeader: 'API_KEY',
      method: 'POST',
      url: '/v1/businesses/stats',
      body: {
        request_context: {},
        filters: { country_code: includes(['US']), company_size: includes(['11-50']) },
      },
    },
    {
      client: 'mcp',
      what: 'business match by name and domain',
      keyHeader: 'API_KEY',
      method: 'POST',
      url: '/v1/businesses/match',
      body: { request_context: {}, businesses_to_match: [{ name: 'Example Corp', domain: 'example.com' }] },
    },
    // Documentation examples.
    {
      client: 'docs',
      what: 'offset pagination',
      method: 'POST',
      url: '/v1/businesses',
      body: {
        filters: { country_code: { values: ['US'] }, company_size: { values: ['51-200'] } },
        mode: 'full',
        size: 500,
        page_size: 100,
        page: 1,
      },
    },
    {
      client: 'docs',
      what: 'cursor pagination without size',
      method: 'POST',
      url: '/v1/prospects',
      body: {
        mode: 'full',
        page_size: 100,
        next_cursor: null,
        filters: { country_code: { values: ['US'] } },
      },
    },
    {
      client: 'docs',
      what: 'prospect match with every identifier',
      method: 'POST',
      url: '/v1/prospects/match',
      body: {
        request_context: {},
        prospects_to_match: [
          {
            business_id: ids.businesses[0],
            full_name: 'Example Person',
            company_name: 'Example Corp',
            email: 'someone@example.com',
            phone_number: '+17752401029',
            linkedin: 'https://www.linkedin.com/company/example/',
          },
        ],
      },
    },
    {
      client: 'docs',
      what: 'authentication example, key in capitals',
      keyHeader: 'API_KEY',
      method: 'POST',
      url: '/v1/businesses',
      body: { mode: 'full', page_size: 10, filters: {} },
    },
  ];
}

let sandbox: TestSandbox;
let ids: WorldIds;
beforeAll(async () => {
  sandbox = await startTestSandbox({ events: {} });
  ids = await worldIds(sandbox.app);
});
afterAll(() => sandbox.close());

describe("the provider's clients", () => {
  it('get 2xx for every request shape they send', async () => {
    const all = requests(ids);
    const refused: { request: string; status: number; body: string }[] = [];
    for (const request of all) {
      const headers: Record<string, string> = { [request.keyHeader ?? 'api_key']: API_KEY };
      if (request.body !== undefined) headers['content-type'] = 'application/json';
      const response = await sandbox.app.inject({
        method: request.method,
        url: request.url,
        headers,
        ...(request.body !== undefined ? { payload: JSON.stringify(request.body) } : {}),
      });
      if (response.statusCode < 200 || response.statusCode > 299) {
        refused.push({
          request: `${request.client}: ${request.what}`,
          status: response.statusCode,
          body: response.body.slice(0, 300),
        });
      }
    }
    expect(refused).toEqual([]);
    expect(new Set(all.map((r) => r.client))).toEqual(new Set(['cli', 'mcp', 'docs']));
  });

  it('are refused in strict mode where they use provider names', async () => {
    const strict = await startTestSandbox({ strict: true });
    try {
      const response = await strict.app.inject({
        method: 'POST',
        url: '/v1/businesses',
        headers: { api_key: API_KEY, 'content-type': 'application/json' },
        payload: JSON.stringify({
          mode: 'full',
          page_size: 10,
          filters: { google_category: { values: ['Retail'] } },
        }),
      });
      expect(response.statusCode).toBe(422);
    } finally {
      await strict.close();
    }
  });
});
