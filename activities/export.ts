// The activities of search exports: count probes and stats for planning, one page per call (offset or
// cursor), one posts call per prospect, and the commit of the records table, manifest and `_SUCCESS`.
// Built over the client port, the store resolver and a logger; records stay in the object store and
// workflows see slice numbers, keys and counts.
import { ApplicationFailure } from '@temporalio/activity';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { RequestBody, ResponseBody } from '../client/client.js';
import { columnsOfSchema } from '../contract/columns.js';
import { NetworkPostsRecordSchema } from '../contract/datasets.js';
import { CURSOR_START, MAX_EXCLUDE_IDS, MAX_FETCH_SIZE } from '../contract/limits.js';
import { BusinessSchema } from '../contract/schemas/businesses.js';
import { ProspectSchema } from '../contract/schemas/prospects.js';
import {
  composeFilters,
  dimensionOutline,
  exportDimensions,
  validateExportFilters,
  type DimensionDomain,
  type SearchFilters,
} from '../pipeline/export-filters.js';
import { parseIdList } from '../pipeline/id-list.js';
import { exportLayout, POST_IDS_PER_CHUNK } from '../pipeline/export-layout.js';
import type { Logger } from '../lib/logger.js';
import type { Bound, Constraints, Count } from '../pipeline/export-slicing.js';
import { truncatedRecords } from '../pipeline/export-plan.js';
import type {
  ExportCounts,
  ExportPlan,
  ExportRecordsResult,
  ExportRunInput,
  ExportStageProgress,
  ExportSummary,
  ExportTarget,
  PageFailure,
  PreparedExport,
  SliceOutcome,
} from '../pipeline/export-types.js';
import type { RunLocation, TableSummary } from '../pipeline/run-types.js';
import type { CallResult } from './client-port.js';
import { queryRows, sqlString, withDuckDb } from '../storage/duckdb.js';
import { easeOff, pacedCall } from './api-pacing.js';
import {
  attemptNumber,
  cancellationSignal,
  disciplined,
  heartbeat,
  type MemoryGate,
  toActivityFailure,
} from './attempt.js';
import type { CallOptions } from './client-port.js';
import { writeParquetTable } from './parquet-tables.js';
import { downloadAll, RunFiles, type StoreResolver } from '../storage/run-files.js';
import { runLayout } from '../pipeline/run-layout.js';
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
const SLICE_STRIDE = 1_000_000_000;
const PAGE_STRIDE = 1_000;

/** What an export's activities read from the run folder: the search, its domains and its options. */
interface ExportContext {
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
const COMMIT_DUCKDB = (workDir: string | undefined) => ({
  ...(workDir ? { workDir } : {}),
  memoryLimit: '128MB',
  threads: 1,
});
/** Rows per Parquet row group for records of ~1 KB: the writer holds a whole group in memory. */
const WIDE_ROW_GROUP_ROWS = 5_000;

const RECORD_SCHEMA = { prospects: ProspectSchema, businesses: BusinessSchema } as const;
const ID_FIELD = { prospects: 'prospect_id', businesses: 'business_id' } as const;

/** The DuckDB struct of one record of a target, from the contract (arrays as LIST). */
function recordStruct(target: ExportTarget): string {
  return duckDbType({ kind: 'struct', fields: columnsOfSchema(RECORD_SCHEMA[target]) });
}

function specFailure(error: unknown): unknown {
  if (error instanceof Error && (error.name === 'JobSpecError' || error.name === 'ExportSpecError'))
    return ApplicationFailure.create({ type: error.name, message: error.message, nonRetryable: true });
  return error;
}

function toJsonLines(values: unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join('\n') + (values.length ? '\n' : '');
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n += 1;
  return n;
}

interface PageLines {
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
function pageLines(
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
function searchFingerprint(request: ExportRunInput, pageSize: number, cap: number): string {
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

export function createExportActivities(deps: ExportActivityDeps) {
  return disciplined(
    exportActivitiesOver(deps),
    {
      prepareExport: 'tablePlanning',
      probeCount: 'apiCall',
      measureStats: 'apiCall',
      saveExportPlan: 'bookkeeping',
      fetchPage: 'pageFetch',
      fetchCursorPage: 'pageFetch',
      finishSlice: 'bookkeeping',
      commitExportRecords: 'tableCommit',
      fetchPosts: 'pageFetch',
      commitExportPosts: 'tableCommit',
      commitExport: 'tableCommit',
    },
    ['commitExportRecords', 'commitExportPosts', 'commitExport'],
    deps.gate,
  );
}

function exportActivitiesOver(deps: ExportActivityDeps) {
  const { resolveStore, logger } = deps;
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
    /**
     * Checks the search, stores it with its slicing domains and exclude list in the run folder, and
     * returns what an earlier attempt of the same run left: its plan and its finished slices.
     */
    prepareExport: async ({
      run,
      request,
    }: {
      run: RunLocation;
      request: ExportRunInput;
    }): Promise<PreparedExport> => {
      const files = RunFiles.open(resolveStore, run);
      try {
        const filters = validateExportFilters(request.target, request.filters, 'filters');
        const dimensions = exportDimensions(request.target, filters, request.splitBy);
        const excludeIds = request.exclude ? await readExclude(request.exclude, request.target) : [];
        const sent = excludeIds.length > 0 && excludeIds.length <= MAX_EXCLUDE_IDS;
        const pageSize = request.pageSize ?? 100;
        const cap = request.offsetCap ?? MAX_FETCH_SIZE;
        const fingerprint = searchFingerprint(request, pageSize, cap);
        let plan: ExportPlan | undefined;
        if (await files.store.exists(files.key(exportLayout.plan))) {
          const saved = await files.getJson<ExportPlan & { fingerprint?: string }>(exportLayout.plan);
          if (saved.fingerprint !== fingerprint) {
            throw new ExportSpecError(
              `${files.url} holds the plan of another search; give this export another --run-key or --output`,
            );
          }
          plan = saved;
        }
        const context: ExportContext = {
          target: request.target,
          filters,
          dimensions,
          exclude: sent ? excludeIds : undefined,
          pageSize,
          cap,
          cursor: request.cursor ?? true,
          fingerprint,
        };
        await files.putJson(exportLayout.exclude, excludeIds);
        await files.putJson(exportLayout.spec, context);
        contexts.delete(files.url);
        plans.delete(files.url);
        const done: SliceOutcome[] = [];
        for (const key of await files.list(exportLayout.slicesPrefix))
          done.push(await files.getJson<SliceOutcome>(key));
        return {
          dimensions: dimensions.map(dimensionOutline),
          exclude: { ids: excludeIds.length, sent },
          ...(plan ? { plan } : {}),
          done,
        };
      } catch (error) {
        throw specFailure(error);
      }
    },

    /** One count of a slice: a one-record cursor page (exact, uncapped) or offset page (capped at the fetch size). */
    probeCount: async ({
      run,
      constraints,
    }: {
      run: RunLocation;
      constraints: Constraints;
    }): Promise<Count> => {
      const files = RunFiles.open(resolveStore, run);
      const context = await contextOf(files);
      const filters = composeFilters(context.filters, context.dimensions, constraints);
      const base = { mode: 'preview', filters, ...exclusion(context) };
      const body = context.cursor
        ? { ...base, size: 1, page_size: 1, next_cursor: CURSOR_START }
        : { ...base, size: MAX_FETCH_SIZE, page_size: 1, page: 1 };
      let response;
      try {
        response = await fetchSearch(context, body);
      } catch (error) {
        throw toActivityFailure(error, { items: 1 });
      }
      await easeOff(response.rateLimit);
      const n = response.body.total_results;
      // A service without cursor mode answers an offset page, whose total stops at `size`.
      const cursorAnswer = typeof response.body.page === 'object';
      return { n, exact: cursorAnswer || n < MAX_FETCH_SIZE };
    },

    /** Counts of a split on company size or revenue from one `stats` call (business exports). */
    measureStats: async ({
      run,
      constraints,
      field,
      bounds,
    }: {
      run: RunLocation;
      constraints: Constraints;
      field: string;
      bounds: Bound[];
    }): Promise<Count[]> => {
      const files = RunFiles.open(resolveStore, run);
      const context = await contextOf(files);
      const dimension = context.dimensions.find((d) => d.field === field);
      if (!dimension?.values) throw new ExportSpecError(`${field} is not a value dimension of this export`);
      const filters = composeFilters(context.filters, context.dimensions, constraints);
      let response;
      try {
        response = await call('businessStats')({ filters });
      } catch (error) {
        throw toActivityFailure(error, { items: 1 });
      }
      await easeOff(response.rateLimit);
      const table =
        field === 'company_size'
          ? response.body.stats.number_of_employees_per_category
          : response.body.stats.revenue_per_category;
      const perValue = new Map<string, number>();
      for (const counts of Object.values(table)) {
        for (const [value, n] of Object.entries(counts)) perValue.set(value, (perValue.get(value) ?? 0) + n);
      }
      const values = dimension.values.map(String);
      const inDomain = values.reduce((sum, v) => sum + (perValue.get(v) ?? 0), 0);
      return bounds.map((bound) =>
        'outside' in bound
          ? { n: Math.max(0, response.body.total_results - inDomain), exact: true }
          : {
              n: values.slice(bound.from, bound.to + 1).reduce((sum, v) => sum + (perValue.get(v) ?? 0), 0),
              exact: true,
            },
      );
    },

    /** Saves the plan, so that a resumed run fetches the same slices and skips the finished ones. */
    saveExportPlan: async ({ run, plan }: { run: RunLocation; plan: ExportPlan }): Promise<void> => {
      const files = RunFiles.open(resolveStore, run);
      const context = await contextOf(files);
      await files.putJson(exportLayout.plan, { ...plan, fingerprint: context.fingerprint });
      plans.delete(files.url);
    },

    /**
     * One offset page of a slice, written to its own file. A page whose file exists (an earlier attempt
     * wrote it) is not fetched again.
     */
    fetchPage: async ({
      run,
      slice,
      page,
    }: {
      run: RunLocation;
      slice: number;
      page: number;
    }): Promise<{ records: number; total: number; calls: number; reused: boolean }> => {
      const files = RunFiles.open(resolveStore, run);
      const key = files.key(exportLayout.page(slice, page));
      if (await files.store.exists(key)) {
        return {
          records: countLines((await files.store.getBytes(key)).toString('utf8')),
          total: 0,
          calls: 0,
          reused: true,
        };
      }
      const [context, plan] = await Promise.all([contextOf(files), planOf(files)]);
      const planned = plan.slices[slice];
      if (!planned) throw new ExportSpecError(`slice ${slice} is not in the plan`);
      const body = {
        mode: 'full',
        size: Math.min(MAX_FETCH_SIZE, Math.max(context.pageSize, context.cap)),
        page_size: context.pageSize,
        page,
        filters: composeFilters(context.filters, context.dimensions, planned.constraints),
        ...exclusion(context),
      };
      const got = pageLines(
        await fetchPageResponse(context, body),
        slice * SLICE_STRIDE + page * PAGE_STRIDE,
      );
      await files.store.put(key, got.text);
      await easeOff(got.rateLimit);
      return { records: got.records, total: got.total, calls: attemptNumber(), reused: false };
    },

    /** One page of a slice's cursor chain; returns the next cursor (null at the end). */
    fetchCursorPage: async ({
      run,
      slice,
      seq,
      cursor,
    }: {
      run: RunLocation;
      slice: number;
      seq: number;
      cursor: string;
    }): Promise<{ records: number; total: number; nextCursor: string | null; calls: number }> => {
      const files = RunFiles.open(resolveStore, run);
      const [context, plan] = await Promise.all([contextOf(files), planOf(files)]);
      const planned = plan.slices[slice];
      if (!planned) throw new ExportSpecError(`slice ${slice} is not in the plan`);
      const body = {
        mode: 'full',
        size: MAX_FETCH_SIZE,
        page_size: context.pageSize,
        next_cursor: cursor,
        filters: composeFilters(context.filters, context.dimensions, planned.constraints),
        ...exclusion(context),
      };
      const got = pageLines(await fetchPageResponse(context, body), slice * SLICE_STRIDE + seq * PAGE_STRIDE);
      if (got.nextCursor === undefined) {
        throw ApplicationFailure.create({
          type: 'CursorUnsupportedError',
          message:
            'the service answered a cursor request with an offset page: it has no cursor mode (run with --no-cursor)',
          nonRetryable: true,
        });
      }
      await files.store.put(files.key(exportLayout.cursorPage(slice, seq)), got.text);
      await easeOff(got.rateLimit);
      return { records: got.records, total: got.total, nextCursor: got.nextCursor, calls: attemptNumber() };
    },

    /** Marks a slice finished: a resumed run skips it. */
    finishSlice: async ({ run, outcome }: { run: RunLocation; outcome: SliceOutcome }): Promise<void> => {
      const files = RunFiles.open(resolveStore, run);
      await files.putJson(exportLayout.sliceDone(outcome.index), outcome);
    },

    /**
     * Merges the fetched pages into the output table: one row per id (the first fetched), excluded ids
     * left out, at most `limit` rows, in the service's order; queues the ids for posts when asked.
     */
    commitExportRecords: async ({
      run,
      limit,
      withPosts,
    }: {
      run: RunLocation;
      limit?: number;
      withPosts?: boolean;
    }): Promise<ExportRecordsResult> => {
      const files = RunFiles.open(resolveStore, run);
      await files.store.delete(files.key(runLayout.success));
      const context = await contextOf(files);
      const idField = ID_FIELD[context.target];
      return withDuckDb(
        { ...COMMIT_DUCKDB(deps.workDir), signal: cancellationSignal() },
        async (connection, scratch) => {
          // Row order inside the file is not kept (sorting wide records would not fit the worker's
          // memory budget); which records are kept is: the first fetched of each id, in service order.
          await connection.run('SET preserve_insertion_order = false');
          const keys = (await files.list(exportLayout.pagesPrefix)).filter((k) => k.endsWith('.jsonl'));
          const local = await downloadAll(files, keys, path.join(scratch, 'pages'), (n) =>
            heartbeat({ downloaded: n }),
          );
          heartbeat({ pages: local.length });
          const struct = recordStruct(context.target);
          const pages = `[${local.map(sqlString).join(', ')}], format = 'newline_delimited'`;
          const idStruct = `STRUCT("${idField}" VARCHAR)`;
          // Ids first (small), to choose the rows to keep; the records are read once, when writing.
          const ids = local.length
            ? `read_json(${pages}, columns = {k: 'BIGINT', r: ${sqlString(idStruct)}})`
            : `(SELECT NULL::BIGINT AS k, NULL::${idStruct} AS r WHERE false)`;
          const records = local.length
            ? `read_json(${pages}, columns = {k: 'BIGINT', r: ${sqlString(struct)}})`
            : `(SELECT NULL::BIGINT AS k, NULL::${struct} AS r WHERE false)`;
          await connection.run(`CREATE TABLE fetched AS SELECT k, r."${idField}" AS id FROM ${ids}`);
          heartbeat({ step: 'ids loaded' });
          const excludeFile = path.join(scratch, 'exclude.json');
          await writeFile(
            excludeFile,
            JSON.stringify((await files.getJson<string[]>(exportLayout.exclude)).map((id) => ({ id }))),
          );
          await connection.run(
            `CREATE TABLE excluded AS SELECT DISTINCT id FROM read_json(${sqlString(excludeFile)}, format = 'array', columns = {id: 'VARCHAR'})`,
          );
          await connection.run(
            `CREATE TABLE keep AS SELECT min(k) AS k FROM fetched WHERE id NOT IN (SELECT id FROM excluded)
             GROUP BY id ORDER BY k ${limit !== undefined ? `LIMIT ${limit}` : ''}`,
          );
          const [counts] = await queryRows<{ fetched: number; unique_ids: number; excluded: number }>(
            connection,
            `SELECT count(*) AS fetched, count(DISTINCT id) AS unique_ids,
                  (SELECT count(DISTINCT f.id) FROM fetched f WHERE f.id IN (SELECT id FROM excluded)) AS excluded
           FROM fetched`,
          );
          // No join against the JSON scan: DuckDB cannot size it and would build its hash table from
          // the records. Rows up to the last kept one go through a plain filter; only when duplicates
          // or excluded ids sit among them does a second pass over a staged Parquet file drop them.
          const [kept] = await queryRows<{ n: number; last: number | null; upto: number }>(
            connection,
            `SELECT count(*) AS n, max(k) AS last,
                    (SELECT count(*) FROM fetched WHERE k <= (SELECT max(k) FROM keep)) AS upto
             FROM keep`,
          );
          const last = kept?.last === null || kept?.last === undefined ? -1 : Number(kept.last);
          let table: TableSummary;
          if (Number(kept?.upto ?? 0) === Number(kept?.n ?? 0)) {
            table = await writeParquetTable(
              connection,
              files,
              context.target,
              `SELECT r.* FROM ${records} WHERE k <= ${last}`,
              scratch,
              { rowGroupRows: WIDE_ROW_GROUP_ROWS },
            );
          } else {
            const staged = path.join(scratch, 'staged.parquet');
            await connection.run(
              `COPY (SELECT k, r.* FROM ${records} WHERE k <= ${last}) TO ${sqlString(staged)}
                 (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${WIDE_ROW_GROUP_ROWS})`,
            );
            heartbeat({ step: 'staged' });
            table = await writeParquetTable(
              connection,
              files,
              context.target,
              `SELECT * EXCLUDE (k) FROM read_parquet(${sqlString(staged)}) WHERE k IN (SELECT k FROM keep)`,
              scratch,
              { rowGroupRows: WIDE_ROW_GROUP_ROWS },
            );
          }
          let postIds = 0;
          if (withPosts) {
            const ids = await queryRows<{ id: string }>(
              connection,
              `SELECT f.id FROM fetched f JOIN keep USING (k) ORDER BY k`,
            );
            for (let chunk = 0; chunk * POST_IDS_PER_CHUNK < ids.length; chunk += 1) {
              const part = ids
                .slice(chunk * POST_IDS_PER_CHUNK, (chunk + 1) * POST_IDS_PER_CHUNK)
                .map((r) => r.id);
              await files.putJson(exportLayout.postIds(chunk), part);
            }
            postIds = ids.length;
          }
          const fetched = Number(counts?.fetched ?? 0);
          const unique = Number(counts?.unique_ids ?? 0);
          return {
            table,
            fetched,
            duplicates: fetched - unique,
            excluded: Number(counts?.excluded ?? 0),
            written: table.rows,
            postIds,
          };
        },
      );
    },

    /** The posts record of one exported prospect; a prospect without posts is a miss, not an error. */
    fetchPosts: async ({
      run,
      index,
    }: {
      run: RunLocation;
      index: number;
    }): Promise<{ records: number; misses: number; calls: number }> => {
      const files = RunFiles.open(resolveStore, run);
      const chunk = Math.floor(index / POST_IDS_PER_CHUNK);
      const ids = await cached(postIdChunks, `${files.url}|${chunk}`, () =>
        files.getJson<string[]>(exportLayout.postIds(chunk)),
      );
      const prospectId = ids[index % POST_IDS_PER_CHUNK];
      if (!prospectId) throw new ExportSpecError(`posts item ${index} is not in the plan`);
      const key = files.key(exportLayout.post(index));
      // Done by an earlier attempt or run (misses are recorded too): not called again.
      if (await files.store.exists(key)) {
        const done = JSON.parse((await files.store.getBytes(key)).toString('utf8')) as { data: unknown };
        return done.data === null ? { records: 0, misses: 1, calls: 0 } : { records: 1, misses: 0, calls: 0 };
      }
      let data: unknown;
      let rateLimit;
      try {
        const response = await call('enrichProspectPosts')({ prospect_id: prospectId });
        data = response.body.data;
        rateLimit = response.rateLimit;
      } catch (error) {
        if (!(error instanceof Error && error.name === 'NotFoundError'))
          throw toActivityFailure(error, { items: 1 });
      }
      await easeOff(rateLimit);
      const found = data !== null && data !== undefined;
      await files.store.put(
        key,
        `${JSON.stringify({ k: index, prospect_id: prospectId, data: found ? data : null })}\n`,
      );
      return found
        ? { records: 1, misses: 0, calls: attemptNumber() }
        : { records: 0, misses: 1, calls: attemptNumber() };
    },

    /** The `prospect_posts` table: `prospect_id` and the fields of the posts record. */
    commitExportPosts: async ({ run }: { run: RunLocation }): Promise<TableSummary> => {
      const files = RunFiles.open(resolveStore, run);
      return withDuckDb(
        { ...COMMIT_DUCKDB(deps.workDir), signal: cancellationSignal() },
        async (connection, scratch) => {
          await connection.run('SET preserve_insertion_order = false');
          const keys = await files.list(exportLayout.postsPrefix);
          const local = await downloadAll(files, keys, path.join(scratch, 'posts'), (n) =>
            heartbeat({ downloaded: n }),
          );
          const fields = columnsOfSchema(NetworkPostsRecordSchema);
          const struct = duckDbType({ kind: 'struct', fields });
          const source = local.length
            ? `read_json([${local.map(sqlString).join(', ')}], format = 'newline_delimited', columns = {k: 'BIGINT', prospect_id: 'VARCHAR', data: ${sqlString(struct)}})`
            : `(SELECT NULL::BIGINT AS k, NULL::VARCHAR AS prospect_id, NULL::${struct} AS data WHERE false)`;
          const projection = fields.map((f) => `data."${f.name}" AS "${f.name}"`).join(', ');
          return writeParquetTable(
            connection,
            files,
            'prospect_posts',
            `SELECT prospect_id, ${projection} FROM ${source} WHERE data IS NOT NULL`,
            scratch,
            { rowGroupRows: WIDE_ROW_GROUP_ROWS },
          );
        },
      );
    },

    /** Writes the failures table, `manifest.json`, and finally `_SUCCESS`. */
    commitExport: async (input: {
      run: RunLocation;
      request: ExportRunInput;
      plan: ExportPlan;
      slices: SliceOutcome[];
      records: ExportRecordsResult;
      posts?: ExportSummary['posts'];
      postsTable?: TableSummary;
      failures: PageFailure[];
      stages: ExportStageProgress[];
      probeCalls: number;
      startedAt: string;
    }): Promise<ExportSummary> => {
      const { run, plan, records } = input;
      const files = RunFiles.open(resolveStore, run);
      const failuresTable = await withDuckDb(
        { workDir: deps.workDir, signal: cancellationSignal() },
        async (connection, scratch) => {
          const jsonl = path.join(scratch, 'failures.jsonl');
          await writeFile(
            jsonl,
            toJsonLines(
              input.failures.map((f) => ({
                stage: f.stage,
                slice: f.slice,
                page: f.page,
                error_type: f.errorType,
                message: f.message,
                attempts: f.attempts,
              })),
            ),
          );
          const source = input.failures.length
            ? `read_json(${sqlString(jsonl)}, format = 'newline_delimited', columns = {stage: 'VARCHAR', slice: 'INTEGER', page: 'INTEGER', error_type: 'VARCHAR', message: 'VARCHAR', attempts: 'INTEGER'})`
            : `(SELECT NULL::VARCHAR AS stage, NULL::INTEGER AS slice, NULL::INTEGER AS page, NULL::VARCHAR AS error_type, NULL::VARCHAR AS message, NULL::INTEGER AS attempts WHERE false)`;
          return writeParquetTable(
            connection,
            files,
            'failures',
            `SELECT * FROM ${source} ORDER BY stage, slice, page`,
            scratch,
          );
        },
      );
      const tables = [records.table, ...(input.postsTable ? [input.postsTable] : []), failuresTable];
      const truncated = plan.slices.filter((s) => s.method === 'truncated');
      const overCap = input.slices.filter((s) => s.overCap);
      const failedPages = input.failures.filter((f) => f.stage === 'pages').length;
      const failedPosts = input.failures.length - failedPages;
      const pageCalls = input.slices.reduce((sum, s) => sum + s.calls, 0);
      const counts: ExportCounts = {
        searchTotal: plan.total.n,
        searchTotalExact: plan.total.exact,
        sliceSum: plan.sliceSum,
        fetched: records.fetched,
        duplicates: records.duplicates,
        excluded: records.excluded,
        written: records.written,
        truncatedSlices: truncated.length + overCap.length,
        missingFromTruncated: truncatedRecords(plan),
        failedPages,
        calls: input.probeCalls + pageCalls + (input.posts?.calls ?? 0),
        probes: plan.probes,
      };
      const warnings: string[] = [];
      for (const slice of truncated) {
        warnings.push(
          `TRUNCATED: slice ${slice.index} (${slice.description}) holds ${slice.count} records and no filter splits it under the cap of ${plan.cap}; ${slice.count - plan.cap} of its records are NOT in the output (cursor mode was off)`,
        );
      }
      for (const slice of overCap) {
        warnings.push(
          `TRUNCATED: slice ${slice.index} reached the cap of ${plan.cap} records while it was fetched (planned with ${plan.slices[slice.index]?.count ?? '?'}); records beyond the cap are missing — run the export again`,
        );
      }
      if (plan.total.exact && plan.sliceSum !== plan.total.n) {
        warnings.push(`the slices hold ${plan.sliceSum} records but the search counts ${plan.total.n}`);
      }
      if (!plan.total.exact) {
        warnings.push(
          `the search's full count is unknown (at least ${plan.total.n}; without cursor mode counts stop at ${MAX_FETCH_SIZE}), so the slices' sum could not be checked against it`,
        );
      }
      const grown = input.slices.filter((s) => !s.overCap && s.maxTotal > (plan.slices[s.index]?.count ?? 0));
      if (grown.length > 0) {
        warnings.push(
          `${grown.length} slices gained records while they were fetched; the added records were fetched too`,
        );
      }
      if (failedPages > 0)
        warnings.push(`${failedPages} pages failed after their retries; see the failures table`);
      if (failedPosts > 0)
        warnings.push(`${failedPosts} posts calls failed after their retries; see the failures table`);
      const status: ExportSummary['status'] =
        input.failures.length > 0
          ? 'completed_with_failures'
          : counts.truncatedSlices > 0
            ? 'completed_truncated'
            : 'completed';
      const finishedAt = new Date().toISOString();
      const manifest = {
        manifest_version: 1,
        kind: 'export',
        run_id: run.runId,
        job_name: input.request.jobName,
        target: plan.target,
        status,
        filters: input.request.filters,
        size: input.request.size ?? null,
        exclude: input.request.exclude ?? null,
        with_posts: input.request.withPosts ?? false,
        started_at: input.startedAt,
        finished_at: finishedAt,
        location: files.url,
        warnings,
        counts: {
          search_total: counts.searchTotal,
          search_total_exact: counts.searchTotalExact,
          slice_sum: counts.sliceSum,
          slices_match_search: plan.total.exact ? plan.sliceSum === plan.total.n : null,
          fetched: counts.fetched,
          duplicates: counts.duplicates,
          excluded: counts.excluded,
          written: counts.written,
          truncated_slices: counts.truncatedSlices,
          missing_from_truncated: counts.missingFromTruncated,
          failed_pages: counts.failedPages,
          calls: counts.calls,
          probes: counts.probes,
          ...(input.posts ? { posts_records: input.posts.records, posts_misses: input.posts.misses } : {}),
        },
        plan: {
          cap: plan.cap,
          page_size: plan.pageSize,
          exclude_ids: plan.exclude.ids,
          exclude_sent_to_service: plan.exclude.sent,
          rejected_splits: plan.rejected,
          slices: plan.slices.map((s) => {
            const outcome = input.slices.find((o) => o.index === s.index);
            return {
              index: s.index,
              filters: s.description,
              bounds: s.constraints,
              count: s.count,
              method: s.method,
              truncated: s.method === 'truncated' || (outcome?.overCap ?? false),
              planned_records: s.planned,
              fetched_records: outcome?.records ?? 0,
              pages: outcome?.pages ?? 0,
              failed_pages: outcome?.failedPages ?? 0,
            };
          }),
        },
        stages: input.stages.map((s) => ({
          stage: s.stage,
          units: s.totalBatches,
          done: s.doneBatches,
          failed: s.failedBatches,
          records: s.records,
          misses: s.misses,
          calls: s.calls,
          seconds: Math.round((s.updatedAt - s.startedAt) / 100) / 10,
        })),
        tables: tables.map((t) => ({ name: t.table, rows: t.rows, files: t.files, columns: t.columns })),
      };
      const summary: ExportSummary = {
        kind: 'export',
        runId: run.runId,
        jobName: input.request.jobName,
        target: plan.target,
        request: input.request,
        status,
        outputPrefix: files.url,
        manifestKey: runLayout.manifest,
        plan,
        slices: input.slices,
        counts,
        ...(input.posts ? { posts: input.posts } : {}),
        stages: input.stages,
        tables,
        warnings,
        startedAt: input.startedAt,
        finishedAt,
      };
      await files.putJson(exportLayout.summary, summary);
      await files.putJson(runLayout.manifest, manifest);
      await files.putJson(runLayout.success, { run_id: run.runId, finished_at: finishedAt });
      const log = warnings.length ? logger.warn.bind(logger) : logger.info.bind(logger);
      log({ runId: run.runId, status, written: counts.written, warnings }, 'committed export');
      return summary;
    },
  };
}

export type ExportActivities = ReturnType<typeof createExportActivities>;
