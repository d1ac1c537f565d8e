// The client against the real sandbox over HTTP on a free port: every operation, the service's own
// 401/404/422/429, and every fault the sandbox can inject.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthError,
  DataServiceClient,
  DataServiceError,
  InsufficientCreditsError,
  MalformedResponseError,
  NotFoundError,
  RateLimitedError,
  RequestTimeoutError,
  ServerError,
  ValidationError,
} from '../../client/index.js';
import {
  BULK_DATASETS,
  CURSOR_START,
  PROSPECT_DATASETS,
  checkRequest,
  BULK_ENRICH_ROUTES,
  type ProspectDataset,
} from '../../contract/index.js';
import { buildSandbox } from '../../sandbox/app.js';
import type { ProspectEnrichmentCalls } from '../../activities/client-port.js';

/** A fault rule as the sandbox's admin route takes it (`PUT /_admin/faults`). */
interface InjectedFault {
  match: string;
  kind: 'latency' | 'error' | 'rate_limit' | 'hang' | 'truncate' | 'malformed' | 'no_credits';
  count?: number;
  status?: number;
  retryAfterSeconds?: number;
  latencyMs?: number;
}

const API_KEY = 'client-test-key-0123456789';
const OTHER_KEY = 'client-test-other-key-9876543210';
const ADMIN_KEY = 'client-test-admin';

let dataDir: string;
let app: FastifyInstance;
let baseUrl: string;
let client: DataServiceClient;
let businessIds: string[];

async function listen(sandbox: FastifyInstance): Promise<string> {
  await sandbox.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${address.port}`;
}

async function setFaults(rules: InjectedFault[]): Promise<void> {
  const response = await request(`${baseUrl}/_admin/faults`, {
    method: 'PUT',
    headers: { 'x-admin-key': ADMIN_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ rules }),
  });
  await response.body.dump();
  expect(response.statusCode).toBe(200);
}

async function failure(call: Promise<unknown>): Promise<DataServiceError> {
  const error = await call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DataServiceError);
  expect((error as Error).message).not.toContain(API_KEY);
  return error as DataServiceError;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'enrichflow-client-'));
  app = await buildSandbox({
    dataDir,
    seed: 11,
    businesses: 300,
    prospects: 1500,
    apiKeys: [
      { name: 'client-test', key: API_KEY },
      { name: 'other', key: OTHER_KEY },
    ],
    adminKey: ADMIN_KEY,
    rateLimitPerMinute: 100_000,
  });
  baseUrl = await listen(app);
  client = new DataServiceClient({ baseUrl, apiKey: API_KEY, headersTimeoutMs: 1_000, bodyTimeoutMs: 1_000 });
  const page = await client.fetchBusinesses({ mode: 'full', size: 50, page_size: 50 });
  businessIds = page.body.data.map((b) => b.business_id);
});

afterAll(async () => {
  await client?.close();
  await app?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

afterEach(async () => {
  await setFaults([]);
});

describe('valid calls, checked against the contract', () => {
  it('health, payload and version', async () => {
    expect((await client.healthcheck()).body).toEqual(expect.any(String));
    const payload = await client.healthcheckPayload(5_000);
    expect(Buffer.byteLength(JSON.stringify(payload.body))).toBe(5_000);
    expect((await client.version()).body).toBe('0.2.286');
  });

  it('match keeps order, with null for the unmatched, and reports the rate limit and correlation id', async () => {
    const known = await client.bulkEnrich('firmographics', { business_ids: businessIds.slice(0, 1) });
    const domain = known.body.data[0]?.data.website?.replace(/^https?:\/\/(www\.)?/, '');
    const result = await client.matchBusinesses({
      businesses_to_match: [
        { name: 'No Such Company Anywhere', domain: 'no-such-company.invalid' },
        { domain },
      ],
    });
    expect(result.body.matched_businesses).toHaveLength(2);
    expect(result.body.matched_businesses[0]?.business_id).toBeNull();
    expect(result.body.matched_businesses[1]?.business_id).toBe(businessIds[0]);
    expect(result.correlationId).toBe(result.body.response_context.correlation_id);
    expect(result.rateLimit).toMatchObject({ limit: 100_000 });
    expect(result.rateLimit?.remaining).toBeLessThan(100_000);
    expect(result.rateLimit?.resetAt).toBeGreaterThan(Date.now() / 1000 - 1);
  });

  it('all twelve bulk_enrich datasets return records only for the ids asked', async () => {
    for (const dataset of BULK_DATASETS) {
      const result = await client.bulkEnrich(dataset, { business_ids: businessIds });
      expect(result.body.total_results, dataset).toBe(result.body.data.length);
      for (const row of result.body.data) expect(businessIds).toContain(row.business_id);
    }
  });

  it('fetch businesses and prospects in offset and cursor modes, stats and autocomplete', async () => {
    const offset = await client.fetchProspects({ mode: 'full', size: 30, page_size: 10, page: 2 });
    expect(offset.body.page).toBe(2);
    expect(offset.body.data.length).toBeLessThanOrEqual(10);
    const cursor = await client.fetchProspects({
      mode: 'full',
      size: 30,
      page_size: 10,
      next_cursor: CURSOR_START,
    });
    expect(typeof cursor.body.page).toBe('object');
    const stats = await client.businessStats({ filters: {} });
    expect(stats.body.total_results).toBe(300);
    const values = await client.autocomplete({ field: 'company_size', query: '51' });
    expect(values.body.map((item) => item.value)).toContain('51-200');
  });

  it('hierarchy, posts, prospect match and events answer in contract shape', async () => {
    await client.enrichHierarchy({ business_id: businessIds[0] as string });
    const prospect = (await client.fetchProspects({ mode: 'full', size: 1, page_size: 1 })).body.data[0];
    expect(prospect).toBeDefined();
    await client.enrichProspectPosts({ prospect_id: prospect?.prospect_id as string });
    const match = await client.matchProspects({
      prospects_to_match: [
        { full_name: prospect?.full_name ?? null, company_name: prospect?.company_name ?? null },
      ],
    });
    expect(match.body.matched_prospects[0]?.prospect_id).toBe(prospect?.prospect_id);
    const events = await client.fetchEvents({
      event_types: ['new_office', 'new_product'],
      business_ids: businessIds.slice(0, 40),
    });
    expect(events.body.total_results).toBe(events.body.data.length);
  });

  it('enrollments and webhooks are scoped by tenant', async () => {
    const created = await client.createEnrollments(
      {
        enrollment_key: 'client-test',
        event_types: ['new_funding_round'],
        business_ids: businessIds.slice(0, 3),
      },
      { tenant: 'acme' },
    );
    const mine = await client.listEnrollments({ tenant: 'acme' });
    expect(mine.body.enrollments.map((e) => e.enrollment_id)).toContain(created.body.enrollment_id);
    const theirs = await client.listEnrollments({ tenant: 'globex' });
    expect(theirs.body.enrollments.map((e) => e.enrollment_id)).not.toContain(created.body.enrollment_id);
    await failure(
      client.deleteEnrollments({ enrollment_id: created.body.enrollment_id }, { tenant: 'globex' }),
    );
    await client.deleteEnrollments({ enrollment_id: created.body.enrollment_id }, { tenant: 'acme' });

    const registered = await client.registerWebhook(
      { partner_id: 'client-test', webhook_url: 'http://127.0.0.1:9/hook' },
      { tenant: 'acme' },
    );
    expect(registered.body.webhook_secret.length).toBeGreaterThan(10);
    expect((await client.getWebhook('client-test', { tenant: 'acme' })).body.webhook_url).toBe(
      'http://127.0.0.1:9/hook',
    );
    expect(await failure(client.getWebhook('client-test', { tenant: 'globex' }))).toBeInstanceOf(
      NotFoundError,
    );
    await client.deleteWebhook('client-test', { tenant: 'acme' });
    expect(await failure(client.getWebhook('client-test', { tenant: 'acme' }))).toBeInstanceOf(NotFoundError);
  });
});

describe('prospect bulk enrichment (provider operations beyond the spec)', () => {
  async function prospectIds(count: number): Promise<string[]> {
    const page = await client.fetchProspects({ mode: 'full', size: count, page_size: count });
    return page.body.data.map((p) => p.prospect_id);
  }

  it('all three datasets answer in contract shape, profiles as prospect fetch serves them', async () => {
    const page = (await client.fetchProspects({ mode: 'full', size: 50, page_size: 50 })).body.data;
    const ids = page.map((p) => p.prospect_id);
    const profiles = await client.bulkEnrichProspects('profiles', { prospect_ids: ids });
    expect(profiles.body.data.map((row) => row.data)).toEqual(page);
    expect(profiles.rateLimit).toMatchObject({ limit: 100_000 });
    for (const dataset of PROSPECT_DATASETS) {
      const result = await client.bulkEnrichProspects(dataset, { prospect_ids: ids });
      expect(result.body.total_results, dataset).toBe(result.body.data.length);
      expect(result.body.data.length, dataset).toBeGreaterThan(0);
      for (const row of result.body.data) expect(ids).toContain(row.prospect_id);
    }
    const contacts = await client.bulkEnrichProspects('contacts_information', { prospect_ids: ids });
    expect(contacts.body.data.length).toBeLessThan(50);
  });

  it('refuses what the contract refuses without sending it', async () => {
    const tooMany = Array.from({ length: 51 }, (_, i) => i.toString(16).padStart(40, '0'));
    const error = await failure(client.bulkEnrichProspects('profiles', { prospect_ids: tooMany }));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ sent: false });
    const unknown = await failure(
      client.bulkEnrichProspects('resumes' as ProspectDataset, { prospect_ids: tooMany.slice(0, 1) }),
    );
    expect(unknown).toMatchObject({ name: 'ValidationError', sent: false });
  });

  it('take the attempt signal and a call deadline, as the business calls do', async () => {
    const ids = await prospectIds(5);
    await setFaults([
      { match: 'bulkEnrichProspect*', kind: 'latency', latencyMs: 400 },
      { match: 'matchProspects', kind: 'latency', latencyMs: 400 },
    ]);
    // Through the port the activities will hold, which the client satisfies.
    const port: ProspectEnrichmentCalls = client;
    expect(
      await failure(port.bulkEnrichProspects('profiles', { prospect_ids: ids }, { timeoutMs: 150 })),
    ).toMatchObject({ name: 'RequestTimeoutError', phase: 'aborted' });
    const controller = new AbortController();
    const pending = port.matchProspects(
      { prospects_to_match: [{ email: 'nobody@example.org' }] },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 50);
    expect(await failure(pending)).toMatchObject({ name: 'RequestTimeoutError', phase: 'aborted' });
    const within = await port.bulkEnrichProspects(
      'contacts_information',
      { prospect_ids: ids },
      { timeoutMs: 5_000, signal: new AbortController().signal },
    );
    expect(within.body.data.every((row) => ids.includes(row.prospect_id))).toBe(true);
  });

  it('a 403 for credits → InsufficientCreditsError', async () => {
    await setFaults([{ match: 'bulkEnrichProspectNetworkPosts', kind: 'no_credits', count: 1 }]);
    const ids = await prospectIds(3);
    const error = await failure(client.bulkEnrichProspects('network_posts', { prospect_ids: ids }));
    expect(error).toBeInstanceOf(InsufficientCreditsError);
    expect((await client.bulkEnrichProspects('network_posts', { prospect_ids: ids })).status).toBe(200);
  });
});

describe("the service's own refusals", () => {
  it('401 for an unknown key', async () => {
    const stranger = new DataServiceClient({ baseUrl, apiKey: 'not-a-known-key' });
    try {
      const error = await failure(
        stranger.bulkEnrich('firmographics', { business_ids: businessIds.slice(0, 1) }),
      );
      expect(error).toBeInstanceOf(AuthError);
      expect(error).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
      expect(error.correlationId).toEqual(expect.any(String));
      expect(error.message).not.toContain('not-a-known-key');
    } finally {
      await stranger.close();
    }
  });

  it("a 422 from the service carries the same detail the client's fail-fast check gives", async () => {
    const unchecked = new DataServiceClient({ baseUrl, apiKey: API_KEY, validateRequests: false });
    try {
      const body = { business_ids: [...businessIds, ...businessIds].slice(0, 51) };
      const error = await failure(unchecked.bulkEnrich('firmographics', body));
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ status: 422, sent: true });
      const local = checkRequest(BULK_ENRICH_ROUTES.firmographics, { body });
      expect(local.ok).toBe(false);
      expect((error as ValidationError).detail).toEqual(local.ok ? [] : local.detail);

      const prospects = await failure(unchecked.fetchProspects({ mode: 'full', size: 10, page_size: 101 }));
      expect(prospects).toMatchObject({
        name: 'ValidationError',
        sent: true,
        detail: [{ loc: ['body', 'page_size'] }],
      });
    } finally {
      await unchecked.close();
    }
  });

  it('429 past the rate limit, with retryAfterMs', async () => {
    const limitedDir = await mkdtemp(join(tmpdir(), 'enrichflow-client-limited-'));
    const limited = await buildSandbox({
      dataDir: limitedDir,
      seed: 3,
      businesses: 40,
      prospects: 100,
      apiKeys: [{ name: 'client-test', key: API_KEY }],
      rateLimitPerMinute: 3,
      events: false,
    });
    const limitedClient = new DataServiceClient({ baseUrl: await listen(limited), apiKey: API_KEY });
    try {
      const remaining: (number | undefined)[] = [];
      for (let i = 0; i < 3; i += 1)
        remaining.push((await limitedClient.healthcheckPayload(10)).rateLimit?.remaining);
      expect(remaining).toEqual([2, 1, 0]);
      const error = await failure(limitedClient.healthcheckPayload(10));
      expect(error).toBeInstanceOf(RateLimitedError);
      expect(error).toMatchObject({ status: 429, retryable: true });
      expect((error as RateLimitedError).retryAfterMs).toBeGreaterThan(0);
      expect((error as RateLimitedError).retryAfterMs).toBeLessThanOrEqual(60_000);
    } finally {
      await limitedClient.close();
      await limited.close();
      await rm(limitedDir, { recursive: true, force: true });
    }
  });
});

describe('injected faults', () => {
  const enrich = () => client.bulkEnrich('firmographics', { business_ids: businessIds.slice(0, 5) });

  it('5xx → ServerError once, and the next call succeeds (no retry inside the client)', async () => {
    await setFaults([{ match: 'bulkEnrichFirmographics', kind: 'error', status: 502, count: 1 }]);
    const error = await failure(enrich());
    expect(error).toBeInstanceOf(ServerError);
    expect(error.status).toBe(502);
    expect((await enrich()).status).toBe(200);
  });

  it('a 429 burst → RateLimitedError with Retry-After', async () => {
    await setFaults([{ match: 'bulkEnrich*', kind: 'rate_limit', retryAfterSeconds: 7, count: 2 }]);
    for (let i = 0; i < 2; i += 1) {
      const error = await failure(enrich());
      expect(error).toBeInstanceOf(RateLimitedError);
      expect((error as RateLimitedError).retryAfterMs).toBe(7_000);
    }
    expect((await enrich()).status).toBe(200);
  });

  it('a hanging request → RequestTimeoutError (headers)', async () => {
    await setFaults([{ match: 'bulkEnrichFirmographics', kind: 'hang', count: 1 }]);
    const error = await failure(enrich());
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(error).toMatchObject({ phase: 'headers' });
    expect((await enrich()).status).toBe(200);
  });

  it('latency beyond the call deadline → RequestTimeoutError (aborted); within it → success', async () => {
    await setFaults([{ match: '/v1/businesses/firmographics/bulk_enrich', kind: 'latency', latencyMs: 400 }]);
    expect(
      await failure(
        client.bulkEnrich('firmographics', { business_ids: businessIds.slice(0, 1) }, { timeoutMs: 150 }),
      ),
    ).toMatchObject({
      name: 'RequestTimeoutError',
      phase: 'aborted',
    });
    const started = performance.now();
    expect((await enrich()).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
  });

  it('a truncated body → MalformedResponseError (truncated)', async () => {
    await setFaults([{ match: 'fetchProspects', kind: 'truncate', count: 1 }]);
    const error = await failure(client.fetchProspects({ mode: 'full', size: 20, page_size: 20 }));
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(error).toMatchObject({ reason: 'truncated', status: 200 });
  });

  it('a malformed body → MalformedResponseError (invalid-json)', async () => {
    await setFaults([{ match: 'bulkEnrichFirmographics', kind: 'malformed', count: 1 }]);
    const error = await failure(enrich());
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(error).toMatchObject({ reason: 'invalid-json', status: 200 });
    expect((await enrich()).status).toBe(200);
  });
});
