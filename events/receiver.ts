// The webhook receiver: checks `X-Timestamp` (±300 s) and `X-Signature` over the raw body in constant
// time against the registered secrets, checks that the delivery's partner and tenant are the ones the
// secret was issued for, and answers 200 only once the event is durably with Temporal (see handoff.ts).
// Refusals: 401 (signature, timestamp, scope), 400 (signed but unreadable), 413, 503 (hand-off failed).
// Plain node:http (measured against fastify in bench/receiver.ts): one route, the raw body, no parsing
// before the signature is checked.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import type { Logger } from '../lib/logger.js';
import { silentLogger } from '../lib/logger.js';
import { Samples, type HandoffOutcome } from './handoff.js';
import { checkTimestamp, decodeSignature, type SignatureFailure } from './signature.js';
import type { SecretRing } from './webhook-secrets.js';
import type { SinkEventRecord } from '../pipeline/sink-layout.js';

/** Largest delivery body accepted; deliveries are a few hundred bytes. */
export const MAX_DELIVERY_BYTES = 256 * 1024;

export type RefusalReason =
  SignatureFailure | 'scope_mismatch' | 'malformed_body' | 'too_large' | 'handoff_failed';

export interface IntakeResult {
  status: number;
  body: { status: HandoffOutcome } | { error: RefusalReason | 'not_found' | 'method_not_allowed' };
}

export interface DeliveryIntakeOptions {
  secrets: SecretRing;
  handoff: { accept(record: SinkEventRecord): Promise<HandoffOutcome> };
  logger?: Logger;
  now?: () => number;
  toleranceSeconds?: number;
}

export interface IntakeCounters {
  accepted: number;
  duplicates: number;
  refused: Record<RefusalReason, number>;
}

type Payload = Record<string, unknown>;

const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** The stored form of a signed delivery, or undefined when required fields are missing. */
export function toSinkRecord(payload: Payload, receivedAtMs: number): SinkEventRecord | undefined {
  const { event_id, event_name, entity_id, entity_type, partner_id, enrollment_key, tenant_id } = payload;
  if (!isText(event_id) || !isText(event_name) || !isText(entity_id) || !isText(partner_id)) return undefined;
  if (tenant_id !== undefined && tenant_id !== null && typeof tenant_id !== 'string') return undefined;
  const data =
    payload.data !== null && typeof payload.data === 'object' && !Array.isArray(payload.data)
      ? (payload.data as Record<string, unknown>)
      : {};
  const receivedAt = new Date(receivedAtMs).toISOString();
  const eventMs = typeof data.event_time === 'string' ? Date.parse(data.event_time) : Number.NaN;
  return {
    event_id,
    event_name,
    event_time: Number.isNaN(eventMs) ? receivedAt : new Date(eventMs).toISOString(),
    entity_id,
    entity_type: isText(entity_type) ? entity_type : 'business',
    tenant_id: tenant_id === undefined || tenant_id === '' ? null : tenant_id,
    partner_id,
    enrollment_key: typeof enrollment_key === 'string' ? enrollment_key : '',
    data,
    received_at: receivedAt,
  };
}

/** The receiver's decisions, apart from HTTP: tested directly and mounted on node:http or fastify. */
export class DeliveryIntake {
  readonly counters: IntakeCounters = {
    accepted: 0,
    duplicates: 0,
    refused: {
      missing_signature: 0,
      bad_timestamp: 0,
      stale_timestamp: 0,
      bad_signature: 0,
      scope_mismatch: 0,
      malformed_body: 0,
      too_large: 0,
      handoff_failed: 0,
    },
  };
  private readonly logger: Logger;
  private readonly now: () => number;

  constructor(private readonly options: DeliveryIntakeOptions) {
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
  }

  refuse(status: number, reason: RefusalReason): IntakeResult {
    this.counters.refused[reason] += 1;
    return { status, body: { error: reason } };
  }

  async receive(
    timestamp: string | undefined,
    signature: string | undefined,
    rawBody: Buffer,
  ): Promise<IntakeResult> {
    const nowMs = this.now();
    if (signature === undefined) return this.refuse(401, 'missing_signature');
    const stale = checkTimestamp(timestamp, nowMs, this.options.toleranceSeconds);
    if (stale) return this.refuse(401, stale);
    const given = decodeSignature(signature);
    if (!given) return this.refuse(401, 'bad_signature');
    const stamp = timestamp as string;
    let entry = this.options.secrets.match(stamp, rawBody, given);
    // A secret rotated by `webhooks register` since start-up: read the files again (throttled) and retry.
    if (!entry && (await this.options.secrets.reloadIfChanged())) {
      entry = this.options.secrets.match(stamp, rawBody, given);
    }
    if (!entry) return this.refuse(401, 'bad_signature');

    let payload: unknown;
    try {
      payload = JSON.parse(rawBody.toString('utf8'));
    } catch {
      return this.refuse(400, 'malformed_body');
    }
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
      return this.refuse(400, 'malformed_body');
    const record = toSinkRecord(payload as Payload, nowMs);
    if (!record) return this.refuse(400, 'malformed_body');
    // The secret is issued per (partner, tenant): a delivery may not speak for anyone else.
    if (record.partner_id !== entry.partnerId || record.tenant_id !== entry.tenant) {
      this.logger.warn(
        { partner_id: record.partner_id, tenant_id: record.tenant_id, secret_file: entry.file },
        'webhook delivery signed with another partner or tenant’s secret; refused',
      );
      return this.refuse(401, 'scope_mismatch');
    }
    let outcome: HandoffOutcome;
    try {
      outcome = await this.options.handoff.accept(record);
    } catch {
      return this.refuse(503, 'handoff_failed');
    }
    if (outcome === 'duplicate') this.counters.duplicates += 1;
    else this.counters.accepted += 1;
    return { status: 200, body: { status: outcome } };
  }
}

function headerText(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function send(
  response: ServerResponse,
  result: IntakeResult | { status: number; body: unknown },
  closing = false,
): void {
  const text = JSON.stringify(result.body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  };
  if (result.status === 503) headers['retry-after'] = 1;
  // While shutting down, no connection is kept for another request.
  if (closing) headers.connection = 'close';
  response.writeHead(result.status, headers).end(text);
}

export interface WebhookReceiverOptions extends DeliveryIntakeOptions {
  port?: number;
  host?: string;
  /** `node` (default) or `fastify`; both share the intake (the benchmark compares them). */
  server?: 'node' | 'fastify';
  /** Extra fields for `GET /healthz`. */
  health?: () => Record<string, unknown>;
}

export interface RunningReceiver {
  url: string;
  port: number;
  intake: DeliveryIntake;
  /** Milliseconds from a request's arrival to its answer, as the receiver sees it. */
  responseMs: Samples;
  /** Stops accepting, lets requests in progress finish (their hand-offs included), then closes. */
  close(): Promise<void>;
  /** Drops every connection at once, as a crash would: requests in progress get no answer. */
  kill(): Promise<void>;
}

/** Starts the receiver: `POST` any path = a delivery; `GET /healthz` = liveness and counters. */
export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<RunningReceiver> {
  const intake = new DeliveryIntake(options);
  const responseMs = new Samples();
  const stalls = watchStalls();
  const health = () => ({
    status: 'ok',
    secrets: options.secrets.size,
    ...intake.counters,
    responseMs: responseMs.percentiles(),
    ...stalls.report(),
    ...(options.health?.() ?? {}),
  });
  const listen =
    options.server === 'fastify'
      ? await fastifyListener(intake, health, responseMs)
      : nodeListener(intake, health, responseMs);
  const { server } = listen;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    intake,
    responseMs,
    close: async () => {
      stalls.stop();
      await listen.close();
    },
    kill: async () => {
      stalls.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * What holds the event loop up, for the health output: its delay (every request waits that long before
 * it is even read) and garbage-collection pauses.
 */
function watchStalls(): { report(): Record<string, unknown>; stop(): void } {
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const gc = { pauses: 0, totalMs: 0, maxMs: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.pauses += 1;
      gc.totalMs += entry.duration;
      gc.maxMs = Math.max(gc.maxMs, entry.duration);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const ms = (ns: number) => Math.round(ns / 1e5) / 10;
  return {
    report: () => ({
      eventLoopDelayMs: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) },
      gc: { pauses: gc.pauses, totalMs: Math.round(gc.totalMs), maxMs: Math.round(gc.maxMs * 10) / 10 },
    }),
    stop: () => {
      loop.disable();
      observer.disconnect();
    },
  };
}

interface Listener {
  server: Server;
  close(): Promise<void>;
}

function nodeListener(intake: DeliveryIntake, health: () => unknown, responseMs: Samples): Listener {
  let closing = false;
  const server = createServer((request, response) => {
    const arrived = performance.now();
    response.once('finish', () => responseMs.add(performance.now() - arrived));
    if (request.method === 'GET' && request.url === '/healthz') {
      request.resume();
      return send(response, { status: 200, body: health() });
    }
    if (request.method !== 'POST') {
      request.resume();
      return send(response, { status: 405, body: { error: 'method_not_allowed' } });
    }
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > MAX_DELIVERY_BYTES) {
      request.resume();
      return send(response, intake.refuse(413, 'too_large'));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_DELIVERY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    request.on('end', () => {
      if (tooLarge) return send(response, intake.refuse(413, 'too_large'));
      intake
        .receive(
          headerText(request, 'x-timestamp'),
          headerText(request, 'x-signature'),
          chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
        )
        .then(
          (result) => {
            if (!response.destroyed) send(response, result, closing);
          },
          () => {
            if (!response.destroyed) send(response, intake.refuse(503, 'handoff_failed'), closing);
          },
        );
    });
  });
  // Longer than the senders' keep-alive (the sandbox's is 4 s), so a sender never reuses a socket we closed.
  server.keepAliveTimeout = 10_000;
  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

async function fastifyListener(
  intake: DeliveryIntake,
  health: () => unknown,
  responseMs: Samples,
): Promise<Listener> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ bodyLimit: MAX_DELIVERY_BYTES, logger: false });
  app.addHook('onResponse', async (_request, reply) => {
    responseMs.add(reply.elapsedTime);
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.get('/healthz', () => health());
  app.post('/*', async (request, reply) => {
    const result = await intake.receive(
      request.headers['x-timestamp'] as string | undefined,
      request.headers['x-signature'] as string | undefined,
      Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
    );
    if (result.status === 503) void reply.header('retry-after', 1);
    return reply.code(result.status).send(result.body);
  });
  await app.ready();
  return { server: app.server, close: () => app.close() };
}
