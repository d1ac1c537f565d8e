// Requests that reach every operation of the sandbox on its success and its error paths, over a world
// generated for the conformance tests; each names the route it exercises and the status it expects.
import type { FastifyInstance } from 'fastify';
import {
  ALL_ROUTES,
  AUTOCOMPLETE_FIELDS,
  BULK_ENRICH_ROUTES,
  BUSINESS_EVENT_TYPES,
  CURSOR_START,
  PROSPECT_BULK_ENRICH_ROUTES,
  ROUTES,
  type RouteSpec,
} from '../../contract/index.js';
import { API_KEY } from '../sandbox/support.js';

export interface OperationRequest {
  route: RouteSpec;
  /** What the request checks, for failure messages. */
  name: string;
  method: string;
  url: string;
  body?: unknown;
  /** Headers; default the test API key. */
  headers?: Record<string, string>;
  status: number;
}

/** Ids of the generated world the requests use. */
export interface WorldIds {
  businesses: string[];
  /** Businesses with a hierarchy, and with events. */
  withHierarchy: string;
  withEvents: string[];
  prospects: string[];
  withPosts: string;
  withContacts: string;
  /** A prospect whose employer has no website (its profile's `company_website` is empty). */
  withoutWebsite: string;
}

export async function worldIds(app: FastifyInstance): Promise<WorldIds> {
  const { store } = app.sandbox;
  const first = async (sql: string) => String((await store.query(sql))[0]?.id);
  const events = await store.query('SELECT DISTINCT business_id AS id FROM events ORDER BY 1 LIMIT 10');
  const prospects = await store.query('SELECT prospect_id AS id FROM prospects ORDER BY pix LIMIT 5');
  // Listed companies have the records a ticker shows in (firmographics, 10-K, financial indicators).
  const listed = await store.query(
    'SELECT business_id AS id FROM businesses WHERE is_public ORDER BY bix LIMIT 15',
  );
  return {
    businesses: [...listed.map((row) => String(row.id)), ...store.businessIds.slice(0, 35)],
    withHierarchy: await first('SELECT business_id AS id FROM hierarchies ORDER BY bix LIMIT 1'),
    withEvents: events.map((row) => String(row.id)),
    prospects: prospects.map((row) => String(row.id)),
    withPosts: await first('SELECT prospect_id AS id FROM prospect_posts ORDER BY pix LIMIT 1'),
    withContacts: await first('SELECT prospect_id AS id FROM prospect_contacts ORDER BY pix LIMIT 1'),
    withoutWebsite: await first(
      "SELECT prospect_id AS id FROM prospects WHERE record_json ->> 'company_website' = '' ORDER BY pix LIMIT 1",
    ),
  };
}

const NO_KEY: Record<string, string> = {};
const UNKNOWN_BUSINESS = '0'.repeat(32);

function concrete(route: RouteSpec): string {
  return route.path.replace(':response_bytes', '64').replace(':partner_id', 'conformance-partner');
}

/** The success-path requests, in an order that creates what later ones read (enrollments, webhook). */
export function successRequests(ids: WorldIds): OperationRequest[] {
  const r = (route: RouteSpec, name: string, body?: unknown, url = concrete(route)): OperationRequest => ({
    route,
    name,
    method: route.method,
    url,
    ...(body !== undefined ? { body } : {}),
    status: 200,
  });
  const fetch = { mode: 'full', size: 20, page_size: 10 };
  const enrollment = { enrollment_key: 'conformance', event_types: ['new_funding_round'] };
  return [
    { ...r(ROUTES.healthcheck, 'liveness'), headers: NO_KEY },
    r(ROUTES.healthcheckPayload, 'payload of 64 bytes'),
    { ...r(ROUTES.version, 'version'), headers: NO_KEY },
    r(ROUTES.matchBusinesses, 'matched and unmatched', {
      businesses_to_match: [{ name: 'nobody', domain: 'no-such-company.example' }, { url: 'example.org' }],
    }),
    r(ROUTES.fetchBusinesses, 'offset page', { ...fetch, filters: { country_code: { values: ['us'] } } }),
    r(ROUTES.fetchBusinesses, 'cursor page', { ...fetch, next_cursor: CURSOR_START }),
    r(ROUTES.fetchBusinesses, 'no match', {
      ...fetch,
      filters: { company_name: { values: ['zz no such'] } },
    }),
    r(ROUTES.fetchEvents, 'events', { business_ids: ids.withEvents, event_types: [...BUSINESS_EVENT_TYPES] }),
    ...AUTOCOMPLETE_FIELDS.map((field) =>
      r(
        ROUTES.autocomplete,
        `autocomplete ${field}`,
        undefined,
        `${ROUTES.autocomplete.path}?field=${field}&query=a`,
      ),
    ),
    r(ROUTES.businessStats, 'stats', { filters: {} }),
    r(ROUTES.createEnrollments, 'create enrollment', {
      ...enrollment,
      business_ids: ids.businesses.slice(0, 3),
    }),
    r(ROUTES.listEnrollments, 'list enrollments'),
    r(ROUTES.enrichHierarchy, 'hierarchy', { business_id: ids.withHierarchy }),
    r(ROUTES.enrichHierarchy, 'no hierarchy', { business_id: UNKNOWN_BUSINESS }),
    r(ROUTES.matchProspects, 'prospect match', { prospects_to_match: [{ email: 'nobody@example.org' }] }),
    r(ROUTES.fetchProspects, 'prospect offset page', fetch),
    r(ROUTES.fetchProspects, 'prospect cursor page', { ...fetch, next_cursor: CURSOR_START }),
    r(ROUTES.enrichProspectPosts, 'posts', { prospect_id: ids.withPosts }),
    r(ROUTES.enrichProspectPosts, 'no posts', { prospect_id: '0'.repeat(40) }),
    r(ROUTES.registerWebhook, 'register webhook', {
      partner_id: 'conformance-partner',
      webhook_url: 'https://receiver.example/hook',
    }),
    r(ROUTES.getWebhook, 'get webhook'),
    r(ROUTES.deleteWebhook, 'delete webhook'),
    ...Object.values(BULK_ENRICH_ROUTES).map((route) =>
      r(route, `bulk ${route.dataset ?? ''}`, { business_ids: ids.businesses }),
    ),
    // Beyond the spec: the provider's prospect bulk operations, with ids that have data and one unknown.
    ...Object.values(PROSPECT_BULK_ENRICH_ROUTES).flatMap((route) => [
      r(route, `prospect bulk ${route.prospectDataset}`, {
        prospect_ids: [...ids.prospects, ids.withPosts, ids.withContacts, ids.withoutWebsite, '0'.repeat(40)],
      }),
      r(route, `prospect bulk ${route.prospectDataset}, unknown id`, { prospect_ids: ['0'.repeat(40)] }),
    ]),
  ];
}

/** Enrollment update and delete need the id the create answered. */
export function enrollmentRequests(enrollmentId: string, ids: WorldIds): OperationRequest[] {
  return [
    {
      route: ROUTES.updateEnrollments,
      name: 'update enrollment',
      method: 'PATCH',
      url: ROUTES.updateEnrollments.path,
      body: {
        enrollment_id: enrollmentId,
        enrollment_key: 'conformance-2',
        event_types: ['new_product'],
        business_ids: ids.businesses.slice(0, 2),
      },
      status: 200,
    },
    {
      route: ROUTES.deleteEnrollments,
      name: 'delete enrollment',
      method: 'DELETE',
      url: ROUTES.deleteEnrollments.path,
      body: { enrollment_id: enrollmentId },
      status: 200,
    },
  ];
}

/** An invalid input of a route, when it takes any: a body missing its fields, or a bad path or query. */
function invalidInput(route: RouteSpec): Partial<OperationRequest> | undefined {
  if (route === ROUTES.healthcheckPayload) return { url: '/healthcheck/http_payload/1000001' };
  if (route === ROUTES.autocomplete) return { url: `${route.path}?field=no_such_field` };
  if (route.body) return { body: {} };
  return undefined;
}

/** The error-path requests of every route: 422 on invalid input, 401 without a key, 404 where owned. */
export function errorRequests(): OperationRequest[] {
  const out: OperationRequest[] = [];
  for (const route of ALL_ROUTES) {
    const base = { route, method: route.method, url: concrete(route) };
    const invalid = invalidInput(route);
    if (invalid) out.push({ ...base, name: 'invalid input', ...invalid, status: 422 });
    if (route.auth) out.push({ ...base, name: 'no key', headers: NO_KEY, status: 401 });
  }
  out.push(
    {
      route: ROUTES.getWebhook,
      name: 'unknown partner',
      method: 'GET',
      url: concrete(ROUTES.getWebhook),
      status: 404,
    },
    {
      route: ROUTES.deleteEnrollments,
      name: 'unknown enrollment',
      method: 'DELETE',
      url: ROUTES.deleteEnrollments.path,
      body: { enrollment_id: 'no-such-enrollment' },
      status: 404,
    },
  );
  return out;
}

/** Sends a request to the app with the test key (unless the request names its headers). */
export function send(app: FastifyInstance, request: OperationRequest) {
  const headers = request.headers ?? { api_key: API_KEY };
  return app.inject({
    method: request.method as 'GET',
    url: request.url,
    headers: request.body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(request.body === undefined ? {} : { payload: JSON.stringify(request.body) }),
  });
}
