// Builds the OpenAPI 3.1 document from the route table: every route, its parameters, bodies and
// responses, with titled schemas lifted into components.schemas and referenced by $ref.
import type { TSchema } from 'typebox';
import { SERVICE_VERSION, API_KEY_HEADER, TENANT_HEADER } from './limits.js';
import {
  ALL_ROUTES,
  ERROR_RESPONSE_SCHEMAS,
  openApiPath,
  type ErrorStatus,
  type RouteSpec,
} from './routes.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string; description?: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, JsonObject>>;
  components: { schemas: Record<string, JsonObject>; securitySchemes: Record<string, JsonObject> };
}

export interface OpenApiOptions {
  /** Base address listed under `servers`; default `http://127.0.0.1:8080`. */
  serverUrl?: string;
}

export const SECURITY_SCHEME_NAME = 'APIKeyHeader';
/** Marks an operation the spec does not have, taken from the provider's published API. */
export const BEYOND_SPEC_EXTENSION = 'x-beyond-spec';

const ERROR_DESCRIPTIONS: Record<ErrorStatus, string> = {
  401: 'Missing or unknown API key',
  403: 'Insufficient credits',
  404: 'Not found (or owned by another key or tenant)',
  422: 'Validation Error',
  429: 'Rate limit exceeded; retry after `Retry-After` seconds',
};

const RATE_LIMIT_HEADERS: JsonObject = {
  'X-RateLimit-Limit': { description: 'Requests allowed per 60 s window.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': {
    description: 'Unix seconds when the window frees a request.',
    schema: { type: 'integer' },
  },
};

/** Collects titled schemas into components, replacing nested occurrences with $ref. */
class ComponentRegistry {
  readonly schemas: Record<string, JsonObject> = {};

  /** The JSON form of `schema`, a $ref when it is titled. */
  use(schema: TSchema): Json {
    return this.walk(JSON.parse(JSON.stringify(schema)) as Json, false);
  }

  private walk(node: Json, isComponentRoot: boolean): Json {
    if (Array.isArray(node)) return node.map((item) => this.walk(item, false));
    if (node === null || typeof node !== 'object') return node;
    if (!isComponentRoot && typeof node.title === 'string') return this.register(node.title, node);
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) out[key] = this.walk(value, false);
    return out;
  }

  private register(name: string, node: JsonObject): Json {
    const body = this.walk(node, true) as JsonObject;
    const existing = this.schemas[name];
    if (existing && JSON.stringify(existing) !== JSON.stringify(body)) {
      throw new Error(`Two different schemas carry the title ${name}`);
    }
    this.schemas[name] = body;
    return { $ref: `#/components/schemas/${name}` };
  }
}

function parametersOf(route: RouteSpec, registry: ComponentRegistry): JsonObject[] {
  const parameters: JsonObject[] = [];
  const fromObject = (schema: TSchema | undefined, where: 'path' | 'query') => {
    if (!schema) return;
    const json = JSON.parse(JSON.stringify(schema)) as {
      properties?: Record<string, unknown>;
      required?: string[];
    };
    for (const name of Object.keys(json.properties ?? {})) {
      const property = (schema as unknown as { properties: Record<string, TSchema> }).properties[
        name
      ] as TSchema;
      parameters.push({
        name,
        in: where,
        required: where === 'path' || (json.required ?? []).includes(name),
        schema: registry.use(property),
      });
    }
  };
  fromObject(route.params, 'path');
  fromObject(route.querystring, 'query');
  if (route.tenant) {
    parameters.push({
      name: TENANT_HEADER,
      in: 'header',
      required: false,
      description: 'Tenant whose enrollments and webhooks the call reads and changes.',
      schema: { type: 'string' },
    });
  }
  return parameters;
}

function operationOf(route: RouteSpec, registry: ComponentRegistry): JsonObject {
  const responses: JsonObject = {
    '200': {
      description: 'Successful Response',
      ...(route.auth ? { headers: RATE_LIMIT_HEADERS } : {}),
      content: { 'application/json': { schema: registry.use(route.response) } },
    },
  };
  for (const status of route.errors) {
    responses[String(status)] = {
      description: ERROR_DESCRIPTIONS[status],
      ...(status === 429
        ? {
            headers: {
              ...RATE_LIMIT_HEADERS,
              'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } },
            },
          }
        : {}),
      content: { 'application/json': { schema: registry.use(ERROR_RESPONSE_SCHEMAS[status]) } },
    };
  }
  const operation: JsonObject = {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    parameters: parametersOf(route, registry),
    responses,
  };
  if (route.beyondSpec) {
    operation.description =
      `A provider operation beyond spec ${SERVICE_VERSION}: the spec does not have it; shapes, limits, ` +
      `errors and billing follow the provider's published API ${route.beyondSpec.providerVersion} and ` +
      'the rules the spec gives for bulk enrichment of businesses (section 4.3).';
    operation[BEYOND_SPEC_EXTENSION] = {
      spec_version: SERVICE_VERSION,
      provider_version: route.beyondSpec.providerVersion,
    };
  }
  if (route.body) {
    operation.requestBody = {
      required: true,
      content: { 'application/json': { schema: registry.use(route.body) } },
    };
  }
  if (route.auth) operation.security = [{ [SECURITY_SCHEME_NAME]: [] }];
  return operation;
}

/**
 * The OpenAPI 3.1 document of the service (version 0.2.286), generated from `ALL_ROUTES`; operations
 * beyond the spec carry `x-beyond-spec`.
 */
export function buildOpenApiDocument(options: OpenApiOptions = {}): OpenApiDocument {
  const registry = new ComponentRegistry();
  const paths: OpenApiDocument['paths'] = {};
  for (const route of ALL_ROUTES) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operationOf(route, registry);
  }
  const tags = [...new Set(ALL_ROUTES.map((route) => route.tag))].map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Business and Prospect Data Service',
      version: SERVICE_VERSION,
      description:
        'Matching, search, enrichment and event enrollment for businesses and prospects. Operations with ' +
        `a security requirement take an API key in the \`${API_KEY_HEADER}\` header. Operations marked ` +
        `\`${BEYOND_SPEC_EXTENSION}\` are provider operations beyond spec ${SERVICE_VERSION}.`,
    },
    servers: [{ url: options.serverUrl ?? 'http://127.0.0.1:8080' }],
    tags,
    paths,
    components: {
      schemas: registry.schemas,
      securitySchemes: { [SECURITY_SCHEME_NAME]: { type: 'apiKey', in: 'header', name: API_KEY_HEADER } },
    },
  };
}
