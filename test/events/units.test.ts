// The pure parts of the events feature, without servers: signature and timestamp checks (against the
// sandbox's own signing code), the receiver's decisions, enrollment planning, time bounds, windows.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUSINESS_EVENT_TYPES } from '../../contract/enums.js';
import { EnrollmentInputError, parseEventTypes, planEnrollmentSync } from '../../events/enrollment-plan.js';
import { DeliveryIntake } from '../../events/receiver.js';
import {
  eventWindowWorkflowId,
  tenantLabel,
  windowLabel,
  windowStartOf,
} from '../../pipeline/sink-layout.js';
import { parseDuration, resolveTimeBound } from '../../pipeline/time-bounds.js';
import { defaultSecretFile, saveWebhookSecret, SecretRing } from '../../events/webhook-secrets.js';
import type { SinkEventRecord } from '../../pipeline/sink-layout.js';
import { newWebhookSecret, signDelivery } from '../../sandbox/events/signing.js';
import { nextCommitAt } from '../../workflows/events-sink.js';
import { DEFAULT_SINK_WINDOW } from '../../pipeline/events-types.js';

const dir = mkdtempSync(path.join(tmpdir(), 'events-units-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const id = (n: number) => n.toString(16).padStart(32, '0');
const ids = (count: number, from = 0) => Array.from({ length: count }, (_, i) => id(from + i));

async function ringWith(entries: { partner: string; tenant: string | null; secret: string }[]) {
  const folder = mkdtempSync(path.join(dir, 'ring-'));
  for (const entry of entries) {
    await saveWebhookSecret(defaultSecretFile(folder, entry.tenant, entry.partner), {
      partner_id: entry.partner,
      tenant: entry.tenant,
      webhook_url: 'http://127.0.0.1:1/hook',
      webhook_secret: entry.secret,
      registered_at: new Date().toISOString(),
      service_url: 'http://127.0.0.1:2',
    });
  }
  return { folder, ring: await SecretRing.load([folder]) };
}

function delivery(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    tenant_id: 'acme',
    partner_id: 'p1',
    event_id: 'e'.repeat(32),
    event_name: 'new_product',
    entity_id: id(7),
    entity_type: 'business',
    data: { product_name: 'Pulse AI', event_time: '2026-11-22T03:10:00.000Z' },
    enrollment_key: 'crm-sync',
    ...overrides,
  });
}

describe('delivery checks', () => {
  const secret = newWebhookSecret();
  const accepted: SinkEventRecord[] = [];
  const handoff = {
    accept: (record: SinkEventRecord) => {
      accepted.push(record);
      return Promise.resolve('accepted' as const);
    },
  };

  it('stores a secret file readable by its owner only', async () => {
    const { folder } = await ringWith([{ partner: 'p1', tenant: 'acme', secret }]);
    const file = defaultSecretFile(folder, 'acme', 'p1');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
  });

  it('accepts what the sandbox signs, and refuses bad signatures, stale or future timestamps and other scopes', async () => {
    const { ring } = await ringWith([
      { partner: 'p1', tenant: 'acme', secret },
      { partner: 'p1', tenant: 'globex', secret: newWebhookSecret() },
    ]);
    const now = Date.parse('2026-11-22T03:10:05Z');
    const intake = new DeliveryIntake({ secrets: ring, handoff, now: () => now });
    const ts = Math.floor(now / 1000);
    const body = delivery();
    const send = (timestamp: number | string | undefined, signature: string | undefined, raw = body) =>
      intake.receive(timestamp === undefined ? undefined : String(timestamp), signature, Buffer.from(raw));

    expect(await send(ts, signDelivery(secret, ts, body))).toEqual({
      status: 200,
      body: { status: 'accepted' },
    });
    expect(accepted.at(-1)).toMatchObject({
      event_id: 'e'.repeat(32),
      tenant_id: 'acme',
      event_time: '2026-11-22T03:10:00.000Z',
    });
    // Unpadded base64url (some senders strip '=') is the same digest.
    expect((await send(ts, signDelivery(secret, ts, body).replace(/=+$/, ''))).status).toBe(200);

    expect(await send(ts, signDelivery(newWebhookSecret(), ts, body))).toEqual({
      status: 401,
      body: { error: 'bad_signature' },
    });
    expect((await send(ts, signDelivery(secret, ts, `${body} `))).status).toBe(401);
    expect((await send(ts + 1, signDelivery(secret, ts, body))).status).toBe(401);
    expect((await send(ts, 'not-a-signature')).body).toEqual({ error: 'bad_signature' });
    expect((await send(ts, undefined)).body).toEqual({ error: 'missing_signature' });
    expect((await send('soon', signDelivery(secret, ts, body))).body).toEqual({ error: 'bad_timestamp' });
    for (const skew of [-301, 301]) {
      const stale = ts + skew;
      expect(await send(stale, signDelivery(secret, stale, body))).toEqual({
        status: 401,
        body: { error: 'stale_timestamp' },
      });
    }
    for (const skew of [-299, 299])
      expect((await send(ts + skew, signDelivery(secret, ts + skew, body))).status).toBe(200);

    // Signed with acme's secret but speaking for globex: refused.
    const other = delivery({ tenant_id: 'globex' });
    expect(await send(ts, signDelivery(secret, ts, other), other)).toEqual({
      status: 401,
      body: { error: 'scope_mismatch' },
    });
    const unreadable = '{"event_id": ';
    expect(await send(ts, signDelivery(secret, ts, unreadable), unreadable)).toEqual({
      status: 400,
      body: { error: 'malformed_body' },
    });
    expect(intake.counters.refused).toMatchObject({
      bad_signature: 4,
      stale_timestamp: 2,
      scope_mismatch: 1,
      malformed_body: 1,
    });
  });

  it('picks up a rotated secret from its file without a restart', async () => {
    const { folder, ring } = await ringWith([{ partner: 'p2', tenant: null, secret }]);
    let now = Date.now();
    const intake = new DeliveryIntake({ secrets: ring, handoff, now: () => now });
    const rotated = newWebhookSecret();
    await saveWebhookSecret(defaultSecretFile(folder, null, 'p2'), {
      partner_id: 'p2',
      tenant: null,
      webhook_url: 'http://127.0.0.1:1/hook',
      webhook_secret: rotated,
      registered_at: new Date().toISOString(),
      service_url: 'http://127.0.0.1:2',
    });
    now += 2_000;
    const body = delivery({ tenant_id: null, partner_id: 'p2' });
    const ts = Math.floor(now / 1000);
    expect(
      (await intake.receive(String(ts), signDelivery(rotated, ts, body), Buffer.from(body))).status,
    ).toBe(200);
  });
});

describe('enrollment planning', () => {
  it('validates event types before any call, with a suggestion', () => {
    expect(parseEventTypes('new_product, new_office')).toEqual(['new_product', 'new_office']);
    expect(parseEventTypes('all')).toEqual([...BUSINESS_EVENT_TYPES]);
    expect(() => parseEventTypes('new_prodcut,new_office')).toThrow(
      /"new_prodcut" \(did you mean new_product\?\)/,
    );
    expect(() => parseEventTypes('')).toThrow(EnrollmentInputError);
  });

  it('splits many ids into enrollments of 20 under one key', () => {
    const plan = planEnrollmentSync('crm-sync', ['new_product'], ids(45), []);
    expect(plan.create.map((c) => c.business_ids.length)).toEqual([20, 20, 5]);
    expect(new Set(plan.create.map((c) => c.enrollment_key))).toEqual(new Set(['crm-sync']));
    expect(plan.create.flatMap((c) => c.business_ids)).toEqual(ids(45));
  });

  it('reconciles without moving an id that stays between enrollments', () => {
    const existing = [
      {
        enrollment_id: 'a',
        enrollment_key: 'crm-sync',
        event_types: ['new_product'],
        business_ids: ids(20, 0),
      },
      {
        enrollment_id: 'b',
        enrollment_key: 'crm-sync',
        event_types: ['new_product'],
        business_ids: ids(20, 20),
      },
      {
        enrollment_id: 'c',
        enrollment_key: 'crm-sync',
        event_types: ['new_product'],
        business_ids: ids(5, 40),
      },
      { enrollment_id: 'x', enrollment_key: 'other', event_types: ['new_product'], business_ids: ids(3, 0) },
    ];
    // Drop 0..2 and all of c, add 100..129; b is untouched.
    const wanted = [...ids(17, 3), ...ids(20, 20), ...ids(30, 100)];
    const plan = planEnrollmentSync('crm-sync', ['new_product'], wanted, existing);
    expect(plan.unchanged).toEqual(['b']);
    const a = plan.update.find((u) => u.enrollment_id === 'a');
    expect(a?.business_ids.slice(0, 17)).toEqual(ids(17, 3));
    expect(a?.business_ids).toHaveLength(20);
    expect(plan.update.find((u) => u.enrollment_id === 'c')?.business_ids).toHaveLength(20);
    const placed = [
      ...plan.update.flatMap((u) => u.business_ids),
      ...ids(20, 20),
      ...plan.create.flatMap((c) => c.business_ids),
    ];
    expect(placed.sort()).toEqual([...wanted].sort());
    expect(plan.delete).toEqual([]);

    const shrink = planEnrollmentSync('crm-sync', ['new_office'], ids(10, 20), existing);
    expect(shrink.delete.sort()).toEqual(['a', 'c']);
    expect(shrink.update).toEqual([
      {
        enrollment_id: 'b',
        enrollment_key: 'crm-sync',
        event_types: ['new_office'],
        business_ids: ids(10, 20),
      },
    ]);
  });
});

describe('time bounds and windows', () => {
  const now = Date.parse('2026-11-22T03:41:30Z');

  it('reads durations and resolves relative bounds against the start time', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(resolveTimeBound('30d', now)).toBe('2026-10-23T03:41:30.000Z');
    expect(resolveTimeBound('2026-10-01', now)).toBe('2026-10-01');
    expect(() => resolveTimeBound('last week', now)).toThrow(/neither a duration/);
    expect(() => resolveTimeBound('2026-02-30', now)).toThrow(/not a real date/);
  });

  it('names windows by their start and keys workflows by output, length, tenant and start', () => {
    const start = windowStartOf(now, 3_600_000);
    expect(windowLabel(start)).toBe('20261122T030000Z');
    expect(tenantLabel(null)).toBe('_none');
    expect(tenantLabel('_none')).toBe('%5Fnone');
    expect(eventWindowWorkflowId('s3://b/x/', 3_600_000, 'acme', start)).toMatch(
      /^events-window\/[0-9a-f]{8}\/acme\/20261122T030000Z$/,
    );
    expect(eventWindowWorkflowId('s3://b/x/', 60_000, 'acme', start)).not.toBe(
      eventWindowWorkflowId('s3://b/x/', 3_600_000, 'acme', start),
    );
  });

  it('commits at the close, earlier at the interval, and after quiet time for late deliveries', () => {
    const settings = {
      ...DEFAULT_SINK_WINDOW,
      windowMs: 60_000,
      graceMs: 10_000,
      commitIntervalMs: 30_000,
      settleMs: 2_000,
    };
    const start = 0;
    expect(
      nextCommitAt({ pending: 0, firstPendingAt: undefined, lastSignalAt: undefined }, start, settings),
    ).toBeUndefined();
    expect(nextCommitAt({ pending: 3, firstPendingAt: 1_000, lastSignalAt: 5_000 }, start, settings)).toBe(
      31_000,
    );
    expect(nextCommitAt({ pending: 3, firstPendingAt: 50_000, lastSignalAt: 55_000 }, start, settings)).toBe(
      70_000,
    );
    // Late deliveries: after quiet time (they are in the inbox when the window hears of them).
    expect(
      nextCommitAt({ pending: 1, firstPendingAt: 200_000, lastSignalAt: 201_000 }, start, settings),
    ).toBe(203_000);
    expect(
      nextCommitAt({ pending: 1, firstPendingAt: 200_000, lastSignalAt: 201_000 }, start, {
        ...settings,
        settleMs: 9_000,
      }),
    ).toBe(210_000);
    expect(
      nextCommitAt({ pending: 1, firstPendingAt: 50_000, lastSignalAt: 55_000 }, start, {
        ...settings,
        commitIntervalMs: 0,
      }),
    ).toBe(70_000);
  });
});
