// Every example request of the provider's published document, sent to the sandbox: each operation's
// request built from the examples the document gives its fields (the fields it gives none for filled
// with ids of the generated world), each filter of the fetch and statistics requests with its own
// example, and each autocomplete field the document enumerates. The service answers them all with 2xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_ROUTES, openApiPath, type RouteSpec } from '../../contract/index.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/support.js';
import { send, worldIds, type WorldIds } from './operations.js';
import {
  exampleOf,
  propertiesOf,
  providerDocument,
  requestSchema,
  type Json,
  type JsonObject,
} from './provider-document.js';

let sandbox: TestSandbox;
let ids: WorldIds;
beforeAll(async () => {
  sandbox = await startTestSandbox({ events: {}, clock: () => Date.parse('2026-01-01T12:00:00Z') });
  ids = await worldIds(sandbox.app);
});
afterAll(() => sandbox.close());

/** The component a `$ref` schema names. */
function component(schema: JsonObject): JsonObject | undefined {
  const ref = schema.$ref;
  return typeof ref === 'string'
    ? providerDocument().components.schemas[ref.split('/').pop() ?? '']
    : undefined;
}

/** Values for required fields the document gives no example for. */
function fill(enrollmentId: string): Record<string, Json> {
  return {
    businesses_to_match: [{ name: 'Example Corp', domain: 'example.com' }],
    business_ids: ids.businesses.slice(0, 20),
    business_id: ids.withHierarchy,
    prospect_id: ids.withPosts,
    prospect_ids: [ids.withPosts, ids.withContacts, ...ids.prospects],
    event_types: ['new_funding_round'],
    enrollment_key: 'provider-example',
    enrollment_id: enrollmentId,
    partner_id: 'provider-example',
    webhook_url: 'https://receiver.example/hook',
  };
}

/** The document's example of a request body, its required fields completed. */
function exampleBody(path: string, method: string, enrollmentId: string): JsonObject | undefined {
  const schema = requestSchema(path, method);
  if (!schema) return undefined;
  const body = (exampleOf(schema) ?? {}) as JsonObject;
  const resolved = component(schema);
  const values = fill(enrollmentId);
  for (const name of (resolved?.required ?? []) as string[]) {
    if (body[name] === undefined && values[name] !== undefined) body[name] = values[name];
  }
  return body;
}

interface Example {
  route: RouteSpec;
  name: string;
  url: string;
  body?: JsonObject;
}

/** The routes of the sandbox the document declares, with the operation's path in the document. */
function served(): { route: RouteSpec; path: string; method: string }[] {
  return ALL_ROUTES.map((route) => ({
    route,
    path: openApiPath(route.path),
    method: route.method.toLowerCase(),
  })).filter(({ path, method }) => providerDocument().paths[path]?.[method] !== undefined);
}

/** One example per filter the document gives an example for, on a fetch or statistics body. */
function filterExamples(route: RouteSpec, path: string, base: JsonObject): Example[] {
  const filtersSchema = propertiesOf(requestSchema(path, 'post') as JsonObject).filters;
  if (!filtersSchema) return [];
  const all: JsonObject = {};
  const out: Example[] = [];
  for (const [name, schema] of Object.entries(propertiesOf(filtersSchema))) {
    const example = exampleOf(schema);
    if (example === undefined) continue;
    all[name] = example;
    out.push({ route, name: `filter ${name}`, url: path, body: { ...base, filters: { [name]: example } } });
  }
  out.push({ route, name: 'every filter example', url: path, body: { ...base, filters: all } });
  return out;
}

function examples(enrollmentId: string): Example[] {
  const out: Example[] = [];
  for (const { route, path, method } of served()) {
    const url = path.replace('{response_bytes}', '64').replace('{partner_id}', 'provider-example');
    const body = exampleBody(path, method, enrollmentId);
    if (route.operationId === 'autocomplete') {
      const parameter = providerDocument().paths[path]?.get?.parameters?.find((p) => p.name === 'field');
      const fields = propertiesOf({ properties: { field: parameter?.schema ?? {} } }).field;
      const resolved = fields ? component(fields) : undefined;
      for (const field of (resolved?.enum ?? []) as string[]) {
        out.push({ route, name: `field ${field}`, url: `${url}?field=${field}&query=a` });
      }
      continue;
    }
    out.push({ route, name: 'example', url, ...(body ? { body } : {}) });
    if (body) out.push(...filterExamples(route, path, body));
  }
  return out;
}

describe("the provider document's example requests", () => {
  it('are all answered with 2xx', async () => {
    // Enrollment update and delete need an enrollment of the caller; the webhook reads need one too.
    const created = await send(sandbox.app, {
      route: ALL_ROUTES[0] as RouteSpec,
      name: 'setup',
      method: 'POST',
      url: '/v1/businesses/events/enrollments',
      body: {
        enrollment_key: 'provider-example',
        event_types: ['new_funding_round'],
        business_ids: ids.businesses.slice(0, 2),
      },
      status: 200,
    });
    const enrollmentId = created.json<{ enrollment_id: string }>().enrollment_id;
    const all = examples(enrollmentId);
    // Reads before the deletes that would make them miss.
    const order = (e: Example) => (e.route.method === 'DELETE' ? 1 : 0);
    const answers: { example: string; status: number; body: string }[] = [];
    for (const example of [...all].sort((a, b) => order(a) - order(b))) {
      if (example.route.operationId === 'getWebhook' || example.route.operationId === 'deleteWebhook') {
        await send(sandbox.app, {
          route: example.route,
          name: 'setup',
          method: 'POST',
          url: '/v1/webhooks',
          body: { partner_id: 'provider-example', webhook_url: 'https://receiver.example/hook' },
          status: 200,
        });
      }
      const response = await send(sandbox.app, {
        route: example.route,
        name: example.name,
        method: example.route.method,
        url: example.url,
        ...(example.body ? { body: example.body } : {}),
        status: 200,
      });
      answers.push({
        example: `${example.route.operationId} ${example.name}`,
        status: response.statusCode,
        body: response.body.slice(0, 300),
      });
    }
    expect(answers.filter((a) => a.status < 200 || a.status > 299)).toEqual([]);
    expect(new Set(answers.map((a) => a.example.split(' ')[0])).size).toBe(served().length);
    console.info(`provider examples: ${answers.length} requests over ${served().length} operations, all 2xx`);
  });
});
