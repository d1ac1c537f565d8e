// The rate limit (sliding 60 s window per key, headers on every response, 429 with Retry-After) and the
// injected faults (latency, 5xx, 429 bursts, hanging, truncated and malformed bodies), including the
// admin route that sets them. Faults that act on the connection are checked over real HTTP.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULK_ENRICH_ROUTES, ROUTES } from '../../contract/index.js';
import type { FaultRule } from '../../sandbox/app.js';
import type { TrafficView } from '../../sandbox/http/traffic.js';
import { ADMIN_KEY, API_KEY, OTHER_KEY, call, startTestSandbox, type TestSandbox } from './support.js';

describe('rate limit', () => {
  let sandbox: TestSandbox;
  let now = Date.parse('2026-03-01T12:00:00Z');

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimitPerMinute: 5, clock: () => now });
  });
  afterAll(() => sandbox.close());

  it('counts requests per key in a sliding 60 s window and answers 429 with Retry-After past it', async () => {
    const start = now;
    const remaining: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      now = start + i * 10_000;
      const response = await call(sandbox.app, 'GET', '/healthcheck/http_payload/2');
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBe('5');
      expect(response.headers['x-ratelimit-reset']).toBe(String(Math.ceil((start + 60_000) / 1000)));
      remaining.push(String(response.headers['x-ratelimit-remaining']));
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    now = start + 45_000;
    const limited = await call(sandbox.app, 'POST', BULK_ENRICH_ROUTES.firmographics.path, {
      business_ids: ['0'.repeat(32)],
    });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('15');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(limited.json()).toEqual({
      error: 'rate_limit_exceeded',
      message: 'API rate limit exceeded. Please retry after 15 seconds.',
      retry_after: 15,
    });

    // Another key has its own window.
    const other = await call(sandbox.app, 'GET', '/healthcheck/http_payload/2', undefined, {
      api_key: OTHER_KEY,
    });
    expect(other.statusCode).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('4');

    // The first request leaves the window after 60 s, freeing one slot.
    now = start + 60_001;
    expect((await call(sandbox.app, 'GET', '/healthcheck/http_payload/2')).statusCode).toBe(200);
    expect((await call(sandbox.app, 'GET', '/healthcheck/http_payload/2')).statusCode).toBe(429);
  });

  it('puts the headers on unauthenticated answers too', async () => {
    const response = await call(sandbox.app, 'GET', '/version/', undefined, {});
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-ratelimit-limit']).toBe('5');
  });
});

describe('faults', () => {
  let sandbox: TestSandbox;
  let baseUrl: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox({
      faults: { rules: [{ match: 'healthcheck', kind: 'latency', latencyMs: 150, count: 1 }] },
    });
    await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
    const address = sandbox.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    baseUrl = `http://127.0.0.1:${address.port}`;
  });
  afterAll(() => sandbox.close());

  async function setFaults(rules: FaultRule[], seed?: number): Promise<void> {
    const response = await call(
      sandbox.app,
      'PUT',
      '/_admin/faults',
      { rules, ...(seed !== undefined ? { seed } : {}) },
      { 'x-admin-key': ADMIN_KEY },
    );
    expect(response.statusCode, response.body).toBe(200);
  }

  it('applies faults set at start', async () => {
    const started = performance.now();
    expect((await call(sandbox.app, 'GET', '/healthcheck/http', undefined, {})).statusCode).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    const after = performance.now();
    await call(sandbox.app, 'GET', '/healthcheck/http', undefined, {});
    expect(performance.now() - after).toBeLessThan(140);
  });

  it('needs the admin key to change faults, and validates the rules', async () => {
    expect((await call(sandbox.app, 'PUT', '/_admin/faults', { rules: [] }, {})).statusCode).toBe(403);
    expect(
      (await call(sandbox.app, 'PUT', '/_admin/faults', { rules: [] }, { 'x-admin-key': API_KEY }))
        .statusCode,
    ).toBe(403);
    const bad = await call(
      sandbox.app,
      'PUT',
      '/_admin/faults',
      { rules: [{ match: '*', kind: 'explode' }] },
      { 'x-admin-key': ADMIN_KEY },
    );
    expect(bad.statusCode).toBe(422);
  });

  it('answers 5xx for the next N matching requests, by operationId pattern', async () => {
    await setFaults([{ match: 'bulkEnrich*', kind: 'error', status: 500, count: 2 }]);
    const body = { business_ids: [sandbox.app.sandbox.store.businessIds[0]] };
    const statuses = [];
    for (let i = 0; i < 3; i += 1)
      statuses.push(
        (await call(sandbox.app, 'POST', BULK_ENRICH_ROUTES.technographics.path, body)).statusCode,
      );
    expect(statuses).toEqual([500, 500, 200]);
    expect((await call(sandbox.app, 'GET', '/version/', undefined, {})).statusCode).toBe(200);
    const described = await call(sandbox.app, 'GET', '/_admin/faults', undefined, {
      'x-admin-key': ADMIN_KEY,
    });
    expect(described.json()).toMatchObject({ rules: [{ fired: 2, remaining: 0 }] });
  });

  it('draws a rate from a seeded stream: the same seed gives the same sequence', async () => {
    const sequence = async () => {
      await setFaults([{ match: '/version/', kind: 'error', rate: 0.5 }], 7);
      const out: number[] = [];
      for (let i = 0; i < 20; i += 1)
        out.push((await call(sandbox.app, 'GET', '/version/', undefined, {})).statusCode);
      return out;
    };
    const first = await sequence();
    expect(first).toContain(503);
    expect(first).toContain(200);
    expect(await sequence()).toEqual(first);
  });

  it('sends 429 bursts with Retry-After', async () => {
    await setFaults([{ match: 'fetchProspects', kind: 'rate_limit', count: 2, retryAfterSeconds: 3 }]);
    const body = { mode: 'full', size: 1, page_size: 1 };
    const first = await call(sandbox.app, 'POST', ROUTES.fetchProspects.path, body);
    expect(first.statusCode).toBe(429);
    expect(first.headers['retry-after']).toBe('3');
    expect((await call(sandbox.app, 'POST', ROUTES.fetchProspects.path, body)).statusCode).toBe(429);
    expect((await call(sandbox.app, 'POST', ROUTES.fetchProspects.path, body)).statusCode).toBe(200);
  });

  it('sends a malformed body with status 200', async () => {
    await setFaults([{ match: 'version', kind: 'malformed', count: 1 }]);
    const response = await request(`${baseUrl}/version/`);
    expect(response.statusCode).toBe(200);
    const text = await response.body.text();
    expect(() => JSON.parse(text) as unknown).toThrow();
  });

  it('cuts a body short and drops the connection', async () => {
    await setFaults([{ match: '/healthcheck/http_payload/*', kind: 'truncate', count: 1 }]);
    const response = await request(`${baseUrl}/healthcheck/http_payload/100000`, {
      headers: { api_key: API_KEY },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-length']).toBe('100000');
    await expect(response.body.text()).rejects.toThrow();
  });

  it('never answers a hanging request', async () => {
    await setFaults([{ match: 'healthcheck', kind: 'hang', count: 1 }]);
    const controller = new AbortController();
    const pending = request(`${baseUrl}/healthcheck/http`, { signal: controller.signal });
    const outcome = await Promise.race([
      pending.then(() => 'answered'),
      new Promise((resolve) => setTimeout(resolve, 400, 'waiting')),
    ]);
    expect(outcome).toBe('waiting');
    controller.abort();
    await expect(pending).rejects.toThrow();
    const next = await request(`${baseUrl}/healthcheck/http`);
    expect(next.statusCode).toBe(200);
    await next.body.dump();
  });
});

describe('traffic journal', () => {
  let sandbox: TestSandbox;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimitPerMinute: 3 });
  });
  afterAll(() => sandbox.close());

  it('counts what the sandbox answered per route and status, leaves out the admin routes, and clears', async () => {
    const admin = { 'x-admin-key': ADMIN_KEY };
    expect((await call(sandbox.app, 'GET', '/_admin/traffic', undefined, {})).statusCode).toBe(403);
    await call(sandbox.app, 'DELETE', '/_admin/traffic', undefined, admin);
    const bulk = BULK_ENRICH_ROUTES.firmographics.path;
    expect((await call(sandbox.app, 'POST', bulk, { business_ids: ['0'.repeat(32)] })).statusCode).toBe(200);
    expect((await call(sandbox.app, 'POST', bulk, { business_ids: 'not a list' })).statusCode).toBe(422);
    expect((await call(sandbox.app, 'POST', bulk, { business_ids: ['0'.repeat(32)] }, {})).statusCode).toBe(
      401,
    );
    expect((await call(sandbox.app, 'GET', '/healthcheck/http_payload/2')).statusCode).toBe(200);
    // The fourth request of the key in the minute is over the limit of 3.
    expect((await call(sandbox.app, 'GET', '/healthcheck/http_payload/3')).statusCode).toBe(429);
    await call(sandbox.app, 'GET', '/_admin/status', undefined, admin);

    const view = (await call(sandbox.app, 'GET', '/_admin/traffic', undefined, admin)).json<TrafficView>();
    expect(view.calls).toBe(5);
    expect(
      view.routes.map(({ method, route, calls, statuses }) => ({ method, route, calls, statuses })),
    ).toEqual([
      { method: 'POST', route: bulk, calls: 3, statuses: { '200': 1, '401': 1, '422': 1 } },
      {
        method: 'GET',
        route: '/healthcheck/http_payload/:response_bytes',
        calls: 2,
        statuses: { '200': 1, '429': 1 },
      },
    ]);
    const [first] = view.routes;
    expect(first!.median_ms).toBeGreaterThan(0);
    expect(first!.p95_ms).toBeGreaterThanOrEqual(first!.median_ms);
    expect(first!.max_ms).toBeGreaterThanOrEqual(first!.p95_ms);

    const cleared = (
      await call(sandbox.app, 'DELETE', '/_admin/traffic', undefined, admin)
    ).json<TrafficView>();
    expect(cleared).toMatchObject({ calls: 0, routes: [] });
    expect(Date.parse(cleared.since)).toBeGreaterThanOrEqual(Date.parse(view.since));
  });
});
