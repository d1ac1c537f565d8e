// The route table: one entry per operation of spec section 4 (and the provider operations beyond it
// that the project uses), naming its method, path, auth, tenant header, request schemas, 200 schema
// and declared error statuses. The sandbox registers these routes,
// the client calls them, and the OpenAPI document is generated from them.
import type { TSchema } from 'typebox';
import { BULK_DATASETS, type BulkDataset } from './datasets.js';
import { PROSPECT_DATASETS, type ProspectDataset } from './prospect-datasets.js';
import {
  checkBusinessFetchRules,
  checkProspectFetchRules,
  checkProspectMatchRules,
  type RequestRule,
} from './rules.js';
import {
  AutocompleteQuerySchema,
  AutocompleteResponseSchema,
  BusinessStatsRequestSchema,
  BusinessStatsResponseSchema,
  CreateEnrollmentsRequestSchema,
  DeleteEnrollmentsRequestSchema,
  DeleteEnrollmentsResponseSchema,
  EnrichHierarchyRequestSchema,
  EnrichHierarchyResponseSchema,
  EnrollmentWriteResponseSchema,
  FetchBusinessEventsRequestSchema,
  FetchBusinessEventsResponseSchema,
  FetchBusinessesRequestSchema,
  FetchBusinessesResponseSchema,
  ListEnrollmentsResponseSchema,
  MatchBusinessesRequestSchema,
  MatchBusinessesResponseSchema,
  UpdateEnrollmentsRequestSchema,
} from './schemas/businesses.js';
import { BULK_ENRICH_REQUEST_SCHEMAS, BULK_ENRICH_RESPONSE_SCHEMAS, datasetTitle } from './schemas/bulk.js';
import {
  PROSPECT_BULK_ENRICH_REQUEST_SCHEMAS,
  PROSPECT_BULK_ENRICH_RESPONSE_SCHEMAS,
  prospectDatasetTitle,
} from './schemas/prospect-bulk.js';
import {
  AuthErrorBodySchema,
  HttpValidationErrorSchema,
  InsufficientCreditsBodySchema,
  NotFoundBodySchema,
  RateLimitErrorBodySchema,
  TenantHeadersSchema,
} from './schemas/common.js';
import {
  HealthcheckPayloadParamsSchema,
  HealthcheckPayloadResponseSchema,
  HealthcheckResponseSchema,
  VersionResponseSchema,
} from './schemas/operational.js';
import {
  EnrichProspectPostsRequestSchema,
  EnrichProspectPostsResponseSchema,
  FetchProspectsRequestSchema,
  FetchProspectsResponseSchema,
  MatchProspectsRequestSchema,
  MatchProspectsResponseSchema,
} from './schemas/prospects.js';
import {
  DeleteWebhookResponseSchema,
  RegisterWebhookRequestSchema,
  WebhookPartnerParamsSchema,
  WebhookRegistrationResponseSchema,
} from './schemas/webhooks.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';
/** Error statuses a route can declare besides 5xx, which any route may answer. */
export type ErrorStatus = 401 | 403 | 404 | 422 | 429;

export interface RouteSpec {
  readonly operationId: string;
  readonly method: HttpMethod;
  /** fastify style: `/v1/webhooks/:partner_id`. */
  readonly path: string;
  readonly summary: string;
  readonly tag:
    'Operational' | 'Businesses' | 'Bulk enrichment' | 'Prospects' | 'Prospect bulk enrichment' | 'Webhooks';
  /** (K): the `api_key` header is required; missing or unknown → 401. */
  readonly auth: boolean;
  /** Accepts the optional `tenant` header, which scopes enrollments and webhooks. */
  readonly tenant: boolean;
  readonly body?: TSchema;
  readonly querystring?: TSchema;
  readonly params?: TSchema;
  readonly headers?: TSchema;
  /** Schema of the 200 body. */
  readonly response: TSchema;
  readonly errors: readonly ErrorStatus[];
  /** Cross-field checks run after the schemas pass; each failure is a 422 detail item. */
  readonly rules?: RequestRule;
  /** Bulk routes only. */
  readonly dataset?: BulkDataset;
  /** Prospect bulk routes only. */
  readonly prospectDataset?: ProspectDataset;
  /**
   * A provider operation beyond the spec (interface 0.2.286): taken from the provider's published API
   * (0.2.273). The OpenAPI document marks it with `x-beyond-spec` and says so in its description.
   */
  readonly beyondSpec?: { readonly providerVersion: string };
}

/** Provider version of the published document the operations beyond the spec come from. */
export const PROVIDER_DOCUMENT_VERSION = '0.2.273';

/** Body schema of each declared error status. */
export const ERROR_RESPONSE_SCHEMAS: Record<ErrorStatus, TSchema> = {
  401: AuthErrorBodySchema,
  403: InsufficientCreditsBodySchema,
  404: NotFoundBodySchema,
  422: HttpValidationErrorSchema,
  429: RateLimitErrorBodySchema,
};

// Error sets: every (K) route can answer 401 and 429; data operations are billed (403 on no credits);
// routes with input answer 422.
const K_INPUT = [401, 422, 429] as const;
const K_BILLED = [401, 403, 422, 429] as const;

/** Keeps each entry's literal schema types, so the client's method types follow from the table. */
function route<const R extends RouteSpec>(spec: R): R {
  return spec;
}

export const ROUTES = {
  healthcheck: route({
    operationId: 'healthcheck',
    method: 'GET',
    path: '/healthcheck/http',
    summary: 'Liveness: a JSON string.',
    tag: 'Operational',
    auth: false,
    tenant: false,
    response: HealthcheckResponseSchema,
    errors: [],
  }),
  healthcheckPayload: route({
    operationId: 'healthcheckPayload',
    method: 'GET',
    path: '/healthcheck/http_payload/:response_bytes',
    summary: 'A JSON string of `response_bytes` bytes, for measuring transfer.',
    tag: 'Operational',
    auth: true,
    tenant: true,
    params: HealthcheckPayloadParamsSchema,
    headers: TenantHeadersSchema,
    response: HealthcheckPayloadResponseSchema,
    errors: K_INPUT,
  }),
  version: route({
    operationId: 'version',
    method: 'GET',
    path: '/version/',
    summary: 'The service version as a JSON string.',
    tag: 'Operational',
    auth: false,
    tenant: false,
    response: VersionResponseSchema,
    errors: [],
  }),
  matchBusinesses: route({
    operationId: 'matchBusinesses',
    method: 'POST',
    path: '/v1/businesses/match',
    summary: 'Resolve business attribute sets to ids; same length and order as the input.',
    tag: 'Businesses',
    auth: true,
    tenant: true,
    body: MatchBusinessesRequestSchema,
    headers: TenantHeadersSchema,
    response: MatchBusinessesResponseSchema,
    errors: K_BILLED,
  }),
  fetchBusinesses: route({
    operationId: 'fetchBusinesses',
    method: 'POST',
    path: '/v1/businesses',
    summary: 'Filter businesses; minimal data, offset or cursor pages.',
    tag: 'Businesses',
    auth: true,
    tenant: true,
    body: FetchBusinessesRequestSchema,
    headers: TenantHeadersSchema,
    response: FetchBusinessesResponseSchema,
    errors: K_BILLED,
    rules: checkBusinessFetchRules,
  }),
  fetchEvents: route({
    operationId: 'fetchEvents',
    method: 'POST',
    path: '/v1/businesses/events',
    summary: 'Events of businesses over the last 90 days.',
    tag: 'Businesses',
    auth: true,
    tenant: true,
    body: FetchBusinessEventsRequestSchema,
    headers: TenantHeadersSchema,
    response: FetchBusinessEventsResponseSchema,
    errors: K_BILLED,
  }),
  autocomplete: route({
    operationId: 'autocomplete',
    method: 'GET',
    path: '/v1/businesses/autocomplete',
    summary: 'Valid values of a filter field.',
    tag: 'Businesses',
    auth: true,
    tenant: true,
    querystring: AutocompleteQuerySchema,
    headers: TenantHeadersSchema,
    response: AutocompleteResponseSchema,
    errors: K_INPUT,
  }),
  businessStats: route({
    operationId: 'businessStats',
    method: 'POST',
    path: '/v1/businesses/stats',
    summary: 'Counts of the businesses matching filters.',
    tag: 'Businesses',
    auth: true,
    tenant: true,
    body: BusinessStatsRequestSchema,
    headers: TenantHeadersSchema,
    response: BusinessStatsResponseSchema,
    errors: K_BILLED,
  }),
  listEnrollments: route({
    operationId: 'listEnrollments',
    method: 'GET',
    path: '/v1/businesses/events/enrollments',
    summary: "The caller's (key and tenant) event enrollments.",
    tag: 'Businesses',
    auth: true,
    tenant: true,
    headers: TenantHeadersSchema,
    response: ListEnrollmentsResponseSchema,
    errors: K_INPUT,
  }),
  createEnrollments: route({
    operationId: 'createEnrollments',
    method: 'POST',
    path: '/v1/businesses/events/enrollments',
    summary: 'Enroll businesses (at most 20) for event types.',
    tag: 'Businesses',
    auth: true,
    tenant: true,
    body: CreateEnrollmentsRequestSchema,
    headers: TenantHeadersSchema,
    response: EnrollmentWriteResponseSchema,
    errors: K_INPUT,
  }),
  updateEnrollments: route({
    operationId: 'updateEnrollments',
    method: 'PATCH',
    path: '/v1/businesses/events/enrollments',
    summary: 'Replace the key, event types and businesses of an enrollment.',
    tag: 'Businesses',
    auth: true,
    tenant: true,
    body: UpdateEnrollmentsRequestSchema,
    headers: TenantHeadersSchema,
    response: EnrollmentWriteResponseSchema,
    errors: [401, 404, 422, 429],
  }),
  deleteEnrollments: route({
    operationId: 'deleteEnrollments',
    method: 'DELETE',
    path: '/v1/businesses/events/enrollments',
    summary: 'Delete an enrollment.',
    tag: 'Businesses',
    auth: true,
    tenant: true,
    body: DeleteEnrollmentsRequestSchema,
    headers: TenantHeadersSchema,
    response: DeleteEnrollmentsResponseSchema,
    errors: [401, 404, 422, 429],
  }),
  enrichHierarchy: route({
    operationId: 'enrichHierarchy',
    method: 'POST',
    path: '/v1/businesses/company_hierarchies/enrich',
    summary: 'Parent, ultimate parent, subsidiaries and organization tree of one business.',
    tag: 'Businesses',
    auth: true,
    tenant: true,
    body: EnrichHierarchyRequestSchema,
    headers: TenantHeadersSchema,
    response: EnrichHierarchyResponseSchema,
    errors: K_BILLED,
  }),
  matchProspects: route({
    operationId: 'matchProspects',
    method: 'POST',
    path: '/v1/prospects/match',
    summary: 'Resolve prospect attribute sets to ids; same length and order as the input.',
    tag: 'Prospects',
    auth: true,
    tenant: true,
    body: MatchProspectsRequestSchema,
    headers: TenantHeadersSchema,
    response: MatchProspectsResponseSchema,
    errors: K_BILLED,
    rules: checkProspectMatchRules,
  }),
  fetchProspects: route({
    operationId: 'fetchProspects',
    method: 'POST',
    path: '/v1/prospects',
    summary: 'Prospects matching the filters of spec 2.7; offset or cursor pages.',
    tag: 'Prospects',
    auth: true,
    tenant: true,
    body: FetchProspectsRequestSchema,
    headers: TenantHeadersSchema,
    response: FetchProspectsResponseSchema,
    errors: K_BILLED,
    rules: checkProspectFetchRules,
  }),
  enrichProspectPosts: route({
    operationId: 'enrichProspectPosts',
    method: 'POST',
    path: '/v1/prospects/network_posts/enrich',
    summary: 'The posts record of one prospect.',
    tag: 'Prospects',
    auth: true,
    tenant: true,
    body: EnrichProspectPostsRequestSchema,
    headers: TenantHeadersSchema,
    response: EnrichProspectPostsResponseSchema,
    errors: K_BILLED,
  }),
  registerWebhook: route({
    operationId: 'registerWebhook',
    method: 'POST',
    path: '/v1/webhooks',
    summary: "Register (or replace) the partner's webhook; returns a new secret.",
    tag: 'Webhooks',
    auth: true,
    tenant: true,
    body: RegisterWebhookRequestSchema,
    headers: TenantHeadersSchema,
    response: WebhookRegistrationResponseSchema,
    errors: K_INPUT,
  }),
  getWebhook: route({
    operationId: 'getWebhook',
    method: 'GET',
    path: '/v1/webhooks/:partner_id',
    summary: "The partner's webhook registration (provider document; the spec does not show it).",
    tag: 'Webhooks',
    auth: true,
    tenant: true,
    params: WebhookPartnerParamsSchema,
    headers: TenantHeadersSchema,
    response: WebhookRegistrationResponseSchema,
    errors: [401, 404, 422, 429],
  }),
  deleteWebhook: route({
    operationId: 'deleteWebhook',
    method: 'DELETE',
    path: '/v1/webhooks/:partner_id',
    summary: "Remove the partner's webhook (provider document; the spec does not show it).",
    tag: 'Webhooks',
    auth: true,
    tenant: true,
    params: WebhookPartnerParamsSchema,
    headers: TenantHeadersSchema,
    response: DeleteWebhookResponseSchema,
    errors: [401, 404, 422, 429],
  }),
} as const;

export type OperationName = keyof typeof ROUTES;
export type Routes = typeof ROUTES;

function bulkRoute<D extends BulkDataset>(dataset: D) {
  return route({
    operationId: `bulkEnrich${datasetTitle(dataset)}`,
    method: 'POST',
    path: `/v1/businesses/${dataset}/bulk_enrich`,
    summary: `The ${dataset} record of up to 50 businesses; ids without data are left out.`,
    tag: 'Bulk enrichment',
    auth: true,
    tenant: true,
    body: BULK_ENRICH_REQUEST_SCHEMAS[dataset],
    headers: TenantHeadersSchema,
    response: BULK_ENRICH_RESPONSE_SCHEMAS[dataset],
    errors: K_BILLED,
    dataset,
  });
}
export type BulkRoutes = { [D in BulkDataset]: ReturnType<typeof bulkRoute<D>> };

/** `/v1/businesses/<dataset>/bulk_enrich`, one route per dataset. */
export const BULK_ENRICH_ROUTES = Object.fromEntries(
  BULK_DATASETS.map((dataset) => [dataset, bulkRoute(dataset)]),
) as BulkRoutes;

function prospectBulkRoute<D extends ProspectDataset>(dataset: D) {
  return route({
    operationId: `bulkEnrich${prospectDatasetTitle(dataset)}`,
    method: 'POST',
    path: `/v1/prospects/${dataset}/bulk_enrich`,
    summary: `The ${dataset} record of up to 50 prospects; ids without data are left out.`,
    tag: 'Prospect bulk enrichment',
    auth: true,
    tenant: true,
    body: PROSPECT_BULK_ENRICH_REQUEST_SCHEMAS[dataset],
    headers: TenantHeadersSchema,
    response: PROSPECT_BULK_ENRICH_RESPONSE_SCHEMAS[dataset],
    errors: K_BILLED,
    prospectDataset: dataset,
    beyondSpec: { providerVersion: PROVIDER_DOCUMENT_VERSION },
  });
}
export type ProspectBulkRoutes = { [D in ProspectDataset]: ReturnType<typeof prospectBulkRoute<D>> };

/** `/v1/prospects/<dataset>/bulk_enrich`, one route per prospect dataset (beyond the spec). */
export const PROSPECT_BULK_ENRICH_ROUTES = Object.fromEntries(
  PROSPECT_DATASETS.map((dataset) => [dataset, prospectBulkRoute(dataset)]),
) as ProspectBulkRoutes;

/**
 * Every route of the service: the nineteen operations, the twelve business bulk routes and the three
 * prospect bulk routes beyond the spec.
 */
export const ALL_ROUTES: readonly RouteSpec[] = [
  ...Object.values(ROUTES),
  ...Object.values(BULK_ENRICH_ROUTES),
  ...Object.values(PROSPECT_BULK_ENRICH_ROUTES),
];

/** OpenAPI path of a fastify path (`:name` → `{name}`). */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}
