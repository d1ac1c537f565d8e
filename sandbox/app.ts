// The sandbox Data Service as a fastify app, apart from listen(): opens (or generates) the database,
// then serves every operation of the contract. Hooks in order: correlation id and timing → auth (K) →
// rate limit → injected faults → contract check (422) → handler; events, enrollments and webhooks come
// from the events plugin, which reads the caller's key name and tenant set here.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import {
  ALL_ROUTES,
  API_KEY_HEADER,
  CORRELATION_ID_HEADER,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  RATE_LIMIT_ERROR_CODE,
  RATE_LIMIT_LIMIT_HEADER,
  RATE_LIMIT_REMAINING_HEADER,
  RATE_LIMIT_RESET_HEADER,
  RETRY_AFTER_HEADER,
  TENANT_HEADER,
  UNAUTHORIZED_CODE,
  UNAUTHORIZED_MESSAGE,
  adaptProviderRequest,
  checkRequest,
  compiledValidator,
  specPath,
  jsonDecodeDetail,
  schemaErrorsToDetail,
  BULK_DATASETS,
  PROSPECT_DATASETS,
  type BulkDataset,
  type ProspectDataset,
  type RouteSpec,
} from '../contract/index.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import { SandboxStore } from './data/store.js';
import {
  ADMIN_KEY_HEADER,
  eventsPlugin,
  generateEvents,
  type EventsPluginOptions,
  type EventsService,
} from './events/index.js';
import {
  ApiKeyRing,
  DEV_API_KEY,
  DEV_API_KEY_NAME,
  SlidingWindowLimiter,
  type ApiKey,
  type RateDecision,
} from './http/access.js';
import {
  elapsedSeconds,
  responseContext,
  sendJson,
  sendValidationError,
  jsonErrorPosition,
  UnparsableBody,
} from './http/context.js';
import { asOfShiftMs } from './http/clock.js';
import { RouteMethods } from './http/conventions.js';
import { FaultConfigSchema, FaultInjector, type FaultConfig, type FaultRule } from './http/faults.js';
import { TrafficJournal } from './http/traffic.js';
import { registerSandboxRoutes, type SandboxServices } from './http/routes.js';
import { Autocomplete } from './query/autocomplete.js';
import { DatasetRecords, prospectRecordSources } from './query/dataset-records.js';
import { BusinessIndex } from './query/business-index.js';
import { BusinessKeys } from './query/business-keys.js';
import { ProspectIndex, RecentRecords, SearchTotals } from './query/prospect-index.js';
import { ProspectKeys } from './query/prospect-keys.js';
import type { SqlParams } from './query/sql.js';

export const DEFAULT_SEED = 'enrichflow';
export const DEFAULT_BUSINESSES = 5_000;
export const DEFAULT_PROSPECTS = 25_000;

export interface SandboxOptions {
  /** Folder of the database file (`sandbox.duckdb`). */
  dataDir: string;
  /** Seed of the generated data; default `enrichflow`. */
  seed?: string | number;
  /** Businesses to generate; default 5,000. */
  businesses?: number;
  /** Prospects to generate; default 25,000. */
  prospects?: number;
  /** Accepted API keys; default one key, `dev-key-enrichflow`, named `dev`. */
  apiKeys?: readonly ApiKey[];
  /** Key of the `/_admin` routes (header `x-admin-key`); without it those routes answer 403. */
  adminKey?: string;
  /** Requests per minute per API key, sliding 60 s window; 0 turns the limit off. Default 200. */
  rateLimitPerMinute?: number;
  /** Faults active from the start; the admin route can replace them. */
  faults?: FaultConfig;
  logger?: Logger;
  /**
   * Epoch milliseconds; default Date.now. The one clock of the sandbox: the rate limit window, and every
   * date served relative to today (posts, events, the `events` filter). Fix it for deterministic tests.
   */
  clock?: () => number;
  /** Options of the events plugin (enrollments, events, webhooks); `false` leaves those routes out. */
  events?: false | Omit<EventsPluginOptions, 'db' | 'adminKey' | 'logger' | 'responseContext' | 'clock'>;
  /** Memory for bulk-dataset records held in process, bytes; default 192 MiB (0: always query). */
  recordCacheBytes?: number;
  /**
   * Memory for prospect-dataset records (profiles, contacts, posts) held in process, bytes; default
   * 128 MiB (0: always query). Each dataset loads on first use; one larger than this is queried.
   */
  prospectRecordCacheBytes?: number;
  /**
   * Prospect datasets loaded into memory once the prospect keys are, in the background; default profiles
   * and contacts_information (what a people run asks for). The others load on first use.
   */
  preloadProspectDatasets?: readonly ProspectDataset[];
  /** Recently served prospect records kept in memory, bytes; default 8 MiB. */
  prospectCacheBytes?: number;
  /** Datasets loaded into memory at start, in the background; default firmographics. */
  preloadDatasets?: readonly BulkDataset[];
  /** Address listed in the OpenAPI document's `servers`. */
  publicUrl?: string;
  /** Largest request body in bytes; default 1 MiB. */
  bodyLimit?: number;
  /** Generate prospects in a worker thread (`auto`: for large worlds). */
  generationWorker?: 'auto' | 'always' | 'never';
  /**
   * Accept the spec's names only: no provider aliases (`linkedin_url`, `google_category`,
   * `/linkedin_posts/`, ...), and no unknown keys in match items, which the service ignores. For client
   * authors who want typos caught; the default mirrors the service.
   */
  strict?: boolean;
}

export interface SandboxHandle {
  store: SandboxStore;
  records: DatasetRecords;
  prospectRecords: DatasetRecords<ProspectDataset>;
  faults: FaultInjector;
  limiter: SlidingWindowLimiter | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    sandbox: SandboxHandle;
  }
}

const ADMIN_PREFIX = '/_admin';

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function setRateHeaders(reply: FastifyReply, decision: RateDecision): void {
  reply.header(RATE_LIMIT_LIMIT_HEADER, decision.limit);
  reply.header(RATE_LIMIT_REMAINING_HEADER, decision.remaining);
  reply.header(RATE_LIMIT_RESET_HEADER, decision.resetSeconds);
}

function sendRateLimited(reply: FastifyReply, retryAfterSeconds: number): FastifyReply {
  reply.header(RETRY_AFTER_HEADER, retryAfterSeconds);
  return sendJson(
    reply,
    JSON.stringify({
      error: RATE_LIMIT_ERROR_CODE,
      message: `API rate limit exceeded. Please retry after ${retryAfterSeconds} seconds.`,
      retry_after: retryAfterSeconds,
    }),
    429,
  );
}

function failureBody(request: FastifyRequest, code: string, message: string): string {
  return JSON.stringify({ response_context: responseContext(request, 'failure'), error: { code, message } });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Builds the sandbox app (not listening). Generates the database first when the data directory has none. */
export async function buildSandbox(options: SandboxOptions): Promise<FastifyInstance> {
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? Date.now;
  const strict = options.strict ?? false;
  const seed = options.seed ?? DEFAULT_SEED;
  const eventsEnabled = options.events !== false;
  const store = await SandboxStore.open({
    dataDir: options.dataDir,
    seed,
    businesses: options.businesses ?? DEFAULT_BUSINESSES,
    prospects: options.prospects ?? DEFAULT_PROSPECTS,
    logger,
    ...(options.generationWorker ? { worker: options.generationWorker } : {}),
    afterGenerate: async (connection) => {
      const result = await generateEvents({ connection, seed: String(seed) });
      logger.info({ events: result.events }, 'sandbox data: event history generated');
    },
  });
  const records = new DatasetRecords(store, {
    ...(options.recordCacheBytes !== undefined ? { budgetBytes: options.recordCacheBytes } : {}),
    logger,
  });
  void records.preload(options.preloadDatasets ?? ['firmographics']);
  const prospectRecords = new DatasetRecords<ProspectDataset>(
    store,
    { budgetBytes: options.prospectRecordCacheBytes ?? 128 * 1024 * 1024, logger },
    prospectRecordSources(store),
  );
  // The indexes load in the background: the app listens at once, and the routes that need them wait.
  const autocomplete = Autocomplete.build(store);
  const prospects = ProspectIndex.load(store);
  const businessIndex = BusinessIndex.load(store);
  // Match keys in memory; business match queries the table until they are loaded.
  const businessKeys = BusinessKeys.load(store);
  let loadedKeys: BusinessKeys | undefined;
  businessKeys.then(
    (keys) => (loadedKeys = keys),
    (error: unknown) => logger.warn({ err: error }, 'sandbox: match keys not loaded; matching by query'),
  );
  // Prospect match keys and ids (they read employer names from the business keys); prospect match and
  // prospect records query the tables until they are loaded.
  const prospectKeys = businessKeys.then((keys) => ProspectKeys.load(store, keys));
  let loadedProspectKeys: ProspectKeys | undefined;
  prospectKeys.then(
    (keys) => {
      loadedProspectKeys = keys;
      logger.info(
        { prospects: keys.size, bytes: keys.memoryBytes },
        'sandbox: prospect match keys in memory',
      );
      void prospectRecords.preload(options.preloadProspectDatasets ?? ['profiles', 'contacts_information']);
    },
    (error: unknown) =>
      logger.warn({ err: error }, 'sandbox: prospect match keys not loaded; matching by query'),
  );
  // Failures surface in the requests that await these; keep them from being unhandled meanwhile.
  for (const loading of [autocomplete, prospects, businessIndex]) loading.catch(() => undefined);
  const keys = new ApiKeyRing(options.apiKeys ?? [{ name: DEV_API_KEY_NAME, key: DEV_API_KEY }]);
  const rateLimit = options.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE;
  const limiter = rateLimit > 0 ? new SlidingWindowLimiter(rateLimit, clock) : null;
  const faults = new FaultInjector(options.faults);
  const traffic = new TrafficJournal(clock);
  const routeIndex = new Map<string, RouteSpec>();
  for (const route of ALL_ROUTES) routeIndex.set(`${route.method} ${route.path}`, route);

  const loggerInstance: FastifyBaseLogger = logger;
  const app: FastifyInstance = Fastify({
    loggerInstance,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    forceCloseConnections: true,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // `/version` and `/version/` answer alike, as every path with and without its trailing slash.
    routerOptions: { ignoreTrailingSlash: true },
    // The provider's path names (`/linkedin_posts/`) reach the spec's routes, unless strict.
    rewriteUrl: (raw: IncomingMessage) => (strict ? (raw.url ?? '/') : specPath(raw.url ?? '/')),
  });
  const routeMethods = new RouteMethods(app);
  app.decorate('sandbox', { store, records, prospectRecords, faults, limiter });
  app.decorateRequest('apiKeyName', null);
  app.decorateRequest('tenant', '');
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('routeSpec', null);
  app.decorateRequest('checked', null);
  app.decorateRequest('pendingFault', null);

  // Every body is read as text and parsed here, so that malformed JSON (or any content type) becomes
  // a FastAPI-style 422 instead of fastify's 400 or 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, raw, done) => {
    const text = typeof raw === 'string' ? raw : raw.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text) as unknown);
    } catch {
      done(null, new UnparsableBody(text, jsonErrorPosition(text)));
    }
  });

  const hanging = new Set<FastifyRequest>();

  app.addHook('onRequest', async (request, reply) => {
    request.startedAt = performance.now();
    reply.header(CORRELATION_ID_HEADER, request.id);
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const spec = routeIndex.get(`${method} ${request.routeOptions.url ?? ''}`) ?? null;
    request.routeSpec = spec;
    const tenant = request.headers[TENANT_HEADER];
    request.tenant = typeof tenant === 'string' ? tenant : '';
    if (request.url.startsWith(ADMIN_PREFIX)) return;

    if (spec?.auth) {
      const given = request.headers[API_KEY_HEADER];
      const name = keys.identify(typeof given === 'string' ? given : undefined);
      if (name === undefined) {
        if (limiter) setRateHeaders(reply, limiter.take(`ip:${request.ip}`));
        return sendJson(
          reply,
          JSON.stringify({
            response_context: responseContext(request, 'failure'),
            error: { code: UNAUTHORIZED_CODE, message: UNAUTHORIZED_MESSAGE },
          }),
          401,
        );
      }
      request.apiKeyName = name;
    }
    if (limiter) {
      const decision = limiter.take(
        request.apiKeyName !== null ? `key:${request.apiKeyName}` : `ip:${request.ip}`,
      );
      setRateHeaders(reply, decision);
      if (!decision.allowed) return sendRateLimited(reply, decision.retryAfterSeconds);
    }
    if (!faults.active) return;
    const plan = faults.plan(spec?.operationId, request.routeOptions.url ?? request.url.split('?')[0] ?? '');
    if (plan.latencyMs > 0) await sleep(plan.latencyMs);
    const fault = plan.fault;
    if (!fault) return;
    switch (fault.kind) {
      case 'error': {
        const status = fault.status ?? 503;
        return sendJson(
          reply,
          failureBody(
            request,
            status === 503 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_SERVER_ERROR',
            'Injected fault',
          ),
          status,
        );
      }
      case 'rate_limit':
        return sendRateLimited(reply, fault.retryAfterSeconds ?? 1);
      case 'no_credits':
        return sendJson(
          reply,
          JSON.stringify({
            details: 'You have insufficient credits to perform this operation. Injected fault.',
            correlation_id: request.id,
          }),
          403,
        );
      case 'hang':
        // No answer, ever: the socket stays open until the client gives up or the app closes.
        hanging.add(request);
        request.raw.once('close', () => hanging.delete(request));
        reply.hijack();
        return;
      default:
        request.pendingFault = fault;
    }
  });

  app.addHook('preHandler', async (request, reply) => {
    if (request.body instanceof UnparsableBody) {
      return sendValidationError(reply, [jsonDecodeDetail(request.body.raw, request.body.position)]);
    }
    const spec = request.routeSpec;
    if (!spec) return;
    const given = { body: request.body, query: request.query };
    const { body, query } = strict ? given : adaptProviderRequest(spec, given);
    const result = checkRequest(spec, { body, query, params: request.params, headers: request.headers });
    if (!result.ok) return sendValidationError(reply, result.detail);
    if (faults.active && request.body !== undefined) {
      const rejected = faults.rejection(
        spec.operationId,
        request.routeOptions.url ?? '',
        JSON.stringify(request.body),
      );
      if (rejected) {
        return sendValidationError(reply, [
          {
            loc: ['body'],
            msg: `injected fault: the service refuses "${rejected.bodyContains ?? 'this request'}"`,
            type: 'value_error',
          },
        ]);
      }
    }
    request.checked = { body: result.body, query: result.query, params: result.params };
  });

  // Every answer but the admin routes' goes into the traffic journal (`GET /_admin/traffic`).
  app.addHook('onResponse', async (request, reply) => {
    if (request.url.startsWith(ADMIN_PREFIX)) return;
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    traffic.record(
      method,
      request.routeOptions.url ?? '(no route)',
      reply.statusCode,
      performance.now() - request.startedAt,
    );
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const fault = request.pendingFault;
    if (!fault) return payload;
    request.pendingFault = null;
    const text =
      typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
    if (fault.kind === 'malformed') {
      // Status 200 and a JSON content type, but not JSON.
      return `${text.slice(0, Math.floor(text.length / 2))}<<injected: malformed body`;
    }
    // truncate: announce the full length, send half, then drop the connection.
    const bytes = Buffer.from(text);
    reply.header('content-length', bytes.length);
    let sent = false;
    return new Readable({
      read() {
        if (!sent) {
          sent = true;
          this.push(bytes.subarray(0, Math.floor(bytes.length / 2)));
          setImmediate(() => request.raw.socket?.destroy());
        }
      },
    });
  });

  app.setNotFoundHandler(routeMethods.notFound);

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status < 500) return sendJson(reply, JSON.stringify({ detail: error.message }), status);
    request.log.error({ err: error, operationId: request.routeSpec?.operationId }, 'sandbox: request failed');
    return sendJson(reply, failureBody(request, 'INTERNAL_SERVER_ERROR', 'Internal server error'), 500);
  });

  let indexesReady = false;
  void Promise.all([autocomplete, prospects, businessIndex, businessKeys, prospectKeys]).then(
    () => (indexesReady = true),
    () => undefined,
  );
  registerAdminRoutes(
    app,
    options.adminKey,
    faults,
    limiter,
    traffic,
    records,
    prospectRecords,
    () => indexesReady,
  );

  let hasEventsTable: boolean | null = null;
  // The events plugin may serve its seeded history shifted to end today; the `events` filter of business
  // fetch must see the same times as the events endpoints.
  let eventsService: EventsService | null = null;
  // The generated world's as-of day is served as today, unless the events plugin is told not to move it.
  const historyEndsToday = options.events === false || options.events?.historyEndsToday !== false;
  const asOfShift = () => (historyEndsToday ? asOfShiftMs(clock()) : 0);
  const services: SandboxServices = {
    store,
    records,
    autocomplete,
    prospects,
    businessIndex,
    matchKeys: () => loadedKeys,
    prospectKeys: () => loadedProspectKeys,
    prospectRecords,
    recentProspects: new RecentRecords(options.prospectCacheBytes ?? 8 * 1024 * 1024),
    prospectTotals: new SearchTotals(),
    clock,
    asOfShiftMs: asOfShift,
    eventsCondition: async () => {
      if (hasEventsTable !== true) {
        const rows = await store.query(
          "SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'events'",
        );
        hasEventsTable = Number(rows[0]?.n ?? 0) > 0;
      }
      if (!hasEventsTable) return undefined;
      const shiftMs = eventsService?.generatedShiftMs() ?? asOfShift();
      return (types: readonly string[], sinceIso: string, params: SqlParams) => {
        const since = params.bind(sinceIso.replace('Z', ''));
        const shift = params.bind(Math.round(shiftMs / 1000));
        return `b.business_id IN (SELECT business_id FROM events WHERE event_name IN ${params.list([...types])}
          AND event_time + CASE WHEN origin = 'generated' THEN to_seconds(${shift}) ELSE INTERVAL 0 SECOND END >= CAST(${since} AS TIMESTAMP))`;
      };
    },
  };
  registerSandboxRoutes(app, services, options.publicUrl ? { serverUrl: options.publicUrl } : {});

  if (eventsEnabled) {
    const eventsOptions = options.events === false || options.events === undefined ? {} : options.events;
    await app.register(eventsPlugin, {
      ...eventsOptions,
      db: store.instance,
      clock,
      logger,
      ...(options.adminKey !== undefined ? { adminKey: options.adminKey } : {}),
      responseContext: (request, _reply, status) => responseContext(request, status),
      onService: (service) => {
        eventsService = service;
        if (eventsOptions.onService) eventsOptions.onService(service);
      },
    });
  }

  app.addHook('onClose', async () => {
    for (const request of hanging) request.raw.socket?.destroy();
    records.close();
    prospectRecords.close();
    await Promise.all([records.settle(), prospectRecords.settle()]);
    await Promise.allSettled([autocomplete, prospects, businessIndex, businessKeys, prospectKeys]);
    store.close();
  });
  logger.info(
    {
      dataDir: options.dataDir,
      seed: store.meta.seed,
      businesses: store.meta.businesses,
      prospects: store.meta.prospects,
      generated: store.meta.generated,
    },
    'sandbox: ready',
  );
  return app;
}

function registerAdminRoutes(
  app: FastifyInstance,
  adminKey: string | undefined,
  faults: FaultInjector,
  limiter: SlidingWindowLimiter | null,
  traffic: TrafficJournal,
  records: DatasetRecords,
  prospectRecords: DatasetRecords<ProspectDataset>,
  indexesReady: () => boolean,
): void {
  const isAdmin = (request: FastifyRequest) => {
    const given = request.headers[ADMIN_KEY_HEADER];
    return adminKey !== undefined && typeof given === 'string' && safeEqual(given, adminKey);
  };
  const forbidden = (reply: FastifyReply) =>
    sendJson(reply, JSON.stringify({ detail: 'admin key required' }), 403);
  const faultConfigValidator = compiledValidator(FaultConfigSchema);

  app.get(`${ADMIN_PREFIX}/status`, async (request, reply) => {
    if (!isAdmin(request)) return forbidden(reply);
    const memory = process.memoryUsage();
    return reply.send({
      indexes_ready: indexesReady(),
      datasets_in_memory: BULK_DATASETS.filter((dataset) => records.isLoaded(dataset)),
      prospect_datasets_in_memory: PROSPECT_DATASETS.filter((dataset) => prospectRecords.isLoaded(dataset)),
      rss_bytes: memory.rss,
      heap_used_bytes: memory.heapUsed,
      heap_total_bytes: memory.heapTotal,
      external_bytes: memory.external,
      array_buffers_bytes: memory.arrayBuffers,
    });
  });
  app.get(`${ADMIN_PREFIX}/faults`, async (request, reply) =>
    isAdmin(request) ? reply.send(faults.describe()) : forbidden(reply),
  );
  app.put(`${ADMIN_PREFIX}/faults`, async (request, reply) => {
    if (!isAdmin(request)) return forbidden(reply);
    if (request.body instanceof UnparsableBody)
      return sendValidationError(reply, [jsonDecodeDetail(request.body.raw, request.body.position)]);
    if (!faultConfigValidator.Check(request.body)) {
      return sendValidationError(
        reply,
        schemaErrorsToDetail(faultConfigValidator.Errors(request.body), 'body', request.body),
      );
    }
    faults.configure(request.body as FaultConfig);
    return reply.send(faults.describe());
  });
  app.delete(`${ADMIN_PREFIX}/faults`, async (request, reply) => {
    if (!isAdmin(request)) return forbidden(reply);
    faults.configure({ rules: [] });
    return reply.send(faults.describe());
  });
  app.get(`${ADMIN_PREFIX}/traffic`, async (request, reply) =>
    isAdmin(request) ? reply.send(traffic.view()) : forbidden(reply),
  );
  app.delete(`${ADMIN_PREFIX}/traffic`, async (request, reply) => {
    if (!isAdmin(request)) return forbidden(reply);
    traffic.reset();
    return reply.send(traffic.view());
  });
  app.post(`${ADMIN_PREFIX}/rate-limit/reset`, async (request, reply) => {
    if (!isAdmin(request)) return forbidden(reply);
    limiter?.reset();
    return reply.send({ reset: limiter !== null });
  });
}

export type { FaultConfig, FaultRule };
export { elapsedSeconds };
