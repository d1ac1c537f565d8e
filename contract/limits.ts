// Numeric limits, header names and fixed values of the Data Service contract, in one place so the
// sandbox's validation, the client's fail-fast checks and the tests agree on the same numbers.

/** Interface version the contract describes (spec section 9); `GET /version/` returns it. */
export const SERVICE_VERSION = '0.2.286';

/** Business ids per `<dataset>/bulk_enrich` call: 1 to 50 (spec section 8). */
export const MIN_BULK_IDS = 1;
export const MAX_BULK_IDS = 50;

/** Items per business or prospect match call (provider document). */
export const MIN_MATCH_ITEMS = 1;
export const MAX_MATCH_ITEMS = 50;

/** Prospect fetch: records per page, at most 100 (spec section 8; the provider document says 500). */
export const MAX_PROSPECT_PAGE_SIZE = 100;
/** Business fetch: records per page (provider document; the spec is silent). */
export const MAX_BUSINESS_PAGE_SIZE = 500;
/** `size` of a fetch: maximum total records across all pages (spec section 8). */
export const MAX_FETCH_SIZE = 60_000;
/** Offset pagination never reaches past this many results of one query (provider documentation). */
export const OFFSET_CAP = 60_000;
/** Ids in a fetch's `exclude` list (provider document). */
export const MAX_EXCLUDE_IDS = 1_000;
/** Values of the prospect `job_title` filter (provider document). */
export const MAX_JOB_TITLE_VALUES = 300;

/** `response_bytes` of the payload healthcheck, at most 1,000,000 (spec section 8). */
export const MAX_RESPONSE_BYTES = 1_000_000;

/** Business ids per enrollment create/update call (provider documentation). */
export const MAX_ENROLLMENT_IDS = 20;
/** Shortest `enrollment_key` (provider document). */
export const MIN_ENROLLMENT_KEY_LENGTH = 4;
/** Business ids per `POST /v1/businesses/events` call, unique (provider document). */
export const MAX_EVENT_BUSINESS_IDS = 40;
/** Events cover roughly this many past days (provider documentation). */
export const EVENTS_LOOKBACK_DAYS = 90;

/** Longest company name in match inputs and filters (provider document). */
export const MAX_NAME_LENGTH = 256;

/** Default requests per minute per API key, shared by all endpoints (provider documentation). */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 200;
/** The rate limit counts requests in a sliding window of this many seconds. */
export const RATE_LIMIT_WINDOW_SECONDS = 60;

/** Webhook receivers reject deliveries whose `X-Timestamp` is further than this from now. */
export const WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS = 300;

/** `next_cursor` value that starts cursor pagination from the first record (provider document). */
export const CURSOR_START = 'null';

/** Header names (lower case, as Node exposes them). */
export const API_KEY_HEADER = 'api_key';
export const TENANT_HEADER = 'tenant';
export const RATE_LIMIT_LIMIT_HEADER = 'x-ratelimit-limit';
export const RATE_LIMIT_REMAINING_HEADER = 'x-ratelimit-remaining';
/** Unix seconds at which the window frees a request. */
export const RATE_LIMIT_RESET_HEADER = 'x-ratelimit-reset';
/** Seconds to wait, on a 429. */
export const RETRY_AFTER_HEADER = 'retry-after';
/**
 * The request's correlation id, on every response of the sandbox; the same value as
 * `response_context.correlation_id` when the body has an envelope. Lets a caller trace responses
 * that carry no envelope (autocomplete, healthchecks, version, 422 bodies).
 */
export const CORRELATION_ID_HEADER = 'x-correlation-id';
/** Webhook delivery headers (reference README). */
export const WEBHOOK_TIMESTAMP_HEADER = 'x-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'x-signature';
