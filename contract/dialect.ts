// The provider's names for what the spec calls `network` and `listing` (reference name map), which the
// service accepts from its own clients besides the spec's. `adaptProviderRequest` turns a request written
// with them into the spec's form before the contract check, so every check, handler and answer sees only
// the spec's names; the sandbox skips it in strict mode.
import type { RouteSpec } from './routes.js';
import { BusinessMatchInputSchema } from './schemas/businesses.js';
import { ProspectMatchInputSchema } from './schemas/prospects.js';

/** Filter names (business fetch and stats, prospect fetch) and autocomplete fields. */
export const PROVIDER_FILTER_ALIASES: Readonly<Record<string, string>> = {
  linkedin_category: 'network_category',
  google_category: 'listing_category',
};
/** Keys of a business match item. */
export const PROVIDER_BUSINESS_MATCH_ALIASES: Readonly<Record<string, string>> = {
  linkedin_url: 'network_url',
};
/** Keys of a prospect match item. */
export const PROVIDER_PROSPECT_MATCH_ALIASES: Readonly<Record<string, string>> = {
  linkedin: 'network',
};
/** Path segments: `/v1/businesses/linkedin_posts/bulk_enrich`, `/v1/prospects/linkedin_posts/enrich`. */
export const PROVIDER_PATH_SEGMENT_ALIASES: Readonly<Record<string, string>> = {
  linkedin_posts: 'network_posts',
};

/** The spec's path for a path written with the provider's segment names (the query string kept). */
export function specPath(url: string): string {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const renamed = path
    .split('/')
    .map((segment) => PROVIDER_PATH_SEGMENT_ALIASES[segment] ?? segment)
    .join('/');
  return queryAt === -1 ? renamed : renamed + url.slice(queryAt);
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A copy with aliased keys renamed; an alias given beside its spec name stays, for the check to refuse. */
function renameKeys(object: Json, aliases: Readonly<Record<string, string>>): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(object)) {
    const name = aliases[key];
    out[name !== undefined && !(name in object) ? name : key] = value;
  }
  return out;
}

const BUSINESS_MATCH_KEYS = new Set(Object.keys(BusinessMatchInputSchema.properties));
const PROSPECT_MATCH_KEYS = new Set(Object.keys(ProspectMatchInputSchema.properties));

/**
 * Match items with aliases renamed and unknown keys dropped: the provider's match inputs are open
 * objects (its document sets no `additionalProperties: false` on them), so the service ignores keys it
 * does not know there, where everywhere else it refuses them.
 */
function adaptMatchItems(
  items: unknown,
  aliases: Readonly<Record<string, string>>,
  known: Set<string>,
): unknown {
  if (!Array.isArray(items)) return items;
  return (items as unknown[]).map((item): unknown => {
    if (!isObject(item)) return item;
    const renamed = renameKeys(item, aliases);
    return Object.fromEntries(Object.entries(renamed).filter(([key]) => known.has(key)));
  });
}

/** Body and query of a request, in the spec's names. */
export interface AdaptableParts {
  body?: unknown;
  query?: unknown;
}

/** The request in the spec's names; parts this route does not alias are returned as given. */
export function adaptProviderRequest(route: RouteSpec, parts: AdaptableParts): AdaptableParts {
  const { body, query } = parts;
  switch (route.operationId) {
    case 'fetchBusinesses':
    case 'businessStats':
    case 'fetchProspects':
      if (isObject(body) && isObject(body.filters)) {
        return { body: { ...body, filters: renameKeys(body.filters, PROVIDER_FILTER_ALIASES) }, query };
      }
      return parts;
    case 'matchBusinesses':
      if (!isObject(body)) return parts;
      return {
        body: {
          ...body,
          businesses_to_match: adaptMatchItems(
            body.businesses_to_match,
            PROVIDER_BUSINESS_MATCH_ALIASES,
            BUSINESS_MATCH_KEYS,
          ),
        },
        query,
      };
    case 'matchProspects':
      if (!isObject(body)) return parts;
      return {
        body: {
          ...body,
          prospects_to_match: adaptMatchItems(
            body.prospects_to_match,
            PROVIDER_PROSPECT_MATCH_ALIASES,
            PROSPECT_MATCH_KEYS,
          ),
        },
        query,
      };
    case 'autocomplete': {
      if (!isObject(query) || typeof query.field !== 'string') return parts;
      const field = PROVIDER_FILTER_ALIASES[query.field];
      return field === undefined ? parts : { body, query: { ...query, field } };
    }
    default:
      return parts;
  }
}
