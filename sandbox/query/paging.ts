// Offset and cursor pagination shared by business and prospect fetch. Offset pages never reach past
// `size` (at most 60,000); cursor pages walk the stable row order with an opaque cursor that remembers
// the last row and which query it belongs to, and have no cap.
import { createHash } from 'node:crypto';
import { CURSOR_START } from '../../contract/index.js';

export interface PagingRequest {
  size: number;
  page_size: number;
  page?: number | null | undefined;
  next_cursor?: string | null | undefined;
}

export type PagePlan =
  | { mode: 'offset'; page: number; offset: number; limit: number }
  | { mode: 'cursor'; after: number; limit: number };

/** Thrown when a cursor was not made by this server for this query. */
export class InvalidCursorError extends Error {
  override readonly name = 'InvalidCursorError';
  readonly code = 'INVALID_CURSOR';
}

/** A short digest of what a query selects, so a cursor cannot be replayed against another query. */
export function queryFingerprint(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 12);
}

export function encodeCursor(after: number, fingerprint: string): string {
  return Buffer.from(JSON.stringify({ a: after, q: fingerprint })).toString('base64url');
}

export function decodeCursor(cursor: string, fingerprint: string): number {
  if (cursor === CURSOR_START) return -1;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      a?: unknown;
      q?: unknown;
    };
    if (
      typeof parsed.a === 'number' &&
      Number.isInteger(parsed.a) &&
      parsed.a >= 0 &&
      parsed.q === fingerprint
    )
      return parsed.a;
  } catch {
    // fall through to the error below
  }
  throw new InvalidCursorError('next_cursor is not a cursor of this query');
}

/** How to read the requested page; `total` is the number of matching records. */
export function planPage(request: PagingRequest, fingerprint: string): PagePlan {
  if (typeof request.next_cursor === 'string') {
    return {
      mode: 'cursor',
      after: decodeCursor(request.next_cursor, fingerprint),
      limit: request.page_size,
    };
  }
  const page = request.page ?? 1;
  const offset = (page - 1) * request.page_size;
  const limit = Math.max(0, Math.min(request.page_size, request.size - offset));
  return { mode: 'offset', page, offset, limit };
}

/** total_results and total_pages of an offset response: results are capped at `size`. */
export function offsetTotals(
  request: PagingRequest,
  matching: number,
): { totalResults: number; totalPages: number } {
  const totalResults = Math.min(matching, request.size);
  return { totalResults, totalPages: Math.ceil(totalResults / request.page_size) };
}
