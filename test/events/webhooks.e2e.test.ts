// Webhook events end to end, on the real sandbox (its signed, retrying outbox), the suite's Temporal
// dev server and S3 server, and the receiver as `webhooks serve` starts it: from an enrollment made
// with the CLI to a row in the window's Parquet table, each event once, whatever is refused or resent.
import type { Client } from '@temporalio/client';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnrichflowConfig } from '../../config/index.js';
import { startEventsReceiver, type EventsReceiver } from '../../workers/receiver.js';
import { signDeliveryBody } from '../../events/signature.js';
import { defaultSecretFile, readWebhookSecret } from '../../events/webhook-secrets.js';
import { freePort } from '../../stack/ports.js';
import { storeResolverFor } from '../../workers/worker.js';
import { INLINE_BATCH_MAX_BYTES } from '../../pipeline/events-types.js';
import {
  s3Location,
  startTestWorker,
  temporalClient,
  testConfig,
  type TestWorker,
} from '../support/pipeline-harness.js';
import {
  deliveryStatuses,
  emitEvents,
  envOf,
  readObjectJson,
  readSink,
  runCli,
  startEventsSandbox,
  waitFor,
  type EventsSandbox,
} from './support.js';

/** Short windows so a test sees its windows close and commit within seconds. */
const SETTINGS = { windowMs: 2_000, graceMs: 500, commitIntervalMs: 0, settleMs: 300, idleMs: 1_500 };

let world: EventsSandbox;
let config: EnrichflowConfig;
let worker: TestWorker;
let temporal: Client;
let env: Record<string, string>;
const receivers: EventsReceiver[] = [];

beforeAll(async () => {
  world = await startEventsSandbox();
  config = testConfig(world.sandbox.url, {
    ENRICHFLOW_WEBHOOK_SECRETS_DIR: mkdtempSync(path.join(tmpdir(), 'events-e2e-secrets-')),
  });
  env = envOf(config);
  worker = await startTestWorker(config);
  temporal = await temporalClient();
});

afterAll(async () => {
  for (const receiver of receivers) await receiver.close().catch(() => undefined);
  await worker?.stop();
  await temporal?.connection.close();
  await world?.close();
});

/** Registers the tenant's webhook with the CLI on a port chosen now, and starts a receiver there. */
async function serve(
  tenant: string,
  output: string,
  port?: number,
  options: { inlineMaxBytes?: number } = {},
): Promise<EventsReceiver> {
  const chosen = port ?? (await freePort());
  const receiver = await startEventsReceiver({
    config,
    output,
    port: chosen,
    settings: SETTINGS,
    client: temporal,
    // One-second intake slots: events reach their window sooner than with the default five.
    slotMs: 1_000,
    ...options,
  });
  receivers.push(receiver);
  return receiver;
}

async function register(
  tenant: string,
  port: number,
  partner = 'crm',
): Promise<{ stdout: string; secret: string }> {
  const { stdout } = await runCli(
    [
      'webhooks',
      'register',
      '--partner-id',
      partner,
      '--url',
      `http://127.0.0.1:${port}/webhooks/events`,
      '--tenant',
      tenant,
    ],
    env,
  );
  const record = await readWebhookSecret(defaultSecretFile(config.events.secretsDir, tenant, partner));
  return { stdout, secret: record.webhook_secret };
}

const idsFrom = (from: number, count: number) => world.businessIds.slice(from, from + count);

describe('webhook events', () => {
  it('lands an event from an enrollment made with the CLI as one Parquet row of its window', async () => {
    const port = await freePort();
    const { stdout, secret } = await register('acme', port);
    const secretFile = defaultSecretFile(config.events.secretsDir, 'acme', 'crm');
    // The path is printed, the secret never; the file is the owner's alone.
    expect(stdout).toContain(secretFile);
    expect(stdout).not.toContain(secret);
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    const output = s3Location('events-e2e');
    await serve('acme', output, port);

    // 25 ids under one key: two enrollments (20 + 5) that both carry it.
    const ids = idsFrom(0, 25);
    const created = await runCli(
      [
        'enrollments',
        'create',
        '--key',
        'crm-sync',
        '--event-types',
        'new_funding_round,new_product',
        '--business-ids',
        ids.join(','),
        '--tenant',
        'acme',
        '--json',
      ],
      env,
    );
    expect(JSON.parse(created.stdout)).toMatchObject({
      enrollment_key: 'crm-sync',
      business_ids: 25,
      created: 2,
    });
    const listed = JSON.parse(
      (await runCli(['enrollments', 'list', '--json', '--tenant', 'acme'], env)).stdout,
    ) as {
      enrollment_key: string;
      enrollment_ids: string[];
    }[];
    expect(listed.map((family) => family.enrollment_key)).toEqual(['crm-sync']);
    expect(listed[0]?.enrollment_ids).toHaveLength(2);
    await expect(
      runCli(
        [
          'enrollments',
          'create',
          '--key',
          'other',
          '--event-types',
          'new_fundng_round',
          '--business-ids',
          ids[0] ?? '',
          '--tenant',
          'acme',
        ],
        env,
      ),
    ).rejects.toThrow(/did you mean new_funding_round/);

    const emitted = await emitEvents(world.sandbox, [
      { business_id: ids[0] ?? '', event_name: 'new_funding_round' },
      { business_id: ids[22] ?? '', event_name: 'new_product' },
      // Not an enrolled type: never delivered.
      { business_id: ids[1] ?? '', event_name: 'new_office' },
    ]);
    expect(emitted.deliveries_queued).toBe(2);
    const wanted = emitted.events.slice(0, 2);

    const rows = await waitFor(
      async () => {
        const found = await readSink(config, output);
        return found.length >= 2 && found;
      },
      'both events in the sink',
      30_000,
    );
    expect(rows.map((r) => r.event_id).sort()).toEqual(wanted.map((e) => e.event_id).sort());
    for (const event of wanted) {
      const row = rows.find((r) => r.event_id === event.event_id);
      expect(row).toMatchObject({
        event_name: event.event_name,
        entity_id: event.business_id,
        entity_type: 'business',
        tenant_id: 'acme',
        partner_id: 'crm',
        enrollment_key: 'crm-sync',
        tenant: 'acme',
      });
      expect(new Date(row?.event_time ?? '').toISOString()).toBe(event.event_time);
      expect(JSON.parse(row?.data ?? '{}')).toMatchObject({ event_time: event.event_time });
    }
    const window = rows[0]?.window ?? '';
    const manifest = await waitFor(
      async () => {
        const found = await readObjectJson<{ complete: boolean; rows: number; files: { key: string }[] }>(
          config,
          `${output}events/tenant=acme/window=${window}/manifest.json`,
        );
        return found?.complete && found;
      },
      'a complete manifest',
      15_000,
    );
    expect(manifest.files[0]?.key).toBe(`tenant=acme/window=${window}/part-0.parquet`);
    // Committed batches leave the inbox: rows are kept once, in Parquet.
    const { store, prefix } = storeResolverFor(config)(
      `${output}events/_work/inbox/tenant=acme/window=${window}/`,
    );
    const left: string[] = [];
    for await (const info of store.list(prefix)) left.push(info.key);
    expect(left).toEqual([]);
    expect(await deliveryStatuses(world.sandbox)).toEqual({ delivered: 2 });
  });

  it.each([
    { how: 'stored before their signals', tenant: 'bravo', inlineMaxBytes: 0 },
    { how: 'carried in their signals', tenant: 'bravo-carried', inlineMaxBytes: INLINE_BATCH_MAX_BYTES },
  ])('stores every good delivery once and refuses every badly signed one (batches $how)', async (pass) => {
    const port = await freePort();
    const { secret } = await register(pass.tenant, port);
    const output = s3Location('events-mixed');
    const receiver = await serve(pass.tenant, output, port, { inlineMaxBytes: pass.inlineMaxBytes });
    const total = 200;
    const now = Date.now();
    const bodies = Array.from({ length: total }, (_, i) =>
      JSON.stringify({
        tenant_id: pass.tenant,
        partner_id: 'crm',
        event_id: `mixed-${i}-${now}`,
        event_name: 'new_product',
        entity_id: world.businessIds[i % 50],
        entity_type: 'business',
        data: { product_name: `P${i}`, event_time: new Date(now - i).toISOString() },
        enrollment_key: 'crm-sync',
      }),
    );
    const bad = new Set(Array.from({ length: total / 20 }, (_, i) => i * 20 + 7));
    const requests: { body: string; good: boolean }[] = bodies.map((body, i) => ({
      body,
      good: !bad.has(i),
    }));
    // 10% duplicates of good deliveries, sent alongside.
    for (let i = 0; i < total / 10; i += 1) requests.push({ body: bodies[i * 10] ?? '', good: true });
    const statuses = await Promise.all(
      requests.map(async ({ body, good }) => {
        const ts = Math.floor(Date.now() / 1000);
        const response = await fetch(`${receiver.url}/webhooks/events`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-timestamp': String(ts),
            'x-signature': signDeliveryBody(good ? secret : `${secret.slice(0, -4)}AAA=`, ts, body),
          },
          body,
        });
        return { good, status: response.status };
      }),
    );
    expect(statuses.filter((s) => !s.good).every((s) => s.status === 401)).toBe(true);
    expect(statuses.filter((s) => s.good).every((s) => s.status === 200)).toBe(true);
    const goodIds = bodies
      .filter((_, i) => !bad.has(i))
      .map((b) => (JSON.parse(b) as { event_id: string }).event_id);
    const rows = await waitFor(
      async () => {
        const found = await readSink(config, output);
        return found.length >= goodIds.length && found;
      },
      'every good event in the sink',
      30_000,
    );
    expect(rows.map((r) => r.event_id).sort()).toEqual([...goodIds].sort());
    // The receiver's health output says how its batches went to Temporal.
    const health = (await (await fetch(`${receiver.url}/healthz`)).json()) as {
      handoff: { batches: number; carriedBatches: number };
    };
    expect(health.handoff.batches).toBeGreaterThan(0);
    expect(health.handoff.carriedBatches).toBe(pass.inlineMaxBytes ? health.handoff.batches : 0);
  });

  it('holds every event once after the receiver is killed mid-stream and restarted', async () => {
    const port = await freePort();
    await register('charlie', port);
    const output = s3Location('events-restart');
    let receiver = await serve('charlie', output, port);
    const ids = idsFrom(100, 10);
    await runCli(
      [
        'enrollments',
        'create',
        '--key',
        'restart-key',
        '--event-types',
        'new_product',
        '--business-ids',
        ids.join(','),
        '--tenant',
        'charlie',
      ],
      env,
    );
    const emitted: string[] = [];
    const emitBurst = async () => {
      const result = await emitEvents(
        world.sandbox,
        ids.map((id) => ({ business_id: id, event_name: 'new_product' })),
      );
      emitted.push(...result.events.map((e) => e.event_id));
    };
    await emitBurst();
    await waitFor(() => receiver.receiver.intake.counters.accepted > 3, 'first deliveries accepted');
    await emitBurst();
    await receiver.kill();
    receivers.splice(receivers.indexOf(receiver), 1);
    await emitBurst();
    // Down for a while: the sandbox's outbox keeps retrying.
    await waitFor(
      async () => ((await deliveryStatuses(world.sandbox)).pending ?? 0) > 0 && true,
      'deliveries pending while the receiver is down',
    );
    receiver = await serve('charlie', output, port);
    await emitBurst();
    const rows = await waitFor(
      async () => {
        const found = await readSink(config, output);
        return new Set(found.map((r) => r.event_id)).size >= emitted.length && found;
      },
      'every event in the sink after the restart',
      45_000,
    );
    expect(rows.map((r) => r.event_id).sort()).toEqual([...emitted].sort());
    const statuses = await deliveryStatuses(world.sandbox);
    expect(statuses.pending ?? 0).toBe(0);
    expect(statuses.abandoned ?? 0).toBe(0);
  });

  it('keeps tenants apart: own enrollments, own secrets, own output partitions', async () => {
    const port = await freePort();
    const north = await register('north', port);
    const south = await register('south', port);
    expect(north.secret).not.toBe(south.secret);
    const output = s3Location('events-tenants');
    const receiver = await serve('north', output, port);
    const shared = idsFrom(200, 1)[0] ?? '';
    const onlyNorth = idsFrom(201, 1)[0] ?? '';
    await runCli(
      [
        'enrollments',
        'create',
        '--key',
        'north-key',
        '--event-types',
        'company_award',
        '--business-ids',
        `${shared},${onlyNorth}`,
        '--tenant',
        'north',
      ],
      env,
    );
    await runCli(
      [
        'enrollments',
        'create',
        '--key',
        'south-key',
        '--event-types',
        'company_award',
        '--business-ids',
        shared,
        '--tenant',
        'south',
      ],
      env,
    );
    const southList = JSON.parse(
      (await runCli(['enrollments', 'list', '--json', '--tenant', 'south'], env)).stdout,
    ) as {
      enrollment_key: string;
    }[];
    expect(southList.map((f) => f.enrollment_key)).toEqual(['south-key']);

    const emitted = await emitEvents(world.sandbox, [
      { business_id: shared, event_name: 'company_award' },
      { business_id: onlyNorth, event_name: 'company_award' },
    ]);
    expect(emitted.deliveries_queued).toBe(3);
    const rows = await waitFor(
      async () => {
        const found = await readSink(config, output);
        return found.length >= 3 && found;
      },
      'the deliveries of both tenants',
      30_000,
    );
    const byTenant = (tenant: string) =>
      rows
        .filter((r) => r.tenant === tenant)
        .map((r) => r.event_id)
        .sort();
    expect(byTenant('north')).toEqual(emitted.events.map((e) => e.event_id).sort());
    expect(byTenant('south')).toEqual([emitted.events[0]?.event_id]);
    expect(rows.every((r) => r.tenant_id === r.tenant)).toBe(true);

    // A delivery for north signed with south's secret is refused.
    const body = JSON.stringify({
      tenant_id: 'north',
      partner_id: 'crm',
      event_id: 'forged-0001',
      event_name: 'company_award',
      entity_id: shared,
      entity_type: 'business',
      data: {},
      enrollment_key: 'north-key',
    });
    const ts = Math.floor(Date.now() / 1000);
    const forged = await fetch(`${receiver.url}/webhooks/events`, {
      method: 'POST',
      headers: { 'x-timestamp': String(ts), 'x-signature': signDeliveryBody(south.secret, ts, body) },
      body,
    });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ error: 'scope_mismatch' });
    expect(readFileSync(defaultSecretFile(config.events.secretsDir, 'south', 'crm'), 'utf8')).toContain(
      '"tenant": "south"',
    );
  });
});
