// Enrollments and webhook registration: persisted, validated against the contract (422 past 20 ids,
// unknown event types, bad URLs), and scoped by api key and tenant so no caller sees another's.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROUTES } from '../../contract/routes.js';
import { checkResponse } from '../../contract/validation.js';
import {
  businessId,
  headersFor,
  makeDataDir,
  prepareWorld,
  removeWorldTemplate,
  startEventsApp,
  type EventsApp,
} from './support.js';

const ENROLLMENTS = '/v1/businesses/events/enrollments';
const ids = (count: number, from = 0) => Array.from({ length: count }, (_, i) => businessId(from + i));

let data: ReturnType<typeof makeDataDir>;
let sandbox: EventsApp | undefined;

afterAll(removeWorldTemplate);

beforeEach(async () => {
  data = makeDataDir();
  await prepareWorld(data.dir);
  sandbox = await startEventsApp(data.dir);
});

afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
  data.remove();
});

function call(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  headers: Record<string, string>,
  payload?: unknown,
) {
  if (!sandbox) throw new Error('no sandbox');
  return sandbox.app.inject({
    method,
    url,
    headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

async function createEnrollment(headers: Record<string, string>, businessIds: string[], key = 'crm-sync') {
  const response = await call('POST', ENROLLMENTS, headers, {
    enrollment_key: key,
    event_types: ['new_funding_round', 'new_office'],
    business_ids: businessIds,
  });
  expect(response.statusCode).toBe(200);
  expect(checkResponse(ROUTES.createEnrollments.response, response.json())).toEqual({ ok: true });
  return response.json<{ enrollment_id: string; enrollment_key: string }>();
}

async function listEnrollments(headers: Record<string, string>) {
  const response = await call('GET', ENROLLMENTS, headers);
  expect(response.statusCode).toBe(200);
  expect(checkResponse(ROUTES.listEnrollments.response, response.json())).toEqual({ ok: true });
  return response.json<{
    enrollments: { enrollment_id: string; business_ids: string[]; event_types: string[] }[];
  }>().enrollments;
}

describe('enrollments', () => {
  it('creates, lists, updates and deletes an enrollment, and keeps it across a restart', async () => {
    const alpha = headersFor('alpha', 'acme');
    const created = await createEnrollment(alpha, ids(20));
    expect(created.enrollment_key).toBe('crm-sync');

    expect(await listEnrollments(alpha)).toEqual([
      {
        enrollment_id: created.enrollment_id,
        enrollment_key: 'crm-sync',
        event_types: ['new_funding_round', 'new_office'],
        business_ids: ids(20),
      },
    ]);

    const updated = await call('PATCH', ENROLLMENTS, alpha, {
      enrollment_id: created.enrollment_id,
      enrollment_key: 'crm-sync-2',
      event_types: ['company_award'],
      business_ids: ids(2, 30),
    });
    expect(updated.statusCode).toBe(200);
    expect(checkResponse(ROUTES.updateEnrollments.response, updated.json())).toEqual({ ok: true });

    await sandbox?.close();
    sandbox = await startEventsApp(data.dir);
    expect(await listEnrollments(alpha)).toEqual([
      {
        enrollment_id: created.enrollment_id,
        enrollment_key: 'crm-sync-2',
        event_types: ['company_award'],
        business_ids: ids(2, 30),
      },
    ]);

    const deleted = await call('DELETE', ENROLLMENTS, alpha, { enrollment_id: created.enrollment_id });
    expect(deleted.statusCode).toBe(200);
    expect(checkResponse(ROUTES.deleteEnrollments.response, deleted.json())).toEqual({ ok: true });
    expect(await listEnrollments(alpha)).toEqual([]);
  });

  it('answers 422 naming the field for 21 business ids, an unknown event type, and a short key', async () => {
    const alpha = headersFor('alpha');
    const tooMany = await call('POST', ENROLLMENTS, alpha, {
      enrollment_key: 'crm-sync',
      event_types: ['new_office'],
      business_ids: ids(21),
    });
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json()).toEqual({
      detail: [
        expect.objectContaining({
          loc: ['body', 'business_ids'],
          type: 'value_error.list.max_items',
          ctx: { limit_value: 20 },
        }),
      ],
    });

    const badType = await call('POST', ENROLLMENTS, alpha, {
      enrollment_key: 'crm-sync',
      event_types: ['new_office', 'alien_landing'],
      business_ids: ids(1),
    });
    expect(badType.statusCode).toBe(422);
    expect(badType.json<{ detail: { loc: unknown[]; type: string }[] }>().detail).toEqual([
      expect.objectContaining({ loc: ['body', 'event_types', 1], type: 'type_error.enum' }),
    ]);

    const badUpdate = await call('PATCH', ENROLLMENTS, alpha, {
      enrollment_id: 'x',
      enrollment_key: 'abc',
      event_types: ['new_office'],
      business_ids: ids(21),
    });
    expect(badUpdate.statusCode).toBe(422);
    const locs = badUpdate.json<{ detail: { loc: unknown[] }[] }>().detail.map((item) => item.loc);
    expect(locs).toEqual(
      expect.arrayContaining([
        ['body', 'enrollment_key'],
        ['body', 'business_ids'],
      ]),
    );

    expect(await listEnrollments(alpha)).toEqual([]);
  });

  it('scopes enrollments by api key and tenant: nobody sees or changes another scope', async () => {
    const alphaAcme = headersFor('alpha', 'acme');
    const alphaGlobex = headersFor('alpha', 'globex');
    const alphaNoTenant = headersFor('alpha');
    const betaAcme = headersFor('beta', 'acme');
    const mine = await createEnrollment(alphaAcme, ids(3));
    const theirs = await createEnrollment(betaAcme, ids(1, 10), 'beta-key');

    for (const other of [alphaGlobex, alphaNoTenant, betaAcme]) {
      const seen = (await listEnrollments(other)).map((e) => e.enrollment_id);
      expect(seen).not.toContain(mine.enrollment_id);
      const patch = await call('PATCH', ENROLLMENTS, other, {
        enrollment_id: mine.enrollment_id,
        enrollment_key: 'hijack',
        event_types: ['cost_cutting'],
        business_ids: ids(1, 40),
      });
      expect(patch.statusCode).toBe(404);
      const remove = await call('DELETE', ENROLLMENTS, other, { enrollment_id: mine.enrollment_id });
      expect(remove.statusCode).toBe(404);
    }
    expect(await listEnrollments(betaAcme)).toEqual([
      expect.objectContaining({ enrollment_id: theirs.enrollment_id }),
    ]);
    expect(await listEnrollments(alphaAcme)).toEqual([
      {
        enrollment_id: mine.enrollment_id,
        enrollment_key: 'crm-sync',
        event_types: ['new_funding_round', 'new_office'],
        business_ids: ids(3),
      },
    ]);
  });

  it('answers 401 without a known api key', async () => {
    for (const headers of [{ api_key: 'nope' }, {}] as Record<string, string>[]) {
      const response = await call('GET', ENROLLMENTS, headers);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    }
    const webhook = await call(
      'POST',
      '/v1/webhooks',
      {},
      { partner_id: 'p', webhook_url: 'https://example.com/x' },
    );
    expect(webhook.statusCode).toBe(401);
  });
});

describe('webhook registration', () => {
  interface Registration {
    webhook_url: string;
    webhook_secret: string;
    created_at: string;
    last_modified_time: string;
  }
  async function register(headers: Record<string, string>, url: string, partnerId = 'partner-1') {
    const response = await call('POST', '/v1/webhooks', headers, { partner_id: partnerId, webhook_url: url });
    expect(response.statusCode).toBe(200);
    expect(checkResponse(ROUTES.registerWebhook.response, response.json())).toEqual({ ok: true });
    return response.json<Registration>();
  }

  it('returns the record with a URL-safe base64 secret of 32 bytes, and rotates it on re-registration', async () => {
    const alpha = headersFor('alpha', 'acme');
    const first = await register(alpha, 'https://hooks.example.com/a');
    expect(first.webhook_url).toBe('https://hooks.example.com/a');
    expect(first.webhook_secret).toMatch(/^[A-Za-z0-9_-]+=*$/);
    expect(Buffer.from(first.webhook_secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64')).toHaveLength(
      32,
    );
    expect(Number.isNaN(Date.parse(first.created_at))).toBe(false);

    const second = await register(alpha, 'https://hooks.example.com/b');
    expect(second.webhook_url).toBe('https://hooks.example.com/b');
    expect(second.webhook_secret).not.toBe(first.webhook_secret);
    expect(second.created_at).toBe(first.created_at);
    expect(Date.parse(second.last_modified_time)).toBeGreaterThanOrEqual(
      Date.parse(first.last_modified_time),
    );

    const current = await call('GET', '/v1/webhooks/partner-1', alpha);
    expect(current.statusCode).toBe(200);
    expect(current.json<Registration>()).toMatchObject({
      webhook_url: 'https://hooks.example.com/b',
      webhook_secret: second.webhook_secret,
    });
  });

  it('scopes webhooks by api key and tenant', async () => {
    const alphaAcme = headersFor('alpha', 'acme');
    const mine = await register(alphaAcme, 'https://acme.example.com/hook');
    // The same partner id elsewhere is a different webhook and leaves mine untouched.
    const other = await register(headersFor('beta', 'acme'), 'https://beta.example.com/hook');
    await register(headersFor('alpha', 'globex'), 'https://globex.example.com/hook');
    expect(other.webhook_secret).not.toBe(mine.webhook_secret);

    const seen = await call('GET', '/v1/webhooks/partner-1', alphaAcme);
    expect(seen.json<Registration>()).toMatchObject({
      webhook_url: 'https://acme.example.com/hook',
      webhook_secret: mine.webhook_secret,
    });
    expect((await call('GET', '/v1/webhooks/partner-1', headersFor('beta'))).statusCode).toBe(404);
    expect((await call('DELETE', '/v1/webhooks/partner-1', headersFor('beta'))).statusCode).toBe(404);
    expect((await call('DELETE', '/v1/webhooks/partner-1', alphaAcme)).statusCode).toBe(200);
    expect((await call('GET', '/v1/webhooks/partner-1', alphaAcme)).statusCode).toBe(404);
    expect((await call('GET', '/v1/webhooks/partner-1', headersFor('beta', 'acme'))).statusCode).toBe(200);
  });

  it('answers 422 for a URL that is not http(s) and for a missing partner id', async () => {
    const alpha = headersFor('alpha');
    const badUrl = await call('POST', '/v1/webhooks', alpha, {
      partner_id: 'p',
      webhook_url: 'ftp://example.com/x',
    });
    expect(badUrl.statusCode).toBe(422);
    expect(badUrl.json<{ detail: { loc: unknown[] }[] }>().detail[0]?.loc).toEqual(['body', 'webhook_url']);
    const missing = await call('POST', '/v1/webhooks', alpha, { webhook_url: 'https://example.com/x' });
    expect(missing.statusCode).toBe(422);
    expect(missing.json()).toEqual({
      detail: [{ loc: ['body', 'partner_id'], msg: 'field required', type: 'value_error.missing' }],
    });
  });
});
