// Business and prospect fetch and business stats over the database: filters become SQL, the count and the
// page run side by side on two pooled connections, and records come back as their stored JSON text (mode
// `full`) or cut down to a few fields (mode `preview`).
import type { BusinessFetchFilters, FetchMode, ProspectFilters } from '../../contract/index.js';
import type { SandboxStore } from '../data/store.js';
import type { BusinessIndex } from './business-index.js';
import {
  businessConditions,
  companyNameCondition,
  prospectSearchBase,
  type EventsCondition,
} from './filters.js';
import {
  SearchTotals,
  type ProspectIndex,
  type ProspectSearch,
  type RecentRecords,
} from './prospect-index.js';
import {
  encodeCursor,
  offsetTotals,
  planPage,
  queryFingerprint,
  type PagePlan,
  type PagingRequest,
} from './paging.js';
import { allOf, SqlParams } from './sql.js';

export interface FetchRequest<F> extends PagingRequest {
  mode: FetchMode;
  filters?: F | null | undefined;
  exclude?: string[] | null | undefined;
}

export type FetchResult =
  | { mode: 'offset'; records: string[]; totalResults: number; page: number; totalPages: number }
  | { mode: 'cursor'; records: string[]; totalResults: number; nextCursor: string | null };

const PROSPECT_PREVIEW_FIELDS = [
  'prospect_id',
  'full_name',
  'job_title',
  'job_level_main',
  'job_department_main',
  'company_name',
  'business_id',
  'country_name',
] as const;
const BUSINESS_PREVIEW_FIELDS = [
  'business_id',
  'name',
  'domain',
  'country_name',
  'city_name',
  'number_of_employees_range',
] as const;

function preview(json: string, fields: readonly string[]): string {
  const record = JSON.parse(json) as Record<string, unknown>;
  return JSON.stringify(
    Object.fromEntries(fields.filter((field) => field in record).map((field) => [field, record[field]])),
  );
}

interface TableQuery {
  table: 'prospects p' | 'businesses b';
  key: 'p.pix' | 'b.bix';
  json: 'p.record_json' | 'b.fetch_json';
  conditions: string[];
  params: SqlParams;
  previewFields: readonly string[];
}

async function runFetch(
  store: SandboxStore,
  request: FetchRequest<unknown>,
  query: TableQuery,
): Promise<FetchResult> {
  const fingerprint = queryFingerprint([
    query.table,
    request.mode,
    request.filters ?? null,
    request.exclude ?? null,
  ]);
  const plan = planPage(request, fingerprint);
  const where = allOf(query.conditions);
  const params = query.params.values;
  const count = store.query(`SELECT count(*) AS n FROM ${query.table} WHERE ${where}`, params);
  const page =
    plan.mode === 'offset'
      ? plan.limit === 0
        ? Promise.resolve([])
        : store.query(
            `SELECT ${query.key} AS k, ${query.json} AS j FROM ${query.table} WHERE ${where} ORDER BY ${query.key} LIMIT ${plan.limit} OFFSET ${plan.offset}`,
            params,
          )
      : store.query(
          `SELECT ${query.key} AS k, ${query.json} AS j FROM ${query.table} WHERE ${where} AND ${query.key} > ${plan.after} ORDER BY ${query.key} LIMIT ${plan.limit + 1}`,
          params,
        );
  const [[countRow], rows] = await Promise.all([count, page]);
  const matching = Number(countRow?.n ?? 0);
  const pageRows = plan.mode === 'cursor' ? rows.slice(0, plan.limit) : rows;
  const records = pageRows.map((row) =>
    request.mode === 'preview' ? preview(String(row.j), query.previewFields) : String(row.j),
  );
  if (plan.mode === 'offset') {
    const { totalResults, totalPages } = offsetTotals(request, matching);
    return { mode: 'offset', records, totalResults, page: plan.page, totalPages };
  }
  const last = pageRows[pageRows.length - 1];
  const nextCursor = rows.length > plan.limit && last ? encodeCursor(Number(last.k), fingerprint) : null;
  return { mode: 'cursor', records, totalResults: matching, nextCursor };
}

function fetchResult(
  request: PagingRequest,
  plan: PagePlan,
  fingerprint: string,
  total: number,
  keys: number[],
  records: string[],
): FetchResult {
  if (plan.mode === 'offset') {
    const { totalResults, totalPages } = offsetTotals(request, total);
    return { mode: 'offset', records, totalResults, page: plan.page, totalPages };
  }
  const last = keys[keys.length - 1];
  const nextCursor =
    keys.length > plan.limit && last !== undefined
      ? encodeCursor(keys[plan.limit - 1] as number, fingerprint)
      : null;
  return { mode: 'cursor', records: records.slice(0, plan.limit), totalResults: total, nextCursor };
}

/**
 * Prospect fetch: employer filters and excluded ids are resolved in the database, the rest is a scan of
 * the prospect index; then only the page's records are read.
 */
export async function fetchProspects(
  store: SandboxStore,
  index: ProspectIndex,
  businessIndex: BusinessIndex,
  recent: RecentRecords,
  totals: SearchTotals,
  request: FetchRequest<ProspectFilters>,
): Promise<FetchResult> {
  const fingerprint = queryFingerprint([
    'prospects',
    request.mode,
    request.filters ?? null,
    request.exclude ?? null,
  ]);
  const plan = planPage(request, fingerprint);
  const filters = request.filters ?? {};
  const businesses = store.businessIds.length;

  let employers = businessIndex.employerMask(filters);
  const narrow = (allowed: Uint8Array) => {
    employers = employers ? employers.map((value, i) => value & (allowed[i] ?? 0)) : allowed;
  };
  if (filters.company_name && filters.company_name.values.length > 0) {
    const params = new SqlParams();
    const named = new Uint8Array(businesses);
    const rows = await store.query(
      `SELECT b.bix FROM businesses b WHERE ${companyNameCondition(filters.company_name.values, params)}`,
      params.values,
    );
    for (const row of rows) named[Number(row.bix)] = 1;
    narrow(named);
  }
  if (filters.business_id && filters.business_id.values.length > 0) {
    const named = new Uint8Array(businesses);
    for (const id of filters.business_id.values) {
      const bix = store.bixOf(id);
      if (bix !== undefined) named[bix] = 1;
    }
    narrow(named);
  }
  let excluded: Set<number> | null = null;
  if (request.exclude && request.exclude.length > 0) {
    const excludeParams = new SqlParams();
    const rows = await store.query(
      `SELECT pix FROM prospects WHERE prospect_id IN ${excludeParams.list([...new Set(request.exclude)])}`,
      excludeParams.values,
    );
    excluded = new Set(rows.map((row) => Number(row.pix)));
  }

  const search: ProspectSearch = { ...prospectSearchBase(filters), employers, excluded };
  const window =
    plan.mode === 'offset'
      ? { offset: plan.offset, limit: plan.limit }
      : { after: plan.after, limit: plan.limit + 1 };
  const totalsKey = SearchTotals.key(search);
  const { total, page } = index.search(search, window, totals.get(totalsKey));
  totals.set(totalsKey, total);
  const wanted = plan.mode === 'cursor' ? page.slice(0, plan.limit) : page;
  const found = new Map<number, string>();
  const missing: number[] = [];
  for (const pix of wanted) {
    const cached = recent.get(pix);
    if (cached === undefined) missing.push(pix);
    else found.set(pix, cached);
  }
  if (missing.length > 0) {
    // An index scan on `prospects_pix` (unique index on the key) fetches just these rows; the keys are
    // integers the search produced, written into the statement as they are.
    const rows = await store.query(
      `SELECT pix, record_json FROM prospects WHERE pix IN (${missing.map((pix) => String(Math.trunc(pix))).join(', ')})`,
    );
    for (const row of rows) {
      const pix = Number(row.pix);
      const json = String(row.record_json);
      found.set(pix, json);
      recent.set(pix, json);
    }
  }
  const records = wanted.map((pix) => {
    const json = found.get(pix) ?? 'null';
    return request.mode === 'preview' ? preview(json, PROSPECT_PREVIEW_FIELDS) : json;
  });
  return fetchResult(request, plan, fingerprint, total, page, records);
}

export interface BusinessQueryContext {
  events?: EventsCondition;
  now: number;
}

export async function fetchBusinesses(
  store: SandboxStore,
  request: FetchRequest<BusinessFetchFilters>,
  context: BusinessQueryContext,
): Promise<FetchResult> {
  const params = new SqlParams();
  const conditions = businessConditions(request.filters, {
    params,
    now: context.now,
    ...(context.events ? { events: context.events } : {}),
  });
  if (request.exclude && request.exclude.length > 0)
    conditions.push(`b.business_id NOT IN ${params.list([...new Set(request.exclude)])}`);
  return runFetch(store, request, {
    table: 'businesses b',
    key: 'b.bix',
    json: 'b.fetch_json',
    conditions,
    params,
    previewFields: BUSINESS_PREVIEW_FIELDS,
  });
}

export interface BusinessStats {
  totalResults: number;
  stats: {
    business_categories_per_location: Record<string, Record<string, number>>;
    revenue_per_category: Record<string, Record<string, number>>;
    number_of_employees_per_category: Record<string, Record<string, number>>;
  };
}

/** Counts of the matching businesses per network category and country, revenue range, employee range. */
export async function businessStats(
  store: SandboxStore,
  filters: BusinessFetchFilters,
  context: BusinessQueryContext,
): Promise<BusinessStats> {
  const params = new SqlParams();
  const conditions = businessConditions(filters, {
    params,
    now: context.now,
    ...(context.events ? { events: context.events } : {}),
  });
  const rows = await store.query(
    `SELECT network_category AS c, country_code AS l, revenue_range AS r, size_range AS s, count(*) AS n
     FROM businesses b WHERE ${allOf(conditions)} GROUP BY ALL ORDER BY ALL`,
    params.values,
  );
  const stats: BusinessStats['stats'] = {
    business_categories_per_location: {},
    revenue_per_category: {},
    number_of_employees_per_category: {},
  };
  const bump = (table: Record<string, Record<string, number>>, outer: string, inner: string, n: number) => {
    const counts = (table[outer] ??= {});
    counts[inner] = (counts[inner] ?? 0) + n;
  };
  let totalResults = 0;
  for (const row of rows) {
    const n = Number(row.n);
    const category = String(row.c);
    totalResults += n;
    bump(stats.business_categories_per_location, category, String(row.l), n);
    bump(stats.revenue_per_category, category, String(row.r), n);
    bump(stats.number_of_employees_per_category, category, String(row.s), n);
  }
  return { totalResults, stats };
}
