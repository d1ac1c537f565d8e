// Typed client of the Data Service over undici: one connection pool per origin with keep-alive,
// requests checked against the contract before they are sent, responses checked after, and every
// failure turned into one of the named errors of ./errors.ts. It never retries: Temporal does.
import { Pool } from 'undici';
import type { IncomingHttpHeaders } from 'undici/types/header.js';
import {
  API_KEY_HEADER,
  BULK_ENRICH_ROUTES,
  checkRequest,
  checkResponse,
  CORRELATION_ID_HEADER,
  HttpValidationErrorSchema,
  InsufficientCreditsBodySchema,
  PROSPECT_BULK_ENRICH_ROUTES,
  ROUTES,
  TENANT_HEADER,
  type BulkDataset,
  type BulkEnrichRequest,
  type BulkEnrichResponse,
  type ProspectBulkEnrichRequest,
  type ProspectBulkEnrichResponse,
  type ProspectDataset,
  type RouteSpec,
} from '../contract/index.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import type { DataServiceError } from './errors.js';
import {
  AuthError,
  InsufficientCreditsError,
  MalformedResponseError,
  NotFoundError,
  RateLimitedError,
  RequestRejectedError,
  ServerError,
  ValidationError,
  type DataServiceErrorContext,
} from './errors.js';
import type {
  ApiResponse,
  CallOptions,
  DataServiceClientOptions,
  RequestBody,
  RequestQuery,
  ResponseBody,
  SchemaOf,
} from './types.js';
import {
  bodyFailure,
  headerValue,
  parseJson,
  parseRateLimit,
  requestFailure,
  retryAfterMs,
  scalarText,
} from './wire.js';

export type * from './types.js';
export { parseRateLimit, retryAfterMs, type RateLimitInfo } from './wire.js';

interface CallInput {
  body?: unknown;
  query?: Record<string, unknown>;
  params?: Record<string, unknown>;
}

const DEFAULTS = {
  connections: 16,
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  keepAliveTimeoutMs: 10_000,
  maxResponseBytes: 32 * 1024 * 1024,
};

export class DataServiceClient {
  private readonly pool: Pool;
  private readonly pathPrefix: string;
  private readonly apiKey: string;
  private readonly tenant: string | undefined;
  private readonly validateResponses: boolean;
  private readonly validateRequests: boolean;
  private readonly logger: Logger;
  /** The origin requests go to, e.g. `http://127.0.0.1:8080`. */
  readonly origin: string;

  constructor(options: DataServiceClientOptions) {
    const url = new URL(options.baseUrl);
    this.origin = url.origin;
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.tenant = options.tenant;
    this.validateResponses = options.validateResponses ?? true;
    this.validateRequests = options.validateRequests ?? true;
    this.logger = options.logger ?? silentLogger;
    this.pool = new Pool(this.origin, {
      connections: options.connections ?? DEFAULTS.connections,
      connect: { timeout: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs },
      headersTimeout: options.headersTimeoutMs ?? DEFAULTS.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs ?? DEFAULTS.bodyTimeoutMs,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULTS.keepAliveTimeoutMs,
      maxResponseSize: options.maxResponseBytes ?? DEFAULTS.maxResponseBytes,
    });
  }

  /** Closes the pool once in-flight calls finish. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  // ---- operations --------------------------------------------------------------------------------

  /** `GET /healthcheck/http`: liveness; sent without the key. */
  healthcheck(options?: CallOptions): Promise<ApiResponse<ResponseBody<'healthcheck'>>> {
    return this.call(ROUTES.healthcheck, {}, options);
  }

  /** `GET /healthcheck/http_payload/{response_bytes}`: a JSON string of `responseBytes` bytes (≤ 1,000,000). */
  healthcheckPayload(
    responseBytes: number,
    options?: CallOptions,
  ): Promise<ApiResponse<ResponseBody<'healthcheckPayload'>>> {
    return this.call(ROUTES.healthcheckPayload, { params: { response_bytes: responseBytes } }, options);
  }

  /** `GET /version/`: the service version, e.g. `"0.2.286"`. */
  version(options?: CallOptions): Promise<ApiResponse<ResponseBody<'version'>>> {
    return this.call(ROUTES.version, {}, options);
  }

  /** `POST /v1/businesses/match`: 1–50 attribute sets → ids, same order, `business_id: null` when unmatched. */
  matchBusinesses(body: RequestBody<'matchBusinesses'>, options?: CallOptions) {
    return this.call(ROUTES.matchBusinesses, { body }, options);
  }

  /** `POST /v1/businesses`: businesses by filters; offset pages, or cursor pages when `next_cursor` is a string. */
  fetchBusinesses(body: RequestBody<'fetchBusinesses'>, options?: CallOptions) {
    return this.call(ROUTES.fetchBusinesses, { body }, options);
  }

  /** `POST /v1/businesses/stats`: counts of the businesses matching filters. */
  businessStats(body: RequestBody<'businessStats'>, options?: CallOptions) {
    return this.call(ROUTES.businessStats, { body }, options);
  }

  /** `GET /v1/businesses/autocomplete`: valid values of a filter field. */
  autocomplete(query: RequestQuery<'autocomplete'>, options?: CallOptions) {
    return this.call(ROUTES.autocomplete, { query }, options);
  }

  /** `POST /v1/businesses/events`: events of up to 40 businesses. */
  fetchEvents(body: RequestBody<'fetchEvents'>, options?: CallOptions) {
    return this.call(ROUTES.fetchEvents, { body }, options);
  }

  /** `GET /v1/businesses/events/enrollments`: the enrollments of this key and tenant. */
  listEnrollments(options?: CallOptions) {
    return this.call(ROUTES.listEnrollments, {}, options);
  }

  /** `POST /v1/businesses/events/enrollments`: enroll up to 20 businesses for event types. */
  createEnrollments(body: RequestBody<'createEnrollments'>, options?: CallOptions) {
    return this.call(ROUTES.createEnrollments, { body }, options);
  }

  /** `PATCH /v1/businesses/events/enrollments`: replace an enrollment's key, event types and businesses. */
  updateEnrollments(body: RequestBody<'updateEnrollments'>, options?: CallOptions) {
    return this.call(ROUTES.updateEnrollments, { body }, options);
  }

  /** `DELETE /v1/businesses/events/enrollments`: delete an enrollment. */
  deleteEnrollments(body: RequestBody<'deleteEnrollments'>, options?: CallOptions) {
    return this.call(ROUTES.deleteEnrollments, { body }, options);
  }

  /** `POST /v1/businesses/company_hierarchies/enrich`: the hierarchy record of one business. */
  enrichHierarchy(body: RequestBody<'enrichHierarchy'>, options?: CallOptions) {
    return this.call(ROUTES.enrichHierarchy, { body }, options);
  }

  /** `POST /v1/businesses/<dataset>/bulk_enrich`: one dataset's records for 1–50 businesses. */
  bulkEnrich<D extends BulkDataset>(
    dataset: D,
    body: BulkEnrichRequest<D>,
    options?: CallOptions,
  ): Promise<ApiResponse<BulkEnrichResponse<D>>> {
    const route: RouteSpec | undefined = BULK_ENRICH_ROUTES[dataset];
    if (!route) {
      const detail = [
        { loc: ['path', 'dataset'], msg: `unknown dataset ${String(dataset)}`, type: 'type_error.enum' },
      ];
      return Promise.reject(new ValidationError(detail, false, { operationId: 'bulkEnrich' }));
    }
    return this.call(route, { body }, options) as Promise<ApiResponse<BulkEnrichResponse<D>>>;
  }

  /**
   * `POST /v1/prospects/<dataset>/bulk_enrich` (a provider operation beyond spec 0.2.286): one prospect
   * dataset's records (`profiles`, `contacts_information`, `network_posts`) for 1–50 prospects.
   */
  bulkEnrichProspects<D extends ProspectDataset>(
    dataset: D,
    body: ProspectBulkEnrichRequest<D>,
    options?: CallOptions,
  ): Promise<ApiResponse<ProspectBulkEnrichResponse<D>>> {
    const route: RouteSpec | undefined = PROSPECT_BULK_ENRICH_ROUTES[dataset];
    if (!route) {
      const detail = [
        { loc: ['path', 'dataset'], msg: `unknown dataset ${String(dataset)}`, type: 'type_error.enum' },
      ];
      return Promise.reject(new ValidationError(detail, false, { operationId: 'bulkEnrichProspects' }));
    }
    return this.call(route, { body }, options) as Promise<ApiResponse<ProspectBulkEnrichResponse<D>>>;
  }

  /** `POST /v1/prospects/match`: 1–50 attribute sets → prospect ids, same order. */
  matchProspects(body: RequestBody<'matchProspects'>, options?: CallOptions) {
    return this.call(ROUTES.matchProspects, { body }, options);
  }

  /** `POST /v1/prospects`: prospects by the filters of spec 2.7; `page_size` ≤ 100, `size` ≤ 60,000. */
  fetchProspects(body: RequestBody<'fetchProspects'>, options?: CallOptions) {
    return this.call(ROUTES.fetchProspects, { body }, options);
  }

  /** `POST /v1/prospects/network_posts/enrich`: the posts record of one prospect. */
  enrichProspectPosts(body: RequestBody<'enrichProspectPosts'>, options?: CallOptions) {
    return this.call(ROUTES.enrichProspectPosts, { body }, options);
  }

  /** `POST /v1/webhooks`: register or replace the partner's webhook; the response holds the new secret. */
  registerWebhook(body: RequestBody<'registerWebhook'>, options?: CallOptions) {
    return this.call(ROUTES.registerWebhook, { body }, options);
  }

  /** `GET /v1/webhooks/{partner_id}`: the partner's registration; `NotFoundError` when there is none. */
  getWebhook(partnerId: string, options?: CallOptions) {
    return this.call(ROUTES.getWebhook, { params: { partner_id: partnerId } }, options);
  }

  /** `DELETE /v1/webhooks/{partner_id}`: remove the partner's webhook. */
  deleteWebhook(partnerId: string, options?: CallOptions) {
    return this.call(ROUTES.deleteWebhook, { params: { partner_id: partnerId } }, options);
  }

  // ---- the one way a call is made ------------------------------------------------------------------

  private async call<R extends RouteSpec>(
    route: R,
    input: CallInput,
    options: CallOptions = {},
  ): Promise<ApiResponse<SchemaOf<R, 'response'>>> {
    const operationId = route.operationId;
    if (this.validateRequests) {
      const checked = checkRequest(route, input);
      if (!checked.ok) throw new ValidationError(checked.detail, false, { operationId });
    }

    const path = this.pathOf(route, input.params, input.query);
    const label = `${route.method} ${route.path}`;
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': 'enrichflow-data-service-client',
    };
    // The key goes only to (K) operations, so that health probes never carry it.
    if (route.auth) headers[API_KEY_HEADER] = this.apiKey;
    const tenant = options.tenant ?? this.tenant;
    if (route.tenant && tenant !== undefined) headers[TENANT_HEADER] = tenant;
    let payload: string | undefined;
    if (route.body) {
      payload = JSON.stringify(input.body);
      headers['content-type'] = 'application/json';
    }
    // One controller per call, aborted by the caller's signal or by the call's deadline. Not
    // AbortSignal.any over AbortSignal.timeout: the composite holds its sources weakly, so a timeout
    // signal nothing else references can be collected before it fires, and a hung call then waits
    // for the 30 s headers timeout (seen in bench:faults).
    const controller = new AbortController();
    const caller = options.signal;
    const onAbort = () => controller.abort(caller?.reason);
    if (caller?.aborted) onAbort();
    else caller?.addEventListener('abort', onAbort, { once: true });
    const deadline =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(
            () => controller.abort(new DOMException('call deadline passed', 'TimeoutError')),
            options.timeoutMs,
          );
    const signal = caller || deadline ? controller.signal : undefined;
    const settle = () => {
      clearTimeout(deadline);
      caller?.removeEventListener('abort', onAbort);
    };

    const started = performance.now();
    let response: Awaited<ReturnType<Pool['request']>>;
    try {
      response = await this.pool.request({ method: route.method, path, headers, body: payload, signal });
    } catch (error) {
      settle();
      throw requestFailure(error, label, { operationId });
    }

    const status = response.statusCode;
    const correlationHeader = headerValue(response.headers, CORRELATION_ID_HEADER);
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw bodyFailure(error, label, { operationId, status, correlationId: correlationHeader });
    } finally {
      settle();
    }
    const parsed = parseJson(text);
    const json = parsed.ok ? parsed.value : undefined;
    const correlationId =
      correlationHeader ??
      (json as { response_context?: { correlation_id?: string } } | undefined)?.response_context
        ?.correlation_id ??
      (json as { correlation_id?: string } | undefined)?.correlation_id;
    const context: DataServiceErrorContext = { operationId, status, correlationId };
    this.logger.debug(
      { operationId, status, correlationId, ms: Math.round(performance.now() - started) },
      'data service call',
    );

    if (status === 200) {
      if (!parsed.ok)
        throw new MalformedResponseError(`${label}: 200 body is not JSON`, 'invalid-json', context);
      if (this.validateResponses) {
        const result = checkResponse(route.response, json);
        if (!result.ok) {
          const errors = result.errors.slice(0, 3).join('; ');
          throw new MalformedResponseError(
            `${label}: 200 body does not match the contract: ${errors}`,
            'schema',
            context,
          );
        }
      }
      return {
        body: json as SchemaOf<R, 'response'>,
        status,
        correlationId,
        rateLimit: parseRateLimit(response.headers),
      };
    }
    throw this.statusError(status, json, response.headers, label, context);
  }

  private statusError(
    status: number,
    json: unknown,
    headers: IncomingHttpHeaders,
    label: string,
    context: DataServiceErrorContext,
  ): DataServiceError {
    const suffix = context.correlationId ? ` (correlation ${context.correlationId})` : '';
    if (status === 422) {
      if (checkResponse(HttpValidationErrorSchema, json).ok) {
        return new ValidationError((json as { detail: ValidationError['detail'] }).detail, true, context);
      }
      return new MalformedResponseError(
        `${label}: 422 without a validation body${suffix}`,
        'schema',
        context,
      );
    }
    if (status === 401)
      return new AuthError(`${label}: API key missing or not accepted (401)${suffix}`, context);
    if (status === 403) {
      if (checkResponse(InsufficientCreditsBodySchema, json).ok) {
        return new InsufficientCreditsError(`${label}: insufficient credits (403)${suffix}`, context);
      }
      return new AuthError(`${label}: forbidden (403)${suffix}`, context);
    }
    if (status === 404) return new NotFoundError(`${label}: not found (404)${suffix}`, context);
    if (status === 429) {
      const wait = retryAfterMs(headers, json);
      const after = wait === undefined ? '' : `; retry after ${wait} ms`;
      return new RateLimitedError(`${label}: rate limited (429)${after}${suffix}`, wait, context);
    }
    if (status >= 500) return new ServerError(`${label}: server error ${status}${suffix}`, context);
    return new RequestRejectedError(`${label}: unexpected status ${status}${suffix}`, context);
  }

  private pathOf(
    route: RouteSpec,
    params: Record<string, unknown> | undefined,
    query: Record<string, unknown> | undefined,
  ) {
    const path = route.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) =>
      encodeURIComponent(scalarText(params?.[name])),
    );
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) search.append(name, scalarText(value));
    }
    const qs = search.toString();
    return `${this.pathPrefix}${path}${qs ? `?${qs}` : ''}`;
  }
}
