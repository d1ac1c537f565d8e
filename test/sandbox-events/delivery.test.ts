// Webhook delivery from the sandbox's outbox: signed as the reference describes, retried through a
// receiver outage, durable across a sandbox restart, and never repeated once acknowledged.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ADMIN_KEY,
  businessId,
  FAST_DELIVERY,
  headersFor,
  makeDataDir,
  prepareWorld,
  removeWorldTemplate,
  signatureIsValid,
  startEventsApp,
  startReceiver,
  unusedPort,
  waitFor,
  type EventsApp,
  type Receiver,
} from './support.js';

interface DeliveryView {
  delivery_id: string;
  event_id: string;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
}

let data: ReturnType<typeof makeDataDir>;
let sandbox: EventsApp | undefined;
const receivers: Receiver[] = [];

afterAll(removeWorldTemplate);

beforeEach(async () => {
  data = makeDataDir();
  await prepareWorld(data.dir);
});

afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  data.remove();
});

async function receiverOn(port = 0, status = 200): Promise<Receiver> {
  const receiver = await startReceiver(port, status);
  receivers.push(receiver);
  return receiver;
}

async function register(
  app: EventsApp,
  url: string,
  tenant = 'acme',
  partnerId = 'partner-1',
): Promise<string> {
  const response = await app.app.inject({
    method: 'POST',
    url: '/v1/webhooks',
    headers: headersFor('alpha', tenant),
    payload: { partner_id: partnerId, webhook_url: url },
  });
  expect(response.statusCode).toBe(200);
  return response.json<{ webhook_secret: string }>().webhook_secret;
}

async function enroll(app: EventsApp, ids: string[], eventTypes: string[], tenant = 'acme'): Promise<void> {
  const response = await app.app.inject({
    method: 'POST',
    url: '/v1/businesses/events/enrollments',
    headers: headersFor('alpha', tenant),
    payload: { enrollment_key: 'crm-sync', event_types: eventTypes, business_ids: ids },
  });
  expect(response.statusCode).toBe(200);
}

async function emit(app: EventsApp, events: Record<string, unknown>[]) {
  const response = await app.app.inject({
    method: 'POST',
    url: '/_admin/events',
    headers: { 'x-admin-key': ADMIN_KEY },
    payload: { events },
  });
  expect(response.statusCode).toBe(200);
  return response.json<{ events: { event_id: string }[]; deliveries_queued: number }>();
}

async function deliveries(app: EventsApp, eventId?: string): Promise<DeliveryView[]> {
  const response = await app.app.inject({
    method: 'GET',
    url: '/_admin/events/deliveries',
    headers: { 'x-admin-key': ADMIN_KEY },
    query: eventId === undefined ? {} : { event_id: eventId },
  });
  expect(response.statusCode).toBe(200);
  return response.json<{ deliveries: DeliveryView[] }>().deliveries;
}

describe('webhook delivery', () => {
  it('delivers the documented payload, signed so that an independent HMAC check accepts it', async () => {
    sandbox = await startEventsApp(data.dir);
    const receiver = await receiverOn();
    const secret = await register(sandbox, receiver.url);
    await enroll(sandbox, [businessId(1)], ['new_funding_round']);

    const before = Math.floor(Date.now() / 1000);
    const emitted = await emit(sandbox, [
      { business_id: businessId(1), event_name: 'new_funding_round' },
      // Not enrolled for this type, and a business nobody enrolled: neither is delivered.
      { business_id: businessId(1), event_name: 'new_product' },
      { business_id: businessId(2), event_name: 'new_funding_round' },
    ]);
    expect(emitted.deliveries_queued).toBe(1);

    const [delivery] = await waitFor(
      () => receiver.deliveries.length > 0 && receiver.deliveries,
      'a delivery',
    );
    expect(delivery).toBeDefined();
    if (!delivery) return;
    expect(delivery.headers['content-type']).toBe('application/json');
    const timestamp = Number(delivery.headers['x-timestamp']);
    expect(timestamp).toBeGreaterThanOrEqual(before - 1);
    expect(timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 1);
    expect(signatureIsValid(delivery, secret)).toBe(true);
    expect(signatureIsValid({ ...delivery, rawBody: delivery.rawBody.replace('acme', 'acmf') }, secret)).toBe(
      false,
    );

    expect(Object.keys(delivery.body).sort()).toEqual(
      [
        'data',
        'enrollment_key',
        'entity_id',
        'entity_type',
        'event_id',
        'event_name',
        'partner_id',
        'tenant_id',
      ].sort(),
    );
    expect(delivery.body).toMatchObject({
      tenant_id: 'acme',
      partner_id: 'partner-1',
      event_id: emitted.events[0]?.event_id,
      event_name: 'new_funding_round',
      entity_id: businessId(1),
      entity_type: 'business',
      enrollment_key: 'crm-sync',
    });
    const eventData = delivery.body.data as Record<string, unknown>;
    expect(typeof eventData.round_type).toBe('string');
    expect(typeof eventData.amount_usd).toBe('number');
    expect(typeof eventData.event_time).toBe('string');

    const [row] = await waitFor(async () => {
      const rows = await deliveries(sandbox as EventsApp);
      return rows.every((r) => r.status === 'delivered') && rows;
    }, 'the outbox row to be marked delivered');
    expect(row).toMatchObject({ attempts: 1, last_status: 200 });
    expect(receiver.deliveries).toHaveLength(1);
  });

  it('retries with backoff while the receiver answers 503, then delivers', async () => {
    sandbox = await startEventsApp(data.dir);
    const receiver = await receiverOn(0, 503);
    const secret = await register(sandbox, receiver.url);
    await enroll(sandbox, [businessId(3)], ['company_award']);
    const { events } = await emit(sandbox, [{ business_id: businessId(3), event_name: 'company_award' }]);

    await waitFor(() => receiver.deliveries.length >= 3, 'three refused attempts');
    const [pending] = await deliveries(sandbox, events[0]?.event_id);
    expect(pending).toMatchObject({ status: 'pending', last_status: 503 });
    receiver.status = 200;

    await waitFor(
      async () => (await deliveries(sandbox as EventsApp))[0]?.status === 'delivered',
      'delivery',
    );
    const attempts = receiver.deliveries.length;
    expect(attempts).toBeGreaterThanOrEqual(4);
    // Every attempt carries the same event and a valid signature over its own timestamp.
    for (const attempt of receiver.deliveries) {
      expect(attempt.body.event_id).toBe(events[0]?.event_id);
      expect(signatureIsValid(attempt, secret)).toBe(true);
    }
    const [row] = await deliveries(sandbox);
    expect(row?.attempts).toBe(attempts);
  });

  it('delivers once a receiver that was not listening comes up', async () => {
    sandbox = await startEventsApp(data.dir);
    const port = await unusedPort();
    const secret = await register(sandbox, `http://127.0.0.1:${port}/hooks/events`);
    await enroll(sandbox, [businessId(4)], ['new_office']);
    await emit(sandbox, [{ business_id: businessId(4), event_name: 'new_office' }]);

    const [refused] = await waitFor(async () => {
      const rows = await deliveries(sandbox as EventsApp);
      return rows[0] && rows[0].attempts >= 2 && rows;
    }, 'two connection failures');
    expect(refused).toMatchObject({ status: 'pending', last_status: null });
    expect(refused?.last_error).toMatch(/ECONNREFUSED/);

    const receiver = await receiverOn(port);
    const [delivery] = await waitFor(
      () => receiver.deliveries.length > 0 && receiver.deliveries,
      'the delivery',
    );
    expect(delivery && signatureIsValid(delivery, secret)).toBe(true);
    await waitFor(
      async () => (await deliveries(sandbox as EventsApp))[0]?.status === 'delivered',
      'delivered',
    );
  });

  it('does not deliver an acknowledged event again after a restart, and does deliver an unacknowledged one', async () => {
    sandbox = await startEventsApp(data.dir);
    const receiver = await receiverOn();
    const secret = await register(sandbox, receiver.url);
    await enroll(sandbox, [businessId(5), businessId(6)], ['cost_cutting']);

    const acked = (await emit(sandbox, [{ business_id: businessId(5), event_name: 'cost_cutting' }]))
      .events[0];
    await waitFor(
      async () => (await deliveries(sandbox as EventsApp))[0]?.status === 'delivered',
      'acknowledged',
    );

    // The receiver goes down: the second event is attempted and refused before the sandbox stops.
    receiver.status = 503;
    const unacked = (await emit(sandbox, [{ business_id: businessId(6), event_name: 'cost_cutting' }]))
      .events[0];
    await waitFor(
      () => receiver.deliveries.some((d) => d.body.event_id === unacked?.event_id),
      'a refused attempt',
    );
    await sandbox.close();
    sandbox = undefined;

    receiver.status = 200;
    const refusedAttempts = receiver.deliveries.length - 1;
    sandbox = await startEventsApp(data.dir);
    await waitFor(async () => {
      const rows = await deliveries(sandbox as EventsApp);
      return rows.length === 2 && rows.every((row) => row.status === 'delivered');
    }, 'the unacknowledged event to be delivered after the restart');

    // Deliveries are sent oldest first, so a resend of the acknowledged event would have arrived by now.
    const byEvent = (eventId: string | undefined) =>
      receiver.deliveries.filter((d) => d.body.event_id === eventId);
    expect(byEvent(acked?.event_id)).toHaveLength(1);
    expect(byEvent(unacked?.event_id)).toHaveLength(refusedAttempts + 1);
    const last = byEvent(unacked?.event_id).at(-1);
    expect(last && signatureIsValid(last, secret)).toBe(true);

    // And a third event after the restart arrives exactly once, the first still not repeated.
    const third = (await emit(sandbox, [{ business_id: businessId(5), event_name: 'cost_cutting' }]))
      .events[0];
    await waitFor(() => byEvent(third?.event_id).length === 1, 'a new event after the restart');
    await waitFor(
      async () => (await deliveries(sandbox as EventsApp)).every((row) => row.status === 'delivered'),
      'all',
    );
    expect(byEvent(acked?.event_id)).toHaveLength(1);
  });

  it('sends pending deliveries to the re-registered URL under the new secret', async () => {
    sandbox = await startEventsApp(data.dir);
    const first = await receiverOn(0, 503);
    await register(sandbox, first.url);
    await enroll(sandbox, [businessId(7)], ['new_partnership']);
    await emit(sandbox, [{ business_id: businessId(7), event_name: 'new_partnership' }]);
    await waitFor(() => first.deliveries.length > 0, 'an attempt at the old URL');

    const second = await receiverOn();
    const newSecret = await register(sandbox, second.url);
    const [delivery] = await waitFor(() => second.deliveries.length > 0 && second.deliveries, 'the new URL');
    expect(delivery && signatureIsValid(delivery, newSecret)).toBe(true);
  });

  it('abandons a delivery after the last allowed attempt, and queues none once the webhook is removed', async () => {
    sandbox = await startEventsApp(data.dir, { deliveryOptions: { ...FAST_DELIVERY, maxAttempts: 3 } });
    const receiver = await receiverOn(0, 500);
    await register(sandbox, receiver.url);
    await enroll(sandbox, [businessId(9)], ['cost_cutting', 'new_product']);
    const failing = (await emit(sandbox, [{ business_id: businessId(9), event_name: 'cost_cutting' }]))
      .events[0];
    const [abandoned] = await waitFor(async () => {
      const rows = await deliveries(sandbox as EventsApp, failing?.event_id);
      return rows[0]?.status === 'abandoned' && rows;
    }, 'the delivery to be abandoned');
    expect(abandoned).toMatchObject({ attempts: 3, last_status: 500 });
    expect(receiver.deliveries).toHaveLength(3);

    const removed = await sandbox.app.inject({
      method: 'DELETE',
      url: '/v1/webhooks/partner-1',
      headers: headersFor('alpha', 'acme'),
    });
    expect(removed.statusCode).toBe(200);
    // Enrolled, but the scope has no webhook any more: nothing is queued.
    const after = await emit(sandbox, [{ business_id: businessId(9), event_name: 'new_product' }]);
    expect(after.deliveries_queued).toBe(0);
  });

  it('refuses the admin routes without the admin key', async () => {
    sandbox = await startEventsApp(data.dir);
    const response = await sandbox.app.inject({
      method: 'POST',
      url: '/_admin/events',
      headers: { 'x-admin-key': 'wrong' },
      payload: { events: [{}] },
    });
    expect(response.statusCode).toBe(403);
    const listing = await sandbox.app.inject({ method: 'GET', url: '/_admin/events/deliveries' });
    expect(listing.statusCode).toBe(403);
  });

  it('simulates a stream of new events for enrolled businesses when a rate is set', async () => {
    sandbox = await startEventsApp(data.dir, { emitRatePerMinute: 6_000 });
    const receiver = await receiverOn();
    await register(sandbox, receiver.url);
    await enroll(
      sandbox,
      [businessId(8)],
      [
        'new_product',
        'new_office',
        'company_award',
        'cost_cutting',
        'new_partnership',
        'employee_joined_company',
      ],
    );
    const [delivery] = await waitFor(
      () => receiver.deliveries.length > 0 && receiver.deliveries,
      'a simulated event to be delivered',
      20_000,
    );
    expect(delivery?.body.entity_id).toBe(businessId(8));
  });
});
