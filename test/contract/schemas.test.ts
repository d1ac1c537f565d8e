import { describe, expect, it } from 'vitest';
import {
  BULK_DATASETS,
  BULK_ENRICH_RESPONSE_SCHEMAS,
  BULK_ENRICH_ROUTES,
  checkRequest,
  checkResponse,
  columnsOfSchema,
  CompanyHierarchyRecordSchema,
  datasetColumns,
  DATASET_RECORD_SCHEMAS,
  FetchBusinessesResponseSchema,
  FetchProspectsResponseSchema,
  MatchBusinessesResponseSchema,
  PROSPECT_BULK_ENRICH_ROUTES,
  PROSPECT_BULK_ENRICH_RESPONSE_SCHEMAS,
  prospectDatasetColumns,
  ROUTES,
  type DatasetRecord,
} from '../../contract/index.js';

const id = (n: number) => n.toString(16).padStart(32, '0');
const ids = (count: number) => Array.from({ length: count }, (_, i) => id(i + 1));
const context = { correlation_id: 'c-1', request_status: 'success', time_took_in_seconds: 0.01 };
const prospectId = 'b'.repeat(40);
/** `expect.arrayContaining`, typed for use inside object literals. */
const arrayContaining = (items: unknown[]): unknown => expect.arrayContaining(items) as unknown;

describe('bulk enrich requests', () => {
  const route = BULK_ENRICH_ROUTES.firmographics;

  it('accept 1 to 50 business ids with optional context and parameters', () => {
    expect(checkRequest(route, { body: { business_ids: ids(1) } }).ok).toBe(true);
    expect(
      checkRequest(route, { body: { business_ids: ids(50), request_context: null, parameters: {} } }).ok,
    ).toBe(true);
  });

  it('reject 51 ids and 0 ids with the limit in the detail', () => {
    expect(checkRequest(route, { body: { business_ids: ids(51) } })).toEqual({
      ok: false,
      detail: [
        {
          loc: ['body', 'business_ids'],
          msg: 'ensure this value has at most 50 items',
          type: 'value_error.list.max_items',
          ctx: { limit_value: 50 },
        },
      ],
    });
    expect(checkRequest(route, { body: { business_ids: [] } })).toMatchObject({
      ok: false,
      detail: [{ loc: ['body', 'business_ids'], type: 'value_error.list.min_items' }],
    });
  });

  it('name the position of a malformed id and every unknown key', () => {
    const result = checkRequest(route, { body: { business_ids: [id(1), 'not-an-id'], business_id: id(2) } });
    expect(result).toMatchObject({
      ok: false,
      detail: arrayContaining([
        { loc: ['body', 'business_id'], msg: 'extra fields not permitted', type: 'value_error.extra' },
        expect.objectContaining({ loc: ['body', 'business_ids', 1], type: 'value_error.str.regex' }),
      ]),
    });
  });

  it('check the documented parameters of financial_indicators and company_website_keywords', () => {
    const financial = BULK_ENRICH_ROUTES.financial_indicators;
    expect(
      checkRequest(financial, {
        body: { business_ids: ids(2), parameters: { date: '2025-06-30T00:00:00Z' } },
      }).ok,
    ).toBe(true);
    expect(
      checkRequest(financial, { body: { business_ids: ids(2), parameters: { date: 'yesterday' } } }),
    ).toMatchObject({
      ok: false,
      detail: [{ loc: ['body', 'parameters', 'date'], type: 'value_error.datetime' }],
    });
    const keywords = BULK_ENRICH_ROUTES.company_website_keywords;
    expect(
      checkRequest(keywords, { body: { business_ids: ids(1), parameters: { keywords: ['ai', 'cloud'] } } })
        .ok,
    ).toBe(true);
    expect(
      checkRequest(keywords, { body: { business_ids: ids(1), parameters: { keywords: 'ai' } } }),
    ).toMatchObject({
      ok: false,
      detail: [{ loc: ['body', 'parameters', 'keywords'], type: 'type_error.list' }],
    });
  });

  it('report a body that is not an object, and a missing body', () => {
    expect(checkRequest(route, { body: [id(1)] })).toMatchObject({
      ok: false,
      detail: [{ loc: ['body'], type: 'type_error.dict' }],
    });
    expect(checkRequest(route, {})).toMatchObject({
      ok: false,
      detail: [{ loc: ['body'], type: 'value_error.missing' }],
    });
  });
});

describe('prospect fetch requests', () => {
  const route = ROUTES.fetchProspects;
  const base = { mode: 'full', size: 1000, page_size: 100 };

  it('accept page_size 100 and size 60000, and refuse 101 and 60001', () => {
    expect(checkRequest(route, { body: base }).ok).toBe(true);
    expect(checkRequest(route, { body: { ...base, size: 60_000 } }).ok).toBe(true);
    expect(checkRequest(route, { body: { ...base, page_size: 101 } })).toMatchObject({
      ok: false,
      detail: [
        {
          loc: ['body', 'page_size'],
          msg: 'ensure this value is less than or equal to 100',
          type: 'value_error.number.not_le',
        },
      ],
    });
    expect(checkRequest(route, { body: { ...base, size: 60_001 } })).toMatchObject({
      ok: false,
      detail: [{ loc: ['body', 'size'], ctx: { limit_value: 60_000 } }],
    });
  });

  it('accept the filters of spec 2.7 and refuse unknown enum values and filter forms', () => {
    const filters = {
      has_email: { value: true },
      job_title: { values: ['software engineer'], include_related_job_titles: true },
      job_level: { values: ['director', 'vice president'] },
      job_department: { values: ['engineering', 'IT', 'R&D', 'r&d'] },
      company_size: { values: ['51-200', '10001+'] },
      company_revenue: { values: ['1M-5M'] },
      country_code: { values: ['US', 'de'] },
      region_country_code: { values: ['US-CA'] },
      naics_category: { values: ['54', '541512'] },
      listing_category: { values: ['Retail'] },
      network_category: { values: ['software development'] },
      total_experience_months: { gte: 12, lte: 120 },
      current_role_months: { lte: 24 },
    };
    expect(checkRequest(route, { body: { ...base, filters } }).ok).toBe(true);
    expect(
      checkRequest(route, { body: { ...base, filters: { job_level: { values: ['boss'] } } } }),
    ).toMatchObject({
      ok: false,
      detail: [{ loc: ['body', 'filters', 'job_level', 'values', 0], type: 'type_error.enum' }],
    });
    expect(
      checkRequest(route, { body: { ...base, filters: { company_size: { values: ['1-5'] } } } }).ok,
    ).toBe(false);
    expect(
      checkRequest(route, { body: { ...base, filters: { job_level: { value: 'director' } } } }),
    ).toMatchObject({
      ok: false,
      detail: arrayContaining([
        {
          loc: ['body', 'filters', 'job_level', 'value'],
          msg: 'extra fields not permitted',
          type: 'value_error.extra',
        },
        {
          loc: ['body', 'filters', 'job_level', 'values'],
          msg: 'field required',
          type: 'value_error.missing',
        },
      ]),
    });
    expect(
      checkRequest(route, { body: { ...base, filters: { seniority: { values: ['x'] } } } }),
    ).toMatchObject({
      ok: false,
      detail: [{ loc: ['body', 'filters', 'seniority'], type: 'value_error.extra' }],
    });
  });

  it('accept cursor mode and refuse a mode other than full or preview', () => {
    expect(checkRequest(route, { body: { ...base, next_cursor: 'null' } }).ok).toBe(true);
    expect(checkRequest(route, { body: { ...base, mode: 'fast' } })).toMatchObject({
      ok: false,
      detail: [{ loc: ['body', 'mode'], type: 'type_error.enum', ctx: { enum_values: ['full', 'preview'] } }],
    });
  });

  it('say "none is not an allowed value" for null where null is not allowed, and hide the limit behind a wrong type', () => {
    expect(checkRequest(route, { body: { ...base, size: null } })).toMatchObject({
      ok: false,
      detail: [{ loc: ['body', 'size'], type: 'type_error.none.not_allowed' }],
    });
    expect(checkRequest(route, { body: { ...base, size: 70_000.5 } })).toEqual({
      ok: false,
      detail: [{ loc: ['body', 'size'], msg: 'value is not a valid integer', type: 'type_error.integer' }],
    });
  });
});

describe('other requests', () => {
  it('healthcheck payload: response_bytes up to 1,000,000, converted from the path string', () => {
    expect(checkRequest(ROUTES.healthcheckPayload, { params: { response_bytes: '1000000' } })).toMatchObject({
      ok: true,
      params: { response_bytes: 1_000_000 },
    });
    expect(checkRequest(ROUTES.healthcheckPayload, { params: { response_bytes: '1000001' } })).toMatchObject({
      ok: false,
      detail: [{ loc: ['path', 'response_bytes'], type: 'value_error.number.not_le' }],
    });
  });

  it('autocomplete: one of the 19 fields, defaults applied', () => {
    expect(
      checkRequest(ROUTES.autocomplete, { query: { field: 'network_category', semantic_search: 'true' } }),
    ).toEqual({
      ok: true,
      body: undefined,
      params: undefined,
      query: { field: 'network_category', query: '', semantic_search: true },
    });
    expect(checkRequest(ROUTES.autocomplete, { query: { field: 'linkedin_category' } })).toMatchObject({
      ok: false,
      detail: [{ loc: ['query', 'field'], type: 'type_error.enum' }],
    });
    expect(checkRequest(ROUTES.autocomplete, { query: {} })).toMatchObject({
      ok: false,
      detail: [{ loc: ['query', 'field'], type: 'value_error.missing' }],
    });
  });

  it('enrollments: at most 20 ids, key of 4 characters or more, known event types', () => {
    const body = { enrollment_key: 'acme', event_types: ['new_funding_round'], business_ids: ids(20) };
    expect(checkRequest(ROUTES.createEnrollments, { body }).ok).toBe(true);
    expect(checkRequest(ROUTES.createEnrollments, { body: { ...body, business_ids: ids(21) } }).ok).toBe(
      false,
    );
    expect(
      checkRequest(ROUTES.createEnrollments, { body: { ...body, enrollment_key: 'abc' } }),
    ).toMatchObject({
      ok: false,
      detail: [{ loc: ['body', 'enrollment_key'], type: 'value_error.any_str.min_length' }],
    });
    expect(checkRequest(ROUTES.createEnrollments, { body: { ...body, event_types: ['party'] } }).ok).toBe(
      false,
    );
    expect(checkRequest(ROUTES.updateEnrollments, { body }).ok).toBe(false);
  });

  it('events: at most 40 distinct ids', () => {
    const body = { event_types: ['new_office'], business_ids: ids(40), timestamp_from: '2025-01-01' };
    expect(checkRequest(ROUTES.fetchEvents, { body }).ok).toBe(true);
    expect(checkRequest(ROUTES.fetchEvents, { body: { ...body, business_ids: ids(41) } }).ok).toBe(false);
    expect(
      checkRequest(ROUTES.fetchEvents, { body: { ...body, business_ids: [id(1), id(1)] } }),
    ).toMatchObject({
      ok: false,
      detail: [{ loc: ['body', 'business_ids'], type: 'value_error.list.unique_items' }],
    });
  });

  it('webhooks: an http(s) URL and a partner id', () => {
    expect(
      checkRequest(ROUTES.registerWebhook, {
        body: { partner_id: 'p1', webhook_url: 'http://127.0.0.1:1/hook' },
      }).ok,
    ).toBe(true);
    expect(
      checkRequest(ROUTES.registerWebhook, { body: { partner_id: 'p1', webhook_url: 'ftp://x' } }).ok,
    ).toBe(false);
  });

  it('hierarchy and posts enrichment take one id of the right kind', () => {
    expect(checkRequest(ROUTES.enrichHierarchy, { body: { business_id: id(7), parameters: {} } }).ok).toBe(
      true,
    );
    expect(checkRequest(ROUTES.enrichHierarchy, { body: { business_id: prospectId } }).ok).toBe(false);
    expect(checkRequest(ROUTES.enrichProspectPosts, { body: { prospect_id: prospectId } }).ok).toBe(true);
    expect(checkRequest(ROUTES.enrichProspectPosts, { body: { prospect_id: id(7) } }).ok).toBe(false);
  });
});

describe('response schemas', () => {
  const firmographics: DatasetRecord<'firmographics'> = {
    business_id: id(1),
    name: 'Acme Corp',
    business_description: 'Anvils',
    website: 'https://acme.example',
    country_name: 'united states',
    region_name: 'california',
    city_name: 'san francisco',
    street: '1 Main St',
    zip_code: '94105',
    naics: '332',
    naics_description: 'Fabricated metal',
    sic_code: '3423',
    sic_code_description: 'Hand tools',
    ticker: null,
    number_of_employees_range: '51-200',
    yearly_revenue_range: '10M-25M',
    network_industry_category: 'manufacturing',
    network_profile: 'network.example/company/acme',
    business_logo: 'https://acme.example/logo.png',
    locations_distribution: [{ country: 'us', locations: 3 }],
  };

  it('accept a bulk response with a full record and nulls for missing data', () => {
    const body = {
      response_context: context,
      total_results: 2,
      data: [
        { business_id: id(1), data: firmographics },
        {
          business_id: id(2),
          data: { business_id: id(2), name: 'Beta', ticker: null, locations_distribution: null },
        },
      ],
      entity_id: id(9),
    };
    expect(checkResponse(BULK_ENRICH_RESPONSE_SCHEMAS.firmographics, body)).toEqual({ ok: true });
  });

  it('reject records with unknown fields, wrong types or out-of-range enums', () => {
    const wrap = (data: unknown) => ({
      response_context: context,
      total_results: 1,
      data: [{ business_id: id(1), data }],
    });
    const schema = BULK_ENRICH_RESPONSE_SCHEMAS.firmographics;
    expect(checkResponse(schema, wrap({ ...firmographics, linkedin_profile: 'x' })).ok).toBe(false);
    expect(checkResponse(schema, wrap({ ...firmographics, naics: 332 })).ok).toBe(false);
    expect(checkResponse(schema, wrap({ ...firmographics, yearly_revenue_range: '1-2' })).ok).toBe(false);
    expect(checkResponse(schema, { response_context: context, data: [] }).ok).toBe(false);
  });

  it('type each dataset precisely: integers, numbers, booleans, timestamps, arrays and maps', () => {
    const posts = {
      days_since_posted: 3,
      number_of_likes: null,
      created_at: '2025-05-01T10:00:00Z',
      post_text: 'hi',
    };
    expect(checkResponse(DATASET_RECORD_SCHEMAS.network_posts, posts).ok).toBe(true);
    expect(checkResponse(DATASET_RECORD_SCHEMAS.network_posts, { ...posts, days_since_posted: 2.5 }).ok).toBe(
      false,
    );
    expect(checkResponse(DATASET_RECORD_SCHEMAS.network_posts, { ...posts, created_at: 'May 1st' }).ok).toBe(
      false,
    );
    const funding = {
      is_ipo: true,
      number_of_funding_rounds: 3,
      known_funding_total_value: 1.5e7,
      current_advisors: [{ name: 'A' }],
    };
    expect(checkResponse(DATASET_RECORD_SCHEMAS.funding_and_acquisition, funding).ok).toBe(true);
    expect(
      checkResponse(DATASET_RECORD_SCHEMAS.funding_and_acquisition, { ...funding, is_ipo: 'yes' }).ok,
    ).toBe(false);
    const workforce = {
      perc_sales_roles: 12.5,
      change_in_media_roles: -0.3,
      quarters: '2025-03-31T00:00:00Z',
    };
    expect(checkResponse(DATASET_RECORD_SCHEMAS.workforce_trends, workforce).ok).toBe(true);
    expect(checkResponse(DATASET_RECORD_SCHEMAS.workforce_trends, { perc_media_role: 1 }).ok).toBe(false);
    expect(
      checkResponse(DATASET_RECORD_SCHEMAS.technographics, {
        full_tech_stack: ['react'],
        bi_and_analytics: [],
      }).ok,
    ).toBe(true);
    expect(
      checkResponse(DATASET_RECORD_SCHEMAS.financial_indicators, { peer_companies: { a: 'b' }, roa: 0.1 }).ok,
    ).toBe(true);
    expect(
      checkResponse(DATASET_RECORD_SCHEMAS.company_ratings_by_employees, {
        company_score: [['2025-01-01', 4.1]],
      }).ok,
    ).toBe(true);
    expect(Object.keys(DATASET_RECORD_SCHEMAS).sort()).toEqual([...BULK_DATASETS].sort());
  });

  it('accept both forms of the fetch responses', () => {
    const offset = {
      response_context: context,
      data: [{ business_id: id(1), name: 'Acme' }],
      total_results: 1,
      page: 1,
      total_pages: 1,
    };
    const cursor = {
      response_context: context,
      data: [],
      total_results: 0,
      page: { size: 0, next_cursor: null },
    };
    expect(checkResponse(FetchBusinessesResponseSchema, offset)).toEqual({ ok: true });
    expect(checkResponse(FetchBusinessesResponseSchema, cursor)).toEqual({ ok: true });
    const prospect = {
      prospect_id: prospectId,
      full_name: 'Ada L',
      job_seniority_level: ['director', null],
      interests: null,
    };
    expect(checkResponse(FetchProspectsResponseSchema, { ...offset, data: [prospect] })).toEqual({
      ok: true,
    });
    expect(
      checkResponse(FetchProspectsResponseSchema, { ...offset, data: [{ ...prospect, linkedin: 'x' }] }).ok,
    ).toBe(false);
  });

  it('keep unmatched match items in place with business_id null', () => {
    const body = {
      response_context: context,
      total_results: 2,
      total_matches: 1,
      matched_businesses: [
        { input: { domain: 'acme.example' }, business_id: id(1) },
        { input: { name: 'Nobody' }, business_id: null },
      ],
    };
    expect(checkResponse(MatchBusinessesResponseSchema, body)).toEqual({ ok: true });
  });
});

describe('prospect bulk enrich (beyond the spec)', () => {
  const route = PROSPECT_BULK_ENRICH_ROUTES.contacts_information;

  it('accept 1 to 50 prospect ids, and nothing else', () => {
    const prospects = (count: number) =>
      Array.from({ length: count }, (_, i) => i.toString(16).padStart(40, 'c'));
    expect(checkRequest(route, { body: { prospect_ids: prospects(50), parameters: null } }).ok).toBe(true);
    expect(checkRequest(route, { body: { prospect_ids: prospects(51) } }).ok).toBe(false);
    expect(checkRequest(route, { body: { prospect_ids: [] } }).ok).toBe(false);
    expect(checkRequest(route, { body: { prospect_ids: [id(1)] } }).ok).toBe(false);
    expect(checkRequest(route, { body: { business_ids: [prospectId] } }).ok).toBe(false);
    const posts = PROSPECT_BULK_ENRICH_ROUTES.network_posts;
    expect(
      checkRequest(posts, { body: { prospect_ids: [prospectId], parameters: { offline_mode: 'true' } } }).ok,
    ).toBe(true);
    expect(checkRequest(posts, { body: { prospect_ids: [prospectId], parameters: { other: 1 } } }).ok).toBe(
      false,
    );
  });

  it('answer rows keyed by prospect_id with the dataset record', () => {
    const body = {
      response_context: context,
      total_results: 1,
      data: [
        {
          prospect_id: prospectId,
          data: {
            emails: [{ address: 'ann.lee@velora.com.example', type: 'professional' }],
            professions_email: 'ann.lee@velora.com.example',
            professional_email_status: 'catch-all',
            phone_numbers: [{ phone_number: '+12125550142' }],
            mobile_phone: null,
          },
        },
      ],
    };
    const schema = PROSPECT_BULK_ENRICH_RESPONSE_SCHEMAS.contacts_information;
    expect(checkResponse(schema, body)).toEqual({ ok: true });
    const wrongStatus = structuredClone(body);
    (wrongStatus.data[0] as { data: { professional_email_status: string } }).data.professional_email_status =
      'ok';
    expect(checkResponse(schema, wrongStatus).ok).toBe(false);
    const businessKeyed = { ...body, data: [{ business_id: id(1), data: {} }] };
    expect(checkResponse(schema, businessKeyed).ok).toBe(false);
  });

  it('give Parquet columns for each prospect dataset', () => {
    const contacts = new Map(prospectDatasetColumns('contacts_information').map((c) => [c.name, c.type]));
    expect(contacts.get('emails')).toEqual({
      kind: 'list',
      element: { kind: 'map', value: { kind: 'string' } },
    });
    expect(contacts.get('professional_email_status')).toEqual({ kind: 'string' });
    expect(prospectDatasetColumns('profiles').find((c) => c.name === 'prospect_id')?.nullable).toBe(false);
    expect(prospectDatasetColumns('network_posts').find((c) => c.name === 'created_at')?.type).toEqual({
      kind: 'timestamp',
    });
  });
});

describe('dataset columns for Parquet', () => {
  it('derive scalar, timestamp, list, map and JSON columns from the record schemas', () => {
    const firmographics = datasetColumns('firmographics');
    expect(firmographics.find((c) => c.name === 'business_id')).toEqual({
      name: 'business_id',
      type: { kind: 'string' },
      nullable: false,
    });
    expect(firmographics.find((c) => c.name === 'yearly_revenue_range')).toEqual({
      name: 'yearly_revenue_range',
      type: { kind: 'string' },
      nullable: true,
    });
    expect(firmographics.find((c) => c.name === 'locations_distribution')?.type).toEqual({
      kind: 'list',
      element: { kind: 'json' },
    });
    const funding = new Map(datasetColumns('funding_and_acquisition').map((c) => [c.name, c.type]));
    expect(funding.get('is_ipo')).toEqual({ kind: 'boolean' });
    expect(funding.get('number_of_funding_rounds')).toEqual({ kind: 'integer' });
    expect(funding.get('known_funding_total_value')).toEqual({ kind: 'number' });
    expect(funding.get('ipo_date')).toEqual({ kind: 'timestamp' });
    expect(funding.get('investors')).toEqual({ kind: 'list', element: { kind: 'string' } });
    expect(funding.get('current_advisors')).toEqual({
      kind: 'list',
      element: { kind: 'map', value: { kind: 'string' } },
    });
    expect(datasetColumns('workforce_trends')).toHaveLength(33);
    expect(datasetColumns('technographics')).toHaveLength(23);
    for (const dataset of BULK_DATASETS) {
      expect(datasetColumns(dataset).length, dataset).toBeGreaterThanOrEqual(3);
    }
  });

  it('derive structs where the fields are documented', () => {
    const hierarchy = columnsOfSchema(CompanyHierarchyRecordSchema);
    expect(hierarchy.find((c) => c.name === 'subsidiaries')?.type).toEqual({
      kind: 'list',
      element: {
        kind: 'struct',
        fields: [
          { name: 'id', type: { kind: 'string' }, nullable: false },
          { name: 'name', type: { kind: 'string' }, nullable: false },
        ],
      },
    });
  });
});
