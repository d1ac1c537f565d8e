// Handlers of the sandbox's contract routes (everything but events, enrollments and webhooks, which the
// events plugin serves). Requests reach a handler already authenticated and checked against the contract.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  BULK_ENRICH_ROUTES,
  MAX_FETCH_SIZE,
  PROSPECT_BULK_ENRICH_ROUTES,
  ROUTES,
  SERVICE_VERSION,
  buildOpenApiDocument,
  type AutocompleteField,
  type BulkDataset,
  type BusinessFetchFilters,
  type BusinessMatchInput,
  type FetchMode,
  type ProspectFilters,
  type ProspectDataset,
  type ProspectMatchInput,
  type RequestStatus,
  type RouteSpec,
} from '../../contract/index.js';
import type { SandboxStore } from '../data/store.js';
import type { Autocomplete } from '../query/autocomplete.js';
import type { DatasetRecords } from '../query/dataset-records.js';
import type { BusinessIndex } from '../query/business-index.js';
import type { BusinessKeys } from '../query/business-keys.js';
import type { ProspectIndex, RecentRecords, SearchTotals } from '../query/prospect-index.js';
import {
  businessStats,
  fetchBusinesses,
  fetchProspects,
  type BusinessQueryContext,
  type FetchResult,
} from '../query/fetch.js';
import type { EventsCondition } from '../query/filters.js';
import { matchBusinesses, matchProspects } from '../query/match.js';
import { InvalidCursorError, type PagingRequest } from '../query/paging.js';
import type { ProspectKeys } from '../query/prospect-keys.js';
import { lookupProspectRecords } from '../query/prospect-records.js';
import { shiftPostDates } from './clock.js';
import { responseContext, sendJson, sendValidationError } from './context.js';

export interface SandboxServices {
  store: SandboxStore;
  records: DatasetRecords;
  /** Prospect dataset records by prospect row index (loaded on first use). */
  prospectRecords: DatasetRecords<ProspectDataset>;
  /** Indexes built after start; routes await them. */
  autocomplete: Promise<Autocomplete>;
  prospects: Promise<ProspectIndex>;
  businessIndex: Promise<BusinessIndex>;
  /** In-memory match keys once loaded (until then, matching queries the table). */
  matchKeys: () => BusinessKeys | undefined;
  /** Prospect match keys and ids once loaded (until then, matching and records query the tables). */
  prospectKeys: () => ProspectKeys | undefined;
  recentProspects: RecentRecords;
  /** Totals of recent prospect searches, so later pages of a query skip the count. */
  prospectTotals: SearchTotals;
  clock: () => number;
  /** Milliseconds the generated data's dates move when served (see `asOfShiftMs`). */
  asOfShiftMs: () => number;
  /** Condition on the events table for the business `events` filter, once that table exists. */
  eventsCondition: () => Promise<EventsCondition | undefined>;
}

function body<T>(request: FastifyRequest): T {
  return request.checked?.body as T;
}

/** A fetch body as the contract admits it: `size` may be absent. */
type FetchBody = Omit<PagingRequest, 'size'> & { size?: number; mode: FetchMode };

/** The fetch with its `size` default (60,000) applied. */
function withSize<T extends FetchBody>(request: T): T & { size: number } {
  return { ...request, size: request.size ?? MAX_FETCH_SIZE };
}

const OPEN = Buffer.from('{"response_context":');
const DATA_OPEN = Buffer.from(',"data":[');
const CLOSE_ROW = Buffer.from('}');
const CLOSE_BULK = Buffer.from(']}');

/** Registers a contract route; `handler` runs after auth, rate limiting and the contract check. */
function serve(
  app: FastifyInstance,
  route: RouteSpec,
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
): void {
  app.route({ method: route.method, url: route.path, config: { operationId: route.operationId }, handler });
}

function fetchResponseText(request: FastifyRequest, result: FetchResult): string {
  const status: RequestStatus = result.totalResults === 0 ? 'miss' : 'success';
  const context = JSON.stringify(responseContext(request, status));
  const data = `[${result.records.join(',')}]`;
  if (result.mode === 'offset') {
    return `{"response_context":${context},"data":${data},"total_results":${result.totalResults},"page":${result.page},"total_pages":${result.totalPages}}`;
  }
  const page = JSON.stringify({ size: result.records.length, next_cursor: result.nextCursor });
  return `{"response_context":${context},"data":${data},"total_results":${result.totalResults},"page":${page}}`;
}

async function runFetch(
  reply: FastifyReply,
  request: FastifyRequest,
  run: () => Promise<FetchResult>,
): Promise<FastifyReply> {
  try {
    return sendJson(reply, fetchResponseText(request, await run()));
  } catch (error) {
    if (error instanceof InvalidCursorError) {
      return sendValidationError(reply, [
        { loc: ['body', 'next_cursor'], msg: error.message, type: 'value_error.cursor' },
      ]);
    }
    throw error;
  }
}

/** Keeps only the website-keyword results for the requested keywords (case-insensitive). */
function keepKeywords(json: Buffer, keywords: readonly string[]): Buffer {
  const wanted = new Set(keywords.map((keyword) => keyword.toLowerCase()));
  const record = JSON.parse(json.toString('utf8')) as { text_results?: { keyword?: string }[] | null };
  if (Array.isArray(record.text_results)) {
    record.text_results = record.text_results.filter((result) =>
      wanted.has(String(result.keyword).toLowerCase()),
    );
  }
  return Buffer.from(JSON.stringify(record));
}

/** Record bytes per id, in the order given; null where there is none. */
type RecordLookup = (ids: readonly string[]) => Promise<(Buffer | null)[]>;

/**
 * Every `bulk_enrich`, businesses and prospects alike: each id once, in the order asked; an id with no
 * record is left out of `data` (and not counted in `total_results`); `miss` when none had one.
 */
async function bulkEnrich(
  request: FastifyRequest,
  reply: FastifyReply,
  key: 'business_id' | 'prospect_id',
  ids: readonly string[],
  lookup: RecordLookup,
  transform?: (record: Buffer) => Buffer,
): Promise<FastifyReply> {
  const wanted = [...new Set(ids)];
  const found = await lookup(wanted);
  const parts: Buffer[] = [];
  let count = 0;
  wanted.forEach((id, i) => {
    const stored = found[i];
    if (!stored) return;
    const record = transform ? transform(stored) : stored;
    parts.push(Buffer.from(`${count === 0 ? '' : ','}{"${key}":"${id}","data":`), record, CLOSE_ROW);
    count += 1;
  });
  const context = JSON.stringify(responseContext(request, count === 0 ? 'miss' : 'success'));
  const head = Buffer.from(`${context},"total_results":${count}`);
  return sendJson(reply, Buffer.concat([OPEN, head, DATA_OPEN, ...parts, CLOSE_BULK]));
}

/** Posts' dates moved to the served clock (see `shiftPostDates`); none when the shift is zero. */
function postDates(services: SandboxServices): ((record: Buffer) => Buffer) | undefined {
  const shiftMs = services.asOfShiftMs();
  return shiftMs === 0
    ? undefined
    : (record) => Buffer.from(shiftPostDates(record.toString('utf8'), shiftMs));
}

function enrichBusinesses(
  services: SandboxServices,
  dataset: BulkDataset,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { business_ids: ids, parameters } = body<{
    business_ids: string[];
    parameters?: { keywords?: string[] } | null;
  }>(request);
  const lookup: RecordLookup = async (wanted) => {
    const bixes = wanted.map((id) => services.store.bixOf(id));
    const known = bixes.filter((bix): bix is number => bix !== undefined);
    const records = await services.records.lookup(dataset, known);
    let next = 0;
    return bixes.map((bix) => (bix === undefined ? null : (records[next++] ?? null)));
  };
  const keywords =
    dataset === 'company_website_keywords' && parameters?.keywords && parameters.keywords.length > 0
      ? parameters.keywords
      : null;
  const transform = keywords
    ? (record: Buffer) => keepKeywords(record, keywords)
    : dataset === 'network_posts'
      ? postDates(services)
      : undefined;
  return bulkEnrich(request, reply, 'business_id', ids, lookup, transform);
}

function enrichProspects(
  services: SandboxServices,
  dataset: ProspectDataset,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { prospect_ids: ids } = body<{ prospect_ids: string[] }>(request);
  const lookup: RecordLookup = (wanted) =>
    lookupProspectRecords(services.store, dataset, wanted, {
      keys: services.prospectKeys,
      records: services.prospectRecords,
    });
  const transform = dataset === 'network_posts' ? postDates(services) : undefined;
  return bulkEnrich(request, reply, 'prospect_id', ids, lookup, transform);
}

export function registerSandboxRoutes(
  app: FastifyInstance,
  services: SandboxServices,
  options: { serverUrl?: string } = {},
): void {
  const { store } = services;
  const businessContext = async (
    filters: BusinessFetchFilters | null | undefined,
  ): Promise<BusinessQueryContext> => {
    const events = filters?.events ? await services.eventsCondition() : undefined;
    return { now: services.clock(), ...(events ? { events } : {}) };
  };

  serve(app, ROUTES.healthcheck, async (_request, reply) => sendJson(reply, JSON.stringify('OK')));

  serve(app, ROUTES.healthcheckPayload, async (request, reply) => {
    // The contract bounds the size (2 to 1,000,000), so the route's check has refused any other.
    const { response_bytes: bytes } = request.checked?.params as { response_bytes: number };
    return sendJson(reply, `"${'x'.repeat(bytes - 2)}"`);
  });

  serve(app, ROUTES.version, async (_request, reply) => sendJson(reply, JSON.stringify(SERVICE_VERSION)));

  const openApi = JSON.stringify(
    buildOpenApiDocument(options.serverUrl ? { serverUrl: options.serverUrl } : {}),
  );
  app.get('/openapi.json', async (_request, reply) => sendJson(reply, openApi));

  serve(app, ROUTES.matchBusinesses, async (request, reply) => {
    const inputs = body<{ businesses_to_match: BusinessMatchInput[] }>(request).businesses_to_match;
    const ids = await matchBusinesses(store, inputs, services.matchKeys());
    const matches = ids.filter((id) => id !== null).length;
    return reply.send({
      response_context: responseContext(request, matches === 0 ? 'miss' : 'success'),
      total_results: inputs.length,
      total_matches: matches,
      matched_businesses: inputs.map((input, i) => ({ input, business_id: ids[i] ?? null })),
    });
  });

  serve(app, ROUTES.fetchBusinesses, async (request, reply) => {
    const request_ = withSize(
      body<FetchBody & { filters?: BusinessFetchFilters | null; exclude?: string[] | null }>(request),
    );
    const context = await businessContext(request_.filters);
    return runFetch(reply, request, () => fetchBusinesses(store, request_, context));
  });

  serve(app, ROUTES.businessStats, async (request, reply) => {
    const { filters } = body<{ filters: BusinessFetchFilters }>(request);
    const result = await businessStats(store, filters, await businessContext(filters));
    return reply.send({
      response_context: responseContext(request, result.totalResults === 0 ? 'miss' : 'success'),
      total_results: result.totalResults,
      stats: result.stats,
    });
  });

  serve(app, ROUTES.autocomplete, async (request, reply) => {
    const query = request.checked?.query as {
      field: AutocompleteField;
      query?: string;
      semantic_search?: boolean;
    };
    return reply.send(
      await (
        await services.autocomplete
      ).complete(query.field, query.query ?? '', query.semantic_search ?? false),
    );
  });

  serve(app, ROUTES.enrichHierarchy, async (request, reply) => {
    const { business_id: businessId } = body<{ business_id: string }>(request);
    const bix = store.bixOf(businessId);
    const rows =
      bix === undefined ? [] : await store.query('SELECT json FROM hierarchies WHERE bix = $bix', { bix });
    const json = rows[0] ? String(rows[0].json) : null;
    const context = JSON.stringify(responseContext(request, json ? 'success' : 'miss'));
    return sendJson(
      reply,
      `{"response_context":${context},"data":${json ?? 'null'},"entity_id":${JSON.stringify(businessId)}}`,
    );
  });

  for (const route of Object.values(BULK_ENRICH_ROUTES)) {
    const dataset = route.dataset;
    serve(app, route, (request, reply) => enrichBusinesses(services, dataset, request, reply));
  }

  // Provider operations beyond the spec, served through the same bulk path as businesses.
  for (const route of Object.values(PROSPECT_BULK_ENRICH_ROUTES)) {
    const dataset = route.prospectDataset;
    serve(app, route, (request, reply) => enrichProspects(services, dataset, request, reply));
  }

  serve(app, ROUTES.matchProspects, async (request, reply) => {
    const inputs = body<{ prospects_to_match: ProspectMatchInput[] }>(request).prospects_to_match;
    const ids = await matchProspects(store, inputs, services.prospectKeys());
    const matches = ids.filter((id) => id !== null).length;
    return reply.send({
      response_context: responseContext(request, matches === 0 ? 'miss' : 'success'),
      total_results: inputs.length,
      total_matches: matches,
      matched_prospects: inputs.map((input, i) => ({ input, prospect_id: ids[i] ?? null })),
    });
  });

  serve(app, ROUTES.fetchProspects, async (request, reply) => {
    const request_ = withSize(
      body<FetchBody & { filters?: ProspectFilters | null; exclude?: string[] | null }>(request),
    );
    const [prospectIndex, businessIndex] = await Promise.all([services.prospects, services.businessIndex]);
    return runFetch(reply, request, () =>
      fetchProspects(
        store,
        prospectIndex,
        businessIndex,
        services.recentProspects,
        services.prospectTotals,
        request_,
      ),
    );
  });

  serve(app, ROUTES.enrichProspectPosts, async (request, reply) => {
    const { prospect_id: prospectId } = body<{ prospect_id: string }>(request);
    const rows = await store.query('SELECT json FROM prospect_posts WHERE prospect_id = $id', {
      id: prospectId,
    });
    const json = rows[0] ? shiftPostDates(String(rows[0].json), services.asOfShiftMs()) : null;
    const context = JSON.stringify(responseContext(request, json ? 'success' : 'miss'));
    return sendJson(
      reply,
      `{"response_context":${context},"data":${json ?? 'null'},"entity_id":${JSON.stringify(prospectId)}}`,
    );
  });
}
