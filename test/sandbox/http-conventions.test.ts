// HTTP conventions of the service: a known path asked with another method is a 405 naming the methods it
// serves; a path answers alike with and without its trailing slash; path bounds are the ones the
// sandbox's own OpenAPI document declares.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_ROUTES, ROUTES, SERVICE_VERSION, openApiPath } from '../../contract/index.js';
import { call, detailOf, okBody, startTestSandbox, type TestSandbox } from './support.js';

let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox({ events: {} });
});
afterAll(() => sandbox.close());

const METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'] as const;

/** A concrete path of a route (path parameters filled in). */
function concrete(path: string): string {
  return path.replace(':response_bytes', '10').replace(':partner_id', 'partner-1');
}

describe('wrong method on a known path', () => {
  it('answers 405 with Allow listing the methods the path serves, for every route', async () => {
    const served = new Map<string, Set<string>>();
    for (const route of ALL_ROUTES) {
      const methods = served.get(route.path) ?? new Set<string>();
      methods.add(route.method);
      if (route.method === 'GET') methods.add('HEAD');
      served.set(route.path, methods);
    }
    for (const [path, methods] of served) {
      for (const method of METHODS.filter((m) => !methods.has(m))) {
        const response = await call(sandbox.app, method, concrete(path), {});
        expect(response.statusCode, `${method} ${path}`).toBe(405);
        expect(response.headers.allow, `${method} ${path}`).toBe([...methods].sort().join(', '));
        expect(response.json()).toEqual({ detail: 'Method Not Allowed' });
      }
    }
  });

  it('still answers 404 for an unknown path', async () => {
    const response = await call(sandbox.app, 'GET', '/v1/no-such-thing');
    expect(response.statusCode).toBe(404);
    expect(response.headers.allow).toBeUndefined();
  });
});

describe('trailing slashes', () => {
  it('/version and /version/ answer alike', async () => {
    for (const url of ['/version', '/version/']) {
      expect(okBody(ROUTES.version, await call(sandbox.app, 'GET', url, undefined, {}))).toBe(
        SERVICE_VERSION,
      );
    }
  });

  it('/v1/businesses/ is /v1/businesses', async () => {
    const body = { mode: 'full', size: 1, page_size: 1 };
    const response = await call(sandbox.app, 'POST', '/v1/businesses/', body);
    expect(okBody<{ data: unknown[] }>(ROUTES.fetchBusinesses, response).data).toHaveLength(1);
  });
});

describe('numeric path bounds', () => {
  it('are the ones /openapi.json declares for the payload healthcheck', async () => {
    const document = (await call(sandbox.app, 'GET', '/openapi.json', undefined, {})).json<{
      paths: Record<
        string,
        Record<string, { parameters: { name: string; schema: { minimum: number; maximum: number } }[] }>
      >;
    }>();
    const path = openApiPath(ROUTES.healthcheckPayload.path);
    const parameter = document.paths[path]?.get?.parameters.find((p) => p.name === 'response_bytes');
    const { minimum, maximum } = parameter?.schema ?? { minimum: NaN, maximum: NaN };
    expect(minimum).toBe(2);
    for (const bytes of [minimum, maximum]) {
      const response = await call(sandbox.app, 'GET', `/healthcheck/http_payload/${bytes}`);
      expect(response.statusCode, String(bytes)).toBe(200);
      expect(response.rawPayload.length).toBe(bytes);
    }
    for (const bytes of [minimum - 1, maximum + 1]) {
      const response = await call(sandbox.app, 'GET', `/healthcheck/http_payload/${bytes}`);
      expect(
        detailOf(response).map((d) => d.loc),
        String(bytes),
      ).toEqual([['path', 'response_bytes']]);
    }
  });
});
