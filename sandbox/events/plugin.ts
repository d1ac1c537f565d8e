// The events endpoints of the sandbox as one fastify plugin: enrollments, events fetch, webhooks, and
// admin routes to emit events and inspect the delivery outbox. Requests are checked against the
// contract's route table, so 422 bodies match every other endpoint. It runs the EventsService
// (outbox worker, simulated stream) for the life of the app.
import { timingSafeEqual } from 'node:crypto';
import type { DuckDBInstance } from '@duckdb/node-api';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { BusinessEventTypeSchema } from '../../contract/enums.js';
import { ROUTES, type RouteSpec } from '../../contract/routes.js';
import {
  BusinessIdSchema,
  StrictObject,
  type ResponseContext,
  type ValidationDetailItem,
} from '../../contract/schemas/common.js';
import {
  checkRequest,
  compiledValidator,
  schemaErrorsToDetail,
  type RequestPart,
} from '../../contract/validation.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import type { DeliveryOptions } from './delivery.js';
import { EventsService, InvalidEventTimeError, NoBusinessesError } from './service.js';
import type { EventScope, WebhookRecord } from './store.js';

export interface EventsPluginOptions {
  /** The sandbox database; the plugin opens its own connection and creates missing events tables. */
  db: DuckDBInstance;
  /** Epoch milliseconds; default Date.now. */
  clock?: () => number;
  logger?: Logger;
  /** Simulated new events per minute; 0 (default) = off. */
  emitRatePerMinute?: number;
  deliveryOptions?: DeliveryOptions;
  /** Serve the seeded history shifted to end today (see `EventsServiceOptions`); default true. */
  historyEndsToday?: boolean;
  /** The caller's scope (key name + tenant); runs after the sandbox's auth hook. Default: `request.apiKeyName`
   * and the `tenant` header. */
  scopeOf?: (request: FastifyRequest) => EventScope;
  /** Whether a request may use the admin routes; default: header `x-admin-key` equals `adminKey`. */
  isAdmin?: (request: FastifyRequest) => boolean;
  adminKey?: string;
  /** Prefix of the admin routes; default `/_admin`. */
  adminPrefix?: string;
  /** The `response_context` of a reply; default: correlation id = request id, measured time. */
  responseContext?: (
    request: FastifyRequest,
    reply: FastifyReply,
    status: ResponseContext['request_status'],
  ) => ResponseContext;
  /** Receives the running service once started (for the CLI and tests). */
  onService?: (service: EventsService) => void;
}

export const ADMIN_KEY_HEADER = 'x-admin-key';

const EmitEventsRequestSchema = StrictObject(
  {
    events: Type.Array(
      StrictObject({
        business_id: Type.Optional(BusinessIdSchema),
        event_name: Type.Optional(BusinessEventTypeSchema),
        event_time: Type.Optional(Type.String({ format: 'date-time' })),
        data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      }),
      { minItems: 1, maxItems: 1_000 },
    ),
  },
  { title: 'EmitEventsRequest' },
);

const DeliveriesQuerySchema = StrictObject({
  event_id: Type.Optional(Type.String()),
  status: Type.Optional(
    Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('abandoned')]),
  ),
});

type Checked<T> = { ok: true; value: T } | { ok: false };

/** Checks a request against its contract route; on failure answers 422 with the FastAPI detail. */
function checkRoute<R extends RouteSpec>(
  route: R,
  request: FastifyRequest,
  reply: FastifyReply,
): Checked<{ body: unknown; params: unknown }> {
  const result = checkRequest(route, {
    body: request.body,
    query: request.query,
    params: request.params,
    headers: request.headers,
  });
  if (!result.ok) {
    void reply.code(422).send({ detail: result.detail });
    return { ok: false };
  }
  return { ok: true, value: { body: result.body, params: result.params } };
}

/** Checks one part of an admin request against a schema, answering 422 the same way. */
function checkPart<S extends TSchema>(
  schema: S,
  value: unknown,
  part: RequestPart,
  reply: FastifyReply,
): Checked<Static<S>> {
  const validator = compiledValidator(schema);
  if (validator.Check(value)) return { ok: true, value: value as Static<S> };
  void reply.code(422).send({ detail: schemaErrorsToDetail(validator.Errors(value), part, value) });
  return { ok: false };
}

function validationFailure(reply: FastifyReply, detail: ValidationDetailItem[]) {
  return reply.code(422).send({ detail });
}

/** Reads a `timestamp_from`/`timestamp_to` bound: a date means midnight UTC (end of that day for `to`),
 * a date-time without zone means UTC. Undefined for null/absent, NaN when it names no real instant. */
export function parseEventTimeBound(value: string | null | undefined, end: boolean): number | undefined {
  if (value === null || value === undefined) return undefined;
  // Date.parse rolls 2025-02-30 over to March; a calendar date that does not exist is an error.
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return Number.NaN;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const midnight = Date.parse(`${value}T00:00:00Z`);
    return end ? midnight + 86_399_999 : midnight;
  }
  let text = value.replace(' ', 'T');
  if (!/(Z|[+-]\d{2}:?\d{2})$/.test(text)) text += 'Z';
  text = text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  return Date.parse(text);
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Reads the scope the sandbox's auth hook leaves on the request. */
function defaultScopeOf(request: FastifyRequest): EventScope {
  const keyName = (request as FastifyRequest & { apiKeyName?: unknown }).apiKeyName;
  if (typeof keyName !== 'string')
    throw new Error('events plugin: no api key name on the request (auth hook missing)');
  const tenant = request.headers.tenant;
  return { keyName, tenant: typeof tenant === 'string' ? tenant : '' };
}

export async function eventsPlugin(app: FastifyInstance, options: EventsPluginOptions): Promise<void> {
  const service = await EventsService.start({
    db: options.db,
    ...(options.clock ? { clock: options.clock } : {}),
    logger: options.logger ?? silentLogger,
    emitRatePerMinute: options.emitRatePerMinute ?? 0,
    deliveryOptions: options.deliveryOptions ?? {},
    historyEndsToday: options.historyEndsToday ?? true,
  });
  // onClose (not preClose) lets in-flight requests finish first; fastify runs a plugin's onClose
  // before its parent's, so the sandbox's database is still open here.
  app.addHook('onClose', () => service.stop());
  options.onService?.(service);

  const { store } = service;
  const scopeOf = options.scopeOf ?? defaultScopeOf;
  const adminKey = options.adminKey;
  const isAdmin =
    options.isAdmin ??
    ((request: FastifyRequest) => {
      const given = request.headers[ADMIN_KEY_HEADER];
      return adminKey !== undefined && typeof given === 'string' && safeEqual(given, adminKey);
    });
  const context =
    options.responseContext ??
    ((request: FastifyRequest, reply: FastifyReply, status: ResponseContext['request_status']) => ({
      correlation_id: String(request.id),
      request_status: status,
      time_took_in_seconds: Math.round(reply.elapsedTime) / 1000,
    }));
  const notFound = (reply: FastifyReply, what: string) =>
    reply.code(404).send({ detail: `${what} not found` });
  const webhookBody = (request: FastifyRequest, reply: FastifyReply, record: WebhookRecord) => ({
    response_context: context(request, reply, 'success'),
    created_at: record.created_at,
    last_modified_time: record.last_modified_time,
    webhook_url: record.webhook_url,
    webhook_secret: record.webhook_secret,
  });

  // ---- enrollments ----

  app.get(ROUTES.listEnrollments.path, async (request, reply) => {
    if (!checkRoute(ROUTES.listEnrollments, request, reply).ok) return reply;
    const enrollments = await store.listEnrollments(scopeOf(request));
    return { response_context: context(request, reply, 'success'), enrollments };
  });

  app.post(ROUTES.createEnrollments.path, async (request, reply) => {
    const checked = checkRoute(ROUTES.createEnrollments, request, reply);
    if (!checked.ok) return reply;
    const body = checked.value.body as Static<typeof ROUTES.createEnrollments.body>;
    const record = await store.addEnrollment(scopeOf(request), body, service.now());
    return {
      response_context: context(request, reply, 'success'),
      enrollment_key: record.enrollment_key,
      enrollment_id: record.enrollment_id,
    };
  });

  app.patch(ROUTES.updateEnrollments.path, async (request, reply) => {
    const checked = checkRoute(ROUTES.updateEnrollments, request, reply);
    if (!checked.ok) return reply;
    const { enrollment_id: id, ...input } = checked.value.body as Static<
      typeof ROUTES.updateEnrollments.body
    >;
    const record = await store.updateEnrollment(scopeOf(request), id, input, service.now());
    if (!record) return notFound(reply, 'Enrollment');
    return {
      response_context: context(request, reply, 'success'),
      enrollment_key: record.enrollment_key,
      enrollment_id: record.enrollment_id,
    };
  });

  app.delete(ROUTES.deleteEnrollments.path, async (request, reply) => {
    const checked = checkRoute(ROUTES.deleteEnrollments, request, reply);
    if (!checked.ok) return reply;
    const body = checked.value.body as Static<typeof ROUTES.deleteEnrollments.body>;
    if (!(await store.deleteEnrollment(scopeOf(request), body.enrollment_id)))
      return notFound(reply, 'Enrollment');
    return { response_context: context(request, reply, 'success'), status: 'success' as const };
  });

  // ---- events ----

  app.post(ROUTES.fetchEvents.path, async (request, reply) => {
    const checked = checkRoute(ROUTES.fetchEvents, request, reply);
    if (!checked.ok) return reply;
    const body = checked.value.body as Static<typeof ROUTES.fetchEvents.body>;
    const fromMs = parseEventTimeBound(body.timestamp_from, false);
    const toMs = parseEventTimeBound(body.timestamp_to, true);
    const detail: ValidationDetailItem[] = [];
    if (fromMs !== undefined && Number.isNaN(fromMs)) {
      detail.push({
        loc: ['body', 'timestamp_from'],
        msg: 'invalid datetime format',
        type: 'value_error.datetime',
      });
    }
    if (toMs !== undefined && Number.isNaN(toMs)) {
      detail.push({
        loc: ['body', 'timestamp_to'],
        msg: 'invalid datetime format',
        type: 'value_error.datetime',
      });
    }
    if (detail.length > 0) return validationFailure(reply, detail);
    // Every stored event is a business event; asking this endpoint for prospect events finds none.
    const data =
      body.entity_type === 'prospect'
        ? []
        : await store.fetchEvents({
            businessIds: body.business_ids,
            eventTypes: body.event_types,
            fromMs,
            toMs,
            generatedShiftMs: service.generatedShiftMs(),
          });
    return {
      response_context: context(request, reply, data.length > 0 ? 'success' : 'miss'),
      total_results: data.length,
      data,
    };
  });

  // ---- webhooks ----

  app.post(ROUTES.registerWebhook.path, async (request, reply) => {
    const checked = checkRoute(ROUTES.registerWebhook, request, reply);
    if (!checked.ok) return reply;
    const { partner_id: partnerId, webhook_url: url } = checked.value.body as Static<
      typeof ROUTES.registerWebhook.body
    >;
    if (!isHttpUrl(url)) {
      return validationFailure(reply, [
        { loc: ['body', 'webhook_url'], msg: 'invalid or missing URL host', type: 'value_error.url.host' },
      ]);
    }
    const record = await store.registerWebhook(scopeOf(request), partnerId, url, service.now());
    return webhookBody(request, reply, record);
  });

  app.get(ROUTES.getWebhook.path, async (request, reply) => {
    const checked = checkRoute(ROUTES.getWebhook, request, reply);
    if (!checked.ok) return reply;
    const { partner_id: partnerId } = checked.value.params as Static<typeof ROUTES.getWebhook.params>;
    const record = await store.getWebhook(scopeOf(request), partnerId);
    return record ? webhookBody(request, reply, record) : notFound(reply, 'Webhook');
  });

  app.delete(ROUTES.deleteWebhook.path, async (request, reply) => {
    const checked = checkRoute(ROUTES.deleteWebhook, request, reply);
    if (!checked.ok) return reply;
    const { partner_id: partnerId } = checked.value.params as Static<typeof ROUTES.deleteWebhook.params>;
    if (!(await store.deleteWebhook(scopeOf(request), partnerId))) return notFound(reply, 'Webhook');
    return { response_context: context(request, reply, 'success') };
  });

  // ---- admin ----

  const adminPrefix = options.adminPrefix ?? '/_admin';
  const requireAdmin = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!isAdmin(request)) await reply.code(403).send({ detail: 'Admin key required' });
  };

  app.post(`${adminPrefix}/events`, { preHandler: requireAdmin }, async (request, reply) => {
    const checked = checkPart(EmitEventsRequestSchema, request.body, 'body', reply);
    if (!checked.ok) return reply;
    try {
      return await service.emit(checked.value.events, 'admin');
    } catch (error) {
      if (error instanceof NoBusinessesError) {
        return validationFailure(reply, [
          {
            loc: ['body', 'events'],
            msg: 'no businesses to pick from; give business_id',
            type: 'value_error',
          },
        ]);
      }
      if (error instanceof InvalidEventTimeError) {
        return validationFailure(reply, [
          { loc: ['body', 'events'], msg: error.message, type: 'value_error.datetime' },
        ]);
      }
      throw error;
    }
  });

  app.get(`${adminPrefix}/events/deliveries`, { preHandler: requireAdmin }, async (request, reply) => {
    const checked = checkPart(DeliveriesQuerySchema, request.query, 'query', reply);
    if (!checked.ok) return reply;
    const deliveries = await store.listDeliveries({
      eventId: checked.value.event_id,
      status: checked.value.status,
    });
    return { deliveries };
  });
}
