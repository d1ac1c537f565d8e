// Test fixtures for the sandbox's events part: the real sandbox app (auth, 422s, admin key) over a
// small generated world copied per test, a webhook receiver on a free port, and polling with a deadline.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { FastifyInstance } from 'fastify';
import { buildSandbox } from '../../sandbox/app.js';
import { DATABASE_FILE } from '../../sandbox/data/store.js';
import type { DeliveryOptions, EventsService } from '../../sandbox/events/index.js';

export const KEYS = { alpha: 'key-alpha-0001', beta: 'key-beta-0002' } as const;
export const ADMIN_KEY = 'admin-key-0003';
/** A world small enough to generate in well under a second. */
export const WORLD = { seed: 'sandbox-events-tests', businesses: 120, prospects: 200 } as const;

/** Fast retries so outage tests finish in well under a second per attempt. */
export const FAST_DELIVERY: DeliveryOptions = {
  baseDelayMs: 40,
  maxDelayMs: 160,
  jitter: 0.25,
  pollIntervalMs: 50,
  timeoutMs: 2_000,
};

/** A business id that follows the contract's pattern; not one of the generated world's. */
export function businessId(index: number): string {
  return createHash('md5').update(`business-${index}`).digest('hex');
}

export function makeDataDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-events-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A database with `count` businesses and nothing else: what `generateEvents` needs. */
export async function seedBusinesses(dir: string, count: number): Promise<void> {
  const instance = await DuckDBInstance.create(join(dir, DATABASE_FILE));
  const connection = await instance.connect();
  await connection.run('CREATE TABLE IF NOT EXISTS businesses (business_id VARCHAR, name VARCHAR)');
  for (let i = 0; i < count; i += 1) {
    await connection.run('INSERT INTO businesses VALUES ($id, $name)', {
      id: businessId(i),
      name: `Business ${i}`,
    });
  }
  connection.closeSync();
  instance.closeSync();
}

let template: { dir: string; remove: () => void } | undefined;

/** Fills `dir` with the test world: generated once per test file, then copied (generation is the slow part). */
export async function prepareWorld(dir: string): Promise<void> {
  if (!template) {
    template = makeDataDir();
    const app = await buildSandbox({ dataDir: template.dir, ...WORLD, rateLimitPerMinute: 0 });
    await app.close();
  }
  copyFileSync(join(template.dir, DATABASE_FILE), join(dir, DATABASE_FILE));
}

/** Removes the generated template (call in `afterAll` of files that use `prepareWorld`). */
export function removeWorldTemplate(): void {
  template?.remove();
  template = undefined;
}

export interface EventsApp {
  app: FastifyInstance;
  service: EventsService;
  /** Ids of the generated businesses, in generation order. */
  businessIds: readonly string[];
  close: () => Promise<void>;
}

/** The sandbox over the world in `dir`, with two api keys (`alpha`, `beta`) and the admin key. */
export async function startEventsApp(
  dir: string,
  options: { deliveryOptions?: DeliveryOptions; emitRatePerMinute?: number } = {},
): Promise<EventsApp> {
  let service: EventsService | undefined;
  const app = await buildSandbox({
    dataDir: dir,
    ...WORLD,
    apiKeys: [
      { name: 'alpha', key: KEYS.alpha },
      { name: 'beta', key: KEYS.beta },
    ],
    adminKey: ADMIN_KEY,
    rateLimitPerMinute: 0,
    preloadDatasets: [],
    events: {
      deliveryOptions: options.deliveryOptions ?? FAST_DELIVERY,
      emitRatePerMinute: options.emitRatePerMinute ?? 0,
      onService: (started) => {
        service = started;
      },
    },
  });
  await app.ready();
  if (!service) throw new Error('the events plugin did not start its service');
  return { app, service, businessIds: app.sandbox.store.businessIds, close: () => app.close() };
}

export function headersFor(key: keyof typeof KEYS, tenant?: string): Record<string, string> {
  return { api_key: KEYS[key], ...(tenant === undefined ? {} : { tenant }) };
}

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: Record<string, unknown>;
}

export interface Receiver {
  url: string;
  port: number;
  deliveries: ReceivedDelivery[];
  /** Status the receiver answers with; change it to simulate an outage. */
  status: number;
  close: () => Promise<void>;
}

/** A webhook receiver on `port` (0 = free port) that records every request and answers `status`. */
export async function startReceiver(port = 0, status = 200): Promise<Receiver> {
  const deliveries: ReceivedDelivery[] = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    deliveries,
    status,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      deliveries.push({
        headers: request.headers,
        rawBody,
        body: JSON.parse(rawBody) as Record<string, unknown>,
      });
      response.writeHead(receiver.status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks/events`;
  return receiver;
}

/** A port nothing listens on (bound once, then released). */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Checks a delivery's signature the way a receiver would, written independently of the sandbox's
 * signing code: standard base64 decoding of the secret, HMAC-SHA256 over "{timestamp}.{raw body}",
 * URL-safe base64 of the digest, constant-time comparison.
 */
export function signatureIsValid(delivery: ReceivedDelivery, webhookSecret: string): boolean {
  const timestamp = delivery.headers['x-timestamp'];
  const signature = delivery.headers['x-signature'];
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return false;
  const key = Buffer.from(webhookSecret.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  const expected = createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`), Buffer.from(delivery.rawBody, 'utf8')]))
    .digest('base64')
    .replace(/\+/g, '-')
    .replace(/\//g, '_');
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, Buffer.from(expected));
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
