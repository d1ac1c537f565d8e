import { describe, expect, it } from 'vitest';
import {
  ALL_ROUTES,
  BULK_DATASETS,
  BULK_ENRICH_ROUTES,
  BEYOND_SPEC_EXTENSION,
  PROSPECT_BULK_ENRICH_ROUTES,
  PROSPECT_DATASETS,
  buildOpenApiDocument,
  openApiPath,
  ROUTES,
  SERVICE_VERSION,
} from '../../contract/index.js';

const doc = buildOpenApiDocument({ serverUrl: 'http://localhost:9999' });

function collectRefs(node: unknown, into: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => collectRefs(item, into));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') into.push(value);
      else collectRefs(value, into);
    }
  }
  return into;
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 of interface version 0.2.286 with the given server', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('0.2.286');
    expect(SERVICE_VERSION).toBe('0.2.286');
    expect(doc.servers).toEqual([{ url: 'http://localhost:9999' }]);
  });

  it('lists every route of the table under its path and method, with unique operation ids', () => {
    for (const route of ALL_ROUTES) {
      const operation = doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation?.operationId).toBe(route.operationId);
    }
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(ids).toHaveLength(ALL_ROUTES.length);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has the endpoints of spec section 4', () => {
    const expected = [
      'get /healthcheck/http',
      'get /healthcheck/http_payload/{response_bytes}',
      'get /version/',
      'post /v1/businesses/match',
      'post /v1/businesses',
      'post /v1/businesses/events',
      'get /v1/businesses/autocomplete',
      'post /v1/businesses/stats',
      'get /v1/businesses/events/enrollments',
      'post /v1/businesses/events/enrollments',
      'patch /v1/businesses/events/enrollments',
      'delete /v1/businesses/events/enrollments',
      'post /v1/businesses/company_hierarchies/enrich',
      'post /v1/prospects/match',
      'post /v1/prospects',
      'post /v1/prospects/network_posts/enrich',
      'post /v1/webhooks',
    ];
    const present = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m} ${path}`),
    );
    expect(present).toEqual(expect.arrayContaining(expected));
  });

  it('has all twelve bulk_enrich datasets, each with its own record schema', () => {
    expect(BULK_DATASETS).toHaveLength(12);
    const bulkPaths = Object.keys(doc.paths).filter(
      (path) => path.startsWith('/v1/businesses/') && path.endsWith('/bulk_enrich'),
    );
    expect(bulkPaths.sort()).toEqual(BULK_DATASETS.map((d) => `/v1/businesses/${d}/bulk_enrich`).sort());
    const firmographics = doc.paths['/v1/businesses/firmographics/bulk_enrich']?.post as {
      responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }>;
    };
    expect(firmographics.responses['200']?.content['application/json']?.schema.$ref).toBe(
      '#/components/schemas/FirmographicsBulkEnrichResponse',
    );
    expect(doc.components.schemas.FirmographicsRecord?.properties).toHaveProperty(
      'network_industry_category',
    );
  });

  it('marks the three prospect bulk operations, and only them, as provider operations beyond the spec', () => {
    const marked = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation[BEYOND_SPEC_EXTENSION] !== undefined)
        .map(([method]) => `${method} ${path}`),
    );
    expect(marked.sort()).toEqual(PROSPECT_DATASETS.map((d) => `post /v1/prospects/${d}/bulk_enrich`).sort());
    const profiles = doc.paths['/v1/prospects/profiles/bulk_enrich']?.post as {
      description: string;
      responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }>;
      [BEYOND_SPEC_EXTENSION]: unknown;
    };
    expect(profiles[BEYOND_SPEC_EXTENSION]).toEqual({ spec_version: '0.2.286', provider_version: '0.2.273' });
    expect(profiles.description).toMatch(/beyond spec 0\.2\.286/);
    expect(Object.keys(profiles.responses).sort()).toEqual(['200', '401', '403', '422', '429']);
    expect(profiles.responses['200']?.content['application/json']?.schema.$ref).toBe(
      '#/components/schemas/ProspectProfilesBulkEnrichResponse',
    );
    expect(doc.components.schemas.ProspectProfilesBulkEnrichRow?.properties).toHaveProperty('prospect_id');
    expect(doc.components.schemas.ContactsInformationRecord?.properties).toHaveProperty('professions_email');
    for (const route of Object.values(PROSPECT_BULK_ENRICH_ROUTES)) {
      expect(route.beyondSpec, route.operationId).toBeDefined();
    }
  });

  it('resolves every $ref to a component', () => {
    const refs = collectRefs(doc);
    expect(refs.length).toBeGreaterThan(100);
    for (const ref of refs) {
      expect(ref.startsWith('#/components/schemas/'), ref).toBe(true);
      expect(doc.components.schemas[ref.slice('#/components/schemas/'.length)], ref).toBeDefined();
    }
  });

  it('requires the api_key header exactly on the (K) operations', () => {
    expect(doc.components.securitySchemes.APIKeyHeader).toEqual({
      type: 'apiKey',
      in: 'header',
      name: 'api_key',
    });
    for (const route of ALL_ROUTES) {
      const operation = doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      expect(Boolean(operation?.security), route.operationId).toBe(route.auth);
    }
    expect(ROUTES.healthcheck.auth).toBe(false);
    expect(ROUTES.version.auth).toBe(false);
    expect(BULK_ENRICH_ROUTES.website_changes.auth).toBe(true);
  });

  it('declares 422 with the FastAPI body on operations with input, and the tenant header except on health and version', () => {
    for (const route of ALL_ROUTES) {
      const operation = doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()] as {
        responses: Record<string, unknown>;
        parameters: { name: string; in: string }[];
      };
      const hasInput = Boolean(route.body ?? route.params ?? route.querystring);
      if (hasInput) expect(operation.responses['422'], route.operationId).toBeDefined();
      const tenant = operation.parameters.some((p) => p.in === 'header' && p.name === 'tenant');
      expect(tenant, route.operationId).toBe(
        route.operationId !== 'healthcheck' && route.operationId !== 'version',
      );
    }
    expect(doc.components.schemas.HTTPValidationError).toBeDefined();
  });

  it('documents path and query parameters with their constraints', () => {
    const payload = doc.paths['/healthcheck/http_payload/{response_bytes}']?.get as {
      parameters: { name: string; in: string; required: boolean; schema: { maximum?: number } }[];
    };
    expect(payload.parameters[0]).toMatchObject({ name: 'response_bytes', in: 'path', required: true });
    expect(payload.parameters[0]?.schema.maximum).toBe(1_000_000);
    const autocomplete = doc.paths['/v1/businesses/autocomplete']?.get as {
      parameters: { name: string; required: boolean }[];
    };
    expect(autocomplete.parameters.map((p) => [p.name, p.required])).toEqual([
      ['field', true],
      ['query', false],
      ['semantic_search', false],
      ['tenant', false],
    ]);
    expect(doc.components.schemas.AutocompleteField?.enum).toHaveLength(19);
  });

  it('is plain JSON', () => {
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });
});
