// Per-request state of the sandbox (who called, which contract route, when it started, which fault it
// drew) and the response envelope built from it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestStatus, RouteSpec, ValidationDetailItem } from '../../contract/index.js';
import type { FaultRule } from './faults.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Name of the caller's API key; set by the auth hook on (K) routes. The events plugin reads it. */
    apiKeyName: string | null;
    /** The `tenant` header, '' when absent. */
    tenant: string;
    /** performance.now() when the request arrived. */
    startedAt: number;
    /** The contract route this request is for, when it is one. */
    routeSpec: RouteSpec | null;
    /** Body, query and path values after the contract check (defaults applied). */
    checked: { body: unknown; query: unknown; params: unknown } | null;
    /** A fault applied when the response is sent (truncated or malformed body). */
    pendingFault: FaultRule | null;
  }
}

/** Seconds since the request arrived, to the microsecond. */
export function elapsedSeconds(request: FastifyRequest): number {
  return Math.round((performance.now() - request.startedAt) * 1000) / 1_000_000;
}

export interface ResponseContextBody {
  correlation_id: string;
  request_status: RequestStatus;
  time_took_in_seconds: number;
}

/** `response_context`: the request's correlation id, its status and the time taken so far. */
export function responseContext(request: FastifyRequest, status: RequestStatus): ResponseContextBody {
  return {
    correlation_id: String(request.id),
    request_status: status,
    time_took_in_seconds: elapsedSeconds(request),
  };
}

/** Sends JSON text or bytes as they are (no re-serialisation). */
export function sendJson(reply: FastifyReply, body: string | Buffer, status = 200): FastifyReply {
  return reply.code(status).type('application/json').send(body);
}

export function sendValidationError(reply: FastifyReply, detail: ValidationDetailItem[]): FastifyReply {
  return reply.code(422).type('application/json').send(JSON.stringify({ detail }));
}

/** A request body that could not be parsed as JSON, kept for the 422 answer. */
export class UnparsableBody {
  constructor(
    readonly raw: string,
    readonly position: number,
  ) {}
}

class JsonStop extends Error {
  constructor(readonly at: number) {
    super(`not JSON at ${at}`);
  }
}

/**
 * Offset of the first character at which `text` stops being JSON (its length when the text ends too
 * early), as Python's decoder reports it; V8's messages do not always carry a position.
 */
export function jsonErrorPosition(text: string): number {
  let i = 0;
  const fail = (at: number): never => {
    throw new JsonStop(at);
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i += 1;
  };
  const literal = (word: string) => {
    for (const char of word) {
      if (text[i] !== char) fail(i);
      i += 1;
    }
  };
  const string = () => {
    i += 1;
    for (;;) {
      if (i >= text.length) fail(i);
      const char = text[i] as string;
      if (char === '"') {
        i += 1;
        return;
      }
      if (char < ' ') fail(i);
      if (char === '\\') {
        const next = text[i + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail(i);
          i += 6;
        } else if (next !== undefined && '"\\/bfnrt'.includes(next)) i += 2;
        else fail(i);
      } else i += 1;
    }
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!match || match[0] === '' || match[0] === '-') fail(i);
    i += (match as RegExpExecArray)[0].length;
  };
  const value = (): void => {
    space();
    const char = text[i];
    if (char === '{') {
      i += 1;
      space();
      if (text[i] === '}') {
        i += 1;
        return;
      }
      for (;;) {
        space();
        if (text[i] !== '"') fail(i);
        string();
        space();
        if (text[i] !== ':') fail(i);
        i += 1;
        value();
        space();
        if (text[i] === ',') i += 1;
        else if (text[i] === '}') {
          i += 1;
          return;
        } else fail(i);
      }
    } else if (char === '[') {
      i += 1;
      space();
      if (text[i] === ']') {
        i += 1;
        return;
      }
      for (;;) {
        value();
        space();
        if (text[i] === ',') i += 1;
        else if (text[i] === ']') {
          i += 1;
          return;
        } else fail(i);
      }
    } else if (char === '"') string();
    else if (char === 't') literal('true');
    else if (char === 'f') literal('false');
    else if (char === 'n') literal('null');
    else if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) number();
    else fail(i);
  };
  try {
    value();
    space();
    return i < text.length ? i : text.length;
  } catch (stop) {
    return stop instanceof JsonStop ? Math.min(stop.at, text.length) : 0;
  }
}
