import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthError,
  ConnectionError,
  DataServiceClient,
  DataServiceError,
  InsufficientCreditsError,
  MalformedResponseError,
  NotFoundError,
  nonRetryableErrorTypes,
  RateLimitedError,
  RequestRejectedError,
  RequestTimeoutError,
  retryableErrorTypes,
  ServerError,
  ValidationError,
} from '../../client/index.js';
import { sendJson, startCannedServer, type CannedServer } from './canned-server.js';

const API_KEY = 'sk-test-very-secret-key';
const businessId = 'a'.repeat(32);
const context = { correlation_id: 'corr-1', request_status: 'success', time_took_in_seconds: 0.002 };
const matchBody = { businesses_to_match: [{ domain: 'acme.example' }] };
const matchResponse = {
  response_context: context,
  total_results: 1,
  total_matches: 1,
  matched_businesses: [{ input: { domain: 'acme.example' }, business_id: businessId }],
};

let server: CannedServer;
let client: DataServiceClient;

beforeAll(async () => {
  server = await startCannedServer();
  client = new DataServiceClient({
    baseUrl: server.url,
    apiKey: API_KEY,
    headersTimeoutMs: 300,
    bodyTimeoutMs: 300,
  });
});
afterAll(async () => {
  await client.close();
  await server.close();
});
afterEach(() => {
  server.received.length = 0;
});

/** The error a call rejects with; fails the test when the call succeeds. */
async function failure(call: Promise<unknown>): Promise<DataServiceError> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(DataServiceError);
    const e = error as DataServiceError;
    expect(e.message).not.toContain(API_KEY);
    expect(JSON.stringify(e)).not.toContain(API_KEY);
    return e;
  }
  throw new Error('expected the call to fail');
}

describe('successful responses', () => {
  it('return the typed body, status, correlation id and parsed rate-limit headers', async () => {
    server.answer((_req, res) =>
      sendJson(res, 200, matchResponse, {
        'x-ratelimit-limit': '200',
        'x-ratelimit-remaining': '199',
        'x-ratelimit-reset': '1767225600',
      }),
    );
    const result = await client.matchBusinesses(matchBody);
    expect(result.status).toBe(200);
    expect(result.body.matched_businesses[0]?.business_id).toBe(businessId);
    expect(result.correlationId).toBe('corr-1');
    expect(result.rateLimit).toEqual({ limit: 200, remaining: 199, resetAt: 1767225600 });
    const sent = server.received[0];
    expect(sent?.method).toBe('POST');
    expect(sent?.url).toBe('/v1/businesses/match');
    expect(sent?.headers.api_key).toBe(API_KEY);
    expect(sent?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(sent?.body ?? '')).toEqual(matchBody);
  });

  it('prefer the X-Correlation-Id header, and leave rateLimit undefined without headers', async () => {
    server.answer((_req, res) =>
      sendJson(res, 200, [{ query: 'dir', label: 'Director', value: 'director' }], {
        'x-correlation-id': 'hdr-9',
      }),
    );
    const result = await client.autocomplete({ field: 'job_level', query: 'dir & co' });
    expect(result.correlationId).toBe('hdr-9');
    expect(result.rateLimit).toBeUndefined();
    expect(server.received[0]?.url).toBe('/v1/businesses/autocomplete?field=job_level&query=dir+%26+co');
  });

  it('send the tenant header from the client or the call, and no key to the open health check', async () => {
    const tenanted = new DataServiceClient({ baseUrl: `${server.url}/`, apiKey: API_KEY, tenant: 'acme' });
    try {
      server.answer((_req, res) => sendJson(res, 200, { response_context: context, enrollments: [] }));
      await tenanted.listEnrollments();
      await tenanted.listEnrollments({ tenant: 'globex' });
      server.answer((_req, res) => sendJson(res, 200, 'ok'));
      await tenanted.healthcheck();
      expect(server.received.map((r) => r.headers.tenant)).toEqual(['acme', 'globex', undefined]);
      expect(server.received[2]?.headers.api_key).toBeUndefined();
      await tenanted.healthcheckPayload(1000);
      expect(server.received[3]?.url).toBe('/healthcheck/http_payload/1000');
    } finally {
      await tenanted.close();
    }
  });

  it('keep a path prefix of the base URL', async () => {
    const prefixed = new DataServiceClient({ baseUrl: `${server.url}/api/`, apiKey: API_KEY });
    try {
      server.answer((_req, res) => sendJson(res, 200, '0.2.286'));
      expect((await prefixed.version()).body).toBe('0.2.286');
      expect(server.received[0]?.url).toBe('/api/version/');
    } finally {
      await prefixed.close();
    }
  });
});

describe('error statuses', () => {
  it('401 → AuthError', async () => {
    server.answer((_req, res) =>
      sendJson(res, 401, {
        response_context: { ...context, request_status: 'failure' },
        error: { code: 'UNAUTHORIZED', message: 'Invalid or missing API key' },
      }),
    );
    const error = await failure(client.matchBusinesses(matchBody));
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({
      name: 'AuthError',
      code: 'UNAUTHORIZED',
      status: 401,
      correlationId: 'corr-1',
      retryable: false,
    });
  });

  it('403 with the credits body → InsufficientCreditsError, other 403 → AuthError', async () => {
    server.answer((_req, res) =>
      sendJson(res, 403, { details: 'You have insufficient credits', correlation_id: 'c-403' }),
    );
    const credits = await failure(client.matchBusinesses(matchBody));
    expect(credits).toBeInstanceOf(InsufficientCreditsError);
    expect(credits).toMatchObject({ code: 'INSUFFICIENT_CREDITS', status: 403, correlationId: 'c-403' });
    server.answer((_req, res) => sendJson(res, 403, { detail: 'Forbidden' }));
    expect(await failure(client.matchBusinesses(matchBody))).toBeInstanceOf(AuthError);
  });

  it('404 → NotFoundError; an undeclared 4xx → RequestRejectedError', async () => {
    server.answer((_req, res) => sendJson(res, 404, { detail: 'Not Found' }));
    expect(await failure(client.getWebhook('partner-1'))).toBeInstanceOf(NotFoundError);
    expect(server.received[0]?.url).toBe('/v1/webhooks/partner-1');
    server.answer((_req, res) => sendJson(res, 413, { detail: 'too big' }));
    expect(await failure(client.matchBusinesses(matchBody))).toMatchObject({
      name: 'RequestRejectedError',
      status: 413,
    });
  });

  it('422 → ValidationError carrying the service detail', async () => {
    const detail = [
      {
        loc: ['body', 'businesses_to_match', 0, 'name'],
        msg: 'ensure this value has at most 256 characters',
        type: 'value_error.any_str.max_length',
        ctx: { limit_value: 256 },
      },
    ];
    server.answer((_req, res) => sendJson(res, 422, { detail }));
    const error = await failure(client.matchBusinesses(matchBody));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ status: 422, sent: true, detail });
    expect(error.message).toContain('body.businesses_to_match.0.name');
  });

  it('429 → RateLimitedError with retryAfterMs from Retry-After seconds, HTTP date, or the body', async () => {
    server.answer((_req, res) =>
      sendJson(
        res,
        429,
        { error: 'rate_limit_exceeded', message: 'retry later', retry_after: 60 },
        { 'retry-after': '7' },
      ),
    );
    const seconds = await failure(client.matchBusinesses(matchBody));
    expect(seconds).toBeInstanceOf(RateLimitedError);
    expect(seconds).toMatchObject({ status: 429, retryAfterMs: 7000, retryable: true });

    const at = new Date(Date.now() + 30_000).toUTCString();
    server.answer((_req, res) =>
      sendJson(
        res,
        429,
        { error: 'rate_limit_exceeded', message: 'x', retry_after: 30 },
        { 'retry-after': at },
      ),
    );
    const dated = (await failure(client.matchBusinesses(matchBody))) as RateLimitedError;
    expect(dated.retryAfterMs).toBeGreaterThan(25_000);
    expect(dated.retryAfterMs).toBeLessThanOrEqual(30_000);

    server.answer((_req, res) =>
      sendJson(res, 429, { error: 'rate_limit_exceeded', message: 'x', retry_after: 12 }),
    );
    expect(((await failure(client.matchBusinesses(matchBody))) as RateLimitedError).retryAfterMs).toBe(
      12_000,
    );
  });

  it('5xx → ServerError with the status, whatever the body', async () => {
    for (const status of [500, 502, 503]) {
      server.answer((_req, res) => {
        res.writeHead(status, { 'content-type': 'text/html' });
        res.end('<html>down</html>');
      });
      const error = await failure(client.matchBusinesses(matchBody));
      expect(error).toBeInstanceOf(ServerError);
      expect(error).toMatchObject({ status, code: 'SERVER_ERROR', retryable: true });
    }
  });
});

describe('broken responses', () => {
  it('a 200 body that is not JSON → MalformedResponseError invalid-json', async () => {
    server.answer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"response_context": {');
    });
    expect(await failure(client.matchBusinesses(matchBody))).toMatchObject({
      name: 'MalformedResponseError',
      reason: 'invalid-json',
    });
  });

  it('a 200 body of the wrong shape → MalformedResponseError schema', async () => {
    server.answer((_req, res) =>
      sendJson(res, 200, { ...matchResponse, matched_businesses: [{ business_id: 42 }] }),
    );
    const error = await failure(client.matchBusinesses(matchBody));
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(error).toMatchObject({ reason: 'schema', status: 200 });
  });

  it('a body cut short before its Content-Length → MalformedResponseError truncated', async () => {
    server.answer((_req, res, raw) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5000' });
      res.write('{"response_context":');
      setImmediate(() => raw.socket.destroy());
    });
    expect(await failure(client.matchBusinesses(matchBody))).toMatchObject({
      name: 'MalformedResponseError',
      reason: 'truncated',
    });
  });

  it('a body larger than maxResponseBytes → MalformedResponseError too-large', async () => {
    const small = new DataServiceClient({ baseUrl: server.url, apiKey: API_KEY, maxResponseBytes: 64 });
    try {
      server.answer((_req, res) => sendJson(res, 200, 'x'.repeat(1000)));
      expect(await failure(small.healthcheckPayload(1000))).toMatchObject({
        name: 'MalformedResponseError',
        reason: 'too-large',
      });
    } finally {
      await small.close();
    }
  });
});

describe('timeouts and connections', () => {
  it('no response headers in time → RequestTimeoutError headers', async () => {
    server.answer(() => undefined);
    const error = await failure(client.matchBusinesses(matchBody));
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(error).toMatchObject({ phase: 'headers', code: 'REQUEST_TIMEOUT', retryable: true });
  });

  it('a body that stalls → RequestTimeoutError body', async () => {
    server.answer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5000' });
      res.write('{"response_context":');
    });
    expect(await failure(client.matchBusinesses(matchBody))).toMatchObject({
      name: 'RequestTimeoutError',
      phase: 'body',
    });
  });

  it("the call's signal or deadline → RequestTimeoutError aborted", async () => {
    const patient = new DataServiceClient({ baseUrl: server.url, apiKey: API_KEY });
    try {
      server.answer(() => undefined);
      expect(await failure(patient.matchBusinesses(matchBody, { timeoutMs: 100 }))).toMatchObject({
        phase: 'aborted',
      });
      const controller = new AbortController();
      const call = patient.matchBusinesses(matchBody, { signal: controller.signal });
      controller.abort();
      expect(await failure(call)).toMatchObject({ name: 'RequestTimeoutError', phase: 'aborted' });
    } finally {
      await patient.close();
    }
  });

  it('nobody listening → ConnectionError', async () => {
    const closed = await startCannedServer();
    const url = closed.url;
    await closed.close();
    const orphan = new DataServiceClient({ baseUrl: url, apiKey: API_KEY });
    try {
      const error = await failure(orphan.version());
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).toMatchObject({ code: 'CONNECTION_FAILED', retryable: true });
    } finally {
      await orphan.close();
    }
  });
});

describe('retry classification', () => {
  it('splits every error name into retryable or not, matching the classes', () => {
    const all = [...retryableErrorTypes, ...nonRetryableErrorTypes];
    expect(new Set(all).size).toBe(all.length);
    const ctx = { operationId: 'op' };
    const samples: DataServiceError[] = [
      new ValidationError([], false, ctx),
      new AuthError('x', ctx),
      new InsufficientCreditsError('x', ctx),
      new NotFoundError('x', ctx),
      new RequestRejectedError('x', ctx),
      new RateLimitedError('x', 1000, ctx),
      new ServerError('x', ctx),
      new RequestTimeoutError('x', 'headers', ctx),
      new ConnectionError('x', ctx),
      new MalformedResponseError('x', 'truncated', ctx),
    ];
    for (const error of samples) {
      expect(all).toContain(error.name);
      expect((retryableErrorTypes as readonly string[]).includes(error.name)).toBe(error.retryable);
      expect(error).toBeInstanceOf(Error);
      expect(error.code).toMatch(/^[A-Z_]+$/);
    }
    expect(nonRetryableErrorTypes).toEqual(
      expect.arrayContaining(['ValidationError', 'AuthError', 'InsufficientCreditsError']),
    );
  });
});
