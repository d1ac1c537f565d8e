// The typed client's public types: its options, a call's options, and what a call returns, with the
// request and response types of each operation derived from the contract's schemas.
import type { Static, TSchema } from 'typebox';
import type { OperationName, Routes } from '../contract/index.js';
import type { Logger } from '../lib/logger.js';
import type { RateLimitInfo } from './wire.js';

export interface DataServiceClientOptions {
  /** Base address, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  baseUrl: string;
  /** Sent in the `api_key` header; never logged nor put in errors. */
  apiKey: string;
  /** Default `tenant` header of every call that accepts one; a call's own `tenant` wins. */
  tenant?: string;
  /** Maximum open connections to the origin. Default 16. */
  connections?: number;
  /** Milliseconds to establish a TCP connection before `RequestTimeoutError` (phase `connect`). Default 10,000 ms. */
  connectTimeoutMs?: number;
  /** Milliseconds from sending a request to receiving all response headers (phase `headers`). Default 30,000 ms. */
  headersTimeoutMs?: number;
  /** Milliseconds allowed between two chunks of a response body (phase `body`); 0 disables it. Default 30,000 ms. */
  bodyTimeoutMs?: number;
  /** Milliseconds an idle kept-alive connection stays open, unless the server hints shorter. Default 10,000 ms. */
  keepAliveTimeoutMs?: number;
  /** Largest response body accepted, in bytes; larger gives `MalformedResponseError` (`too-large`). Default 32 MiB. */
  maxResponseBytes?: number;
  /** Check 200 bodies against the contract (a mismatch is a `MalformedResponseError`). Default true. */
  validateResponses?: boolean;
  /**
   * Refuse requests the contract rejects without sending them (`ValidationError`, `sent: false`).
   * Default true; false leaves the verdict to the service's 422, as tests of the service do.
   */
  validateRequests?: boolean;
  /** Debug lines per call (operation, status, correlation id, milliseconds). Default: silent. */
  logger?: Logger;
}

export interface CallOptions {
  /** `tenant` header of this call, overriding the client's. */
  tenant?: string;
  /** Aborts the call; gives `RequestTimeoutError` with phase `aborted`. */
  signal?: AbortSignal;
  /** Overall deadline of this call in milliseconds, on top of the per-phase timeouts. No default. */
  timeoutMs?: number;
}

/** A typed 200 body and what the response said about it. */
export interface ApiResponse<T> {
  body: T;
  status: number;
  /** `X-Correlation-Id` header, else `response_context.correlation_id`. */
  correlationId: string | undefined;
  /** Absent when the response carries no rate-limit headers (operations without a key). */
  rateLimit: RateLimitInfo | undefined;
}

/** The static type of a route's `body`, `querystring` or `response` schema. */
export type SchemaOf<R, K extends string> = R extends { readonly [P in K]: infer S extends TSchema }
  ? Static<S>
  : never;
/** Request body type of an operation. */
export type RequestBody<K extends OperationName> = SchemaOf<Routes[K], 'body'>;
/** Query type of an operation. */
export type RequestQuery<K extends OperationName> = SchemaOf<Routes[K], 'querystring'>;
/** 200 body type of an operation. */
export type ResponseBody<K extends OperationName> = SchemaOf<Routes[K], 'response'>;
