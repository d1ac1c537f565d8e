// What the export activities share: the client calls they make, their dependencies, the export's
// saved context and plan (cached per worker), and how a page of records is written.
import { ApplicationFailure } from '@temporalio/activity';
import { createHash } from 'node:crypto';
import type { RequestBody, ResponseBody } from '../client/client.js';
import { columnsOfSchema } from '../contract/columns.js';
import { BusinessSchema } from '../contract/schemas/businesses.js';
import { ProspectSchema } from '../contract/schemas/prospects.js';
import { type DimensionDomain, type SearchFilters } from '../pipeline/export-filters.js';
import { parseIdList } from '../pipeline/id-list.js';
import { exportLayout } from '../pipeline/export-layout.js';
import type { Logger } from '../lib/logger.js';
import type { ExportPlan, ExportRunInput, ExportTarget } from '../pipeline/export-types.js';
import type { CallResult } from './client-port.js';
import { pacedCall } from './api-pacing.js';
import { type MemoryGate, toActivityFailure } from './attempt.js';
import type { CallOptions } from './client-port.js';
import type { RunFiles } from '../storage/run-files.js';
import { type StoreResolver } from '../storage/run-files.js';
import { duckDbType } from './table-schema.js';

/** The calls of the Data Service an export makes (the undici client has them all). */
export interface ExportCalls {
  fetchProspects(
    body: RequestBody<'fetchProspects'>,
    options?: CallOptions,
  ): Promise<CallResult<ResponseBody<'fetchProspects'>>>;
  fetchBusinesses(
    body: RequestBody<'fetchBusinesses'>,
    options?: CallOptions,
  ): Promise<CallResult<ResponseBody<'fetchBusinesses'>>>;
  businessStats(
    body: RequestBody<'businessStats'>,
    options?: CallOptions,
  ): Promise<CallResult<ResponseBody<'businessStats'>>>;
  enrichProspectPosts(
    body: RequestBody<'enrichProspectPosts'>,
    options?: CallOptions,
  ): Promise<CallResult<ResponseBody<'enrichProspectPosts'>>>;
}

export interface ExportActivityDeps {
  /** The client; the worker hands in the same object the enrichment activities use. */
  calls: Partial<ExportCalls>;
  resolveStore: StoreResolver;
  logger: Logger;
  workDir?: string;
  /** The process's limit on DuckDB activities at once (shared with the other factories). */
  gate?: MemoryGate;
}

/** Thrown when an export's filters, exclude file or saved plan cannot be used: retrying cannot help. */
export class ExportSpecError extends Error {
  override readonly name = 'ExportSpecError';
  readonly code = 'EXPORT_SPEC_INVALID';
}

/** Page sort keys: slice, page and row packed in one integer (the service's order, for dedup and `size`). */
export const SLICE_STRIDE = 1_000_000_000;
export const PAGE_STRIDE = 1_000;

/** What an export's activities read from the run folder: the search, its domains and its options. */
export interface ExportContext {
  target: ExportTarget;
  filters: SearchFilters;
  dimensions: DimensionDomain[];
  exclude: string[] | undefined;
  pageSize: number;
  cap: number;
  cursor: boolean;
  fingerprint: string;
}

/**
 * DuckDB for the commit of records: one thread and 128 MB, so the worker stays under its memory budget
 * while other runs go on beside it; DuckDB spills to the scratch folder beyond that.
 */
export const COMMIT_DUCKDB = (workDir: string | undefined) => ({
  ...(workDir ? { workDir } : {}),
  memoryLimit: '128MB',
  threads: 1,
});
/** Rows per Parquet row group for records of ~1 KB: the writer holds a whole group in memory. */
export const WIDE_ROW_GROUP_ROWS = 5_000;

export const RECORD_SCHEMA = { prospects: ProspectSchema, businesses: BusinessSchema } as const;
export const ID_FIELD = { prospects: 'prospect_id', businesses: 'business_id' } as const;

/** The DuckDB struct of one record of a target, from the contract (arrays as LIST). */
export function recordStruct(target: ExportTarget): string {
  return duckDbType({ kind: 'struct', fields: columnsOfSchema(RECORD_SCHEMA[target]) });
}

export function specFailure(error: unknown): unknown {
  if (error instanceof Error && (error.name === 'JobSpecError' || error.name === 'ExportSpecError'))
    return ApplicationFailure.create({ type: error.name, message: error.message, nonRetryable: true });
  return error;
}

export function toJsonLines(values: unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join('\n') + (values.length ? '\n' : '');
}

export function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n += 1;
  return n;
}

export interface PageLines {
  /** The page as JSON lines of `{k, r}`: sort key and record. */
  text: string;
  records: number;
  total: number;
  /** The cursor page's next cursor (null at the end); undefined for an offset page. */
  nextCursor: string | null | undefined;
  rateLimit: CallResult<unknown>['rateLimit'];
}

/**
 * A page's records as the lines its file holds, and the little the workflow needs of the response.
 * Only this leaves the function: the parsed response (a few hundred KB of objects per page, 64 pages
 * in flight) becomes garbage before the page's file is written, instead of living across that write
 * and the rate-limit pause, long enough to be promoted into V8's old space.
 */
export function pageLines(
  response: CallResult<ResponseBody<'fetchProspects'> | ResponseBody<'fetchBusinesses'>>,
  base: number,
): PageLines {
  const data = response.body.data as unknown[];
  let text = '';
  for (let i = 0; i < data.length; i += 1) text += `{"k":${base + i},"r":${JSON.stringify(data[i])}}\n`;
  const page = (response.body as { page?: unknown }).page;
  return {
    text,
    records: data.length,
    total: response.body.total_results,
    nextCursor:
      page && typeof page === 'object'
        ? ((page as { next_cursor?: string | null }).next_cursor ?? null)
        : undefined,
    rateLimit: response.rateLimit,
  };
}

/** Identity of a search and the options that shape its slices: a saved plan is reused only for the same. */
export function searchFingerprint(request: ExportRunInput, pageSize: number, cap: number): string {
  const identity = JSON.stringify([
    request.target,
    request.filters,
    request.splitBy ?? null,
    request.cursor ?? true,
    pageSize,
    cap,
    request.exclude ?? null,
  ]);
  return createHash('sha256').update(identity).digest('hex').slice(0, 16);
}

export type ExportShared = ReturnType<typeof createExportShared>;

export function createExportShared(deps: ExportActivityDeps) {
  const { resolveStore } = deps;
  const contexts = new Map<string, Promise<ExportContext>>();
  const plans = new Map<string, Promise<ExportPlan>>();
  const postIdChunks = new Map<string, Promise<string[]>>();

  /** One of the client's calls, under the attempt's signal and the operation's learned deadline. */
  function call<K extends keyof ExportCalls>(name: K) {
    const fn = deps.calls[name];
    if (typeof fn !== 'function') throw new Error(`this worker's Data Service client has no ${name}`);
    const bound = fn.bind(deps.calls) as (body: unknown, options?: CallOptions) => Promise<unknown>;
    return ((body: unknown) => pacedCall(name, (options) => bound(body, options))) as ExportCalls[K];
  }

  function cached<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
    let value = cache.get(key);
    if (!value) {
      value = load();
      value.catch(() => cache.delete(key));
      cache.set(key, value);
      if (cache.size > 32) {
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
    }
    return value;
  }

  const contextOf = (files: RunFiles) =>
    cached(contexts, files.url, () => files.getJson<ExportContext>(exportLayout.spec));
  const planOf = (files: RunFiles) =>
    cached(plans, files.url, () => files.getJson<ExportPlan>(exportLayout.plan));

  function exclusion(context: ExportContext): { exclude?: string[] } {
    return context.exclude ? { exclude: context.exclude } : {};
  }

  /** One fetch call of the export's target. */
  async function fetchSearch(
    context: ExportContext,
    body: Record<string, unknown>,
  ): Promise<CallResult<ResponseBody<'fetchProspects'> | ResponseBody<'fetchBusinesses'>>> {
    return context.target === 'prospects'
      ? call('fetchProspects')(body as RequestBody<'fetchProspects'>)
      : call('fetchBusinesses')(body as RequestBody<'fetchBusinesses'>);
  }

  /** One page's call; its failure as the activity failure the workflow's retry policy reads. */
  async function fetchPageResponse(context: ExportContext, body: Record<string, unknown>) {
    try {
      return await fetchSearch(context, body);
    } catch (error) {
      throw toActivityFailure(error, { items: 1 });
    }
  }

  async function readExclude(location: string, target: ExportTarget): Promise<string[]> {
    const { store, prefix } = resolveStore(location);
    if (!(await store.exists(prefix))) throw new ExportSpecError(`${location}: no such exclude file`);
    return parseIdList((await store.getBytes(prefix)).toString('utf8'), target, location);
  }

  return {
    call,
    cached,
    contexts,
    plans,
    contextOf,
    planOf,
    exclusion,
    fetchSearch,
    fetchPageResponse,
    readExclude,
    postIdChunks,
  };
}
