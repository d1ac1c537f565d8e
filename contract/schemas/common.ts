// Building blocks shared by every operation: identifiers, the response envelope, request context,
// the tenant header and the error bodies (422 FastAPI/Pydantic-v1, 401, 403 credits, 429, 404).
import { Type, type Static, type TProperties, type TSchema } from 'typebox';
import { OfflineModeSchema, RequestStatusSchema } from '../enums.js';

/** `T` or JSON `null`. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** An object that rejects keys it does not name (Pydantic `Extra.forbid`). */
export function StrictObject<P extends TProperties>(
  properties: P,
  options: { title?: string; description?: string } = {},
) {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

/** An object whose fields neither the spec nor the provider document name. */
export function OpenObject(description = 'Object whose fields are not documented.') {
  return Type.Record(Type.String(), Type.Unknown(), { description });
}

/** An ISO 8601 timestamp (spec: "timestamp"); the pipeline maps it to a UTC timestamp column. */
export function Timestamp(description?: string) {
  return Type.String({ format: 'date-time', ...(description ? { description } : {}) });
}

/** Optional field that may also be null: how records mark data a business may not have. */
export function Maybe<T extends TSchema>(schema: T) {
  return Type.Optional(Nullable(schema));
}

/** Business identifier: 32 lower-case hex characters (provider document). */
export const BusinessIdSchema = Type.String({ pattern: '^[a-f0-9]{32}$', title: 'BusinessId' });
/** Prospect identifier: 40 lower-case hex characters (provider document). */
export const ProspectIdSchema = Type.String({ pattern: '^[a-f0-9]{40}$', title: 'ProspectId' });
export type BusinessId = Static<typeof BusinessIdSchema>;
export type ProspectId = Static<typeof ProspectIdSchema>;

/** `response_context` (spec 2.2). */
export const ResponseContextSchema = StrictObject(
  {
    correlation_id: Type.String(),
    request_status: RequestStatusSchema,
    time_took_in_seconds: Type.Number({ minimum: 0 }),
  },
  { title: 'ResponseContext' },
);
export type ResponseContext = Static<typeof ResponseContextSchema>;

/** `request_context` (spec 2.3): optional, default null, free-form. */
export const RequestContextField = Maybe(OpenObject('Caller metadata, echoed nowhere; default null.'));

/** Headers every operation but `/healthcheck/http` and `/version/` accepts (spec 4). */
export const TenantHeadersSchema = Type.Object({ tenant: Type.Optional(Type.String()) });
export type TenantHeaders = Static<typeof TenantHeadersSchema>;

/** One item of a 422 body: where, what, which Pydantic error type, and the limit involved. */
export const ValidationDetailItemSchema = StrictObject(
  {
    loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
    msg: Type.String(),
    type: Type.String(),
    ctx: Type.Optional(OpenObject('Values of the failed constraint, such as `limit_value`.')),
  },
  { title: 'ValidationDetailItem' },
);
export type ValidationDetailItem = Static<typeof ValidationDetailItemSchema>;

/** HTTP 422 body (FastAPI with Pydantic v1). */
export const HttpValidationErrorSchema = StrictObject(
  { detail: Type.Array(ValidationDetailItemSchema) },
  { title: 'HTTPValidationError' },
);
export type HttpValidationError = Static<typeof HttpValidationErrorSchema>;

/** HTTP 401 body: missing or unknown API key. */
export const AuthErrorBodySchema = StrictObject(
  {
    response_context: ResponseContextSchema,
    error: StrictObject({ code: Type.String(), message: Type.String() }),
  },
  { title: 'AuthErrorBody' },
);
export type AuthErrorBody = Static<typeof AuthErrorBodySchema>;
export const UNAUTHORIZED_CODE = 'UNAUTHORIZED';
export const UNAUTHORIZED_MESSAGE = 'Invalid or missing API key';

/** HTTP 403 body when the key's credits are exhausted. */
export const InsufficientCreditsBodySchema = StrictObject(
  { details: Type.String(), correlation_id: Type.String() },
  { title: 'InsufficientCreditsBody' },
);
export type InsufficientCreditsBody = Static<typeof InsufficientCreditsBodySchema>;

/** HTTP 429 body; `retry_after` in seconds, the same as the `Retry-After` header. */
export const RateLimitErrorBodySchema = StrictObject(
  { error: Type.String(), message: Type.String(), retry_after: Type.Integer({ minimum: 0 }) },
  { title: 'RateLimitErrorBody' },
);
export type RateLimitErrorBody = Static<typeof RateLimitErrorBodySchema>;
export const RATE_LIMIT_ERROR_CODE = 'rate_limit_exceeded';

/** HTTP 404 body (FastAPI style): unknown route, or an enrollment/webhook the caller does not own. */
export const NotFoundBodySchema = StrictObject({ detail: Type.String() }, { title: 'NotFoundBody' });
export type NotFoundBody = Static<typeof NotFoundBodySchema>;

/** `parameters` of posts enrichment, company (bulk) and prospect alike. */
export const NetworkPostsParametersSchema = StrictObject(
  { offline_mode: Type.Optional(OfflineModeSchema) },
  { title: 'NetworkPostsParameters' },
);
