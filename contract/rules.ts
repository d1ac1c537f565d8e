// Cross-field rules JSON Schema cannot express. Pure functions returning FastAPI-style detail items,
// run after the schemas pass: the sandbox answers 422 with them, the client refuses to send.
import { MAX_FETCH_SIZE } from './limits.js';
import { PROSPECT_RANGE_FILTERS } from './schemas/prospects.js';
import type { ValidationDetailItem } from './schemas/common.js';

/** The parts of a request a rule may look at, already schema-valid. */
export interface RuleInput {
  body?: unknown;
  query?: unknown;
  params?: unknown;
}
export type RequestRule = (request: RuleInput) => ValidationDetailItem[];

/** Pydantic v1 names a model-level (root validator) failure with this location segment. */
export const ROOT_LOC = '__root__';

export const SIZE_BELOW_PAGE_SIZE_MSG = "'size' must be greater than or equal to 'page_size'";
export const RANGE_EMPTY_MSG = "at least one of 'gte' and 'lte' is required";
export const RANGE_INVERTED_MSG = "'gte' must be less than or equal to 'lte'";
export const FULL_NAME_WITHOUT_COMPANY_MSG = "'full_name' must come with 'company_name'";

function rootError(loc: (string | number)[], msg: string): ValidationDetailItem {
  return { loc: [...loc, ROOT_LOC], msg, type: 'value_error' };
}

/** A fetch's `size` (default 60,000) must be at least its `page_size` (provider documentation). */
export function checkFetchSize(body: {
  size?: number | undefined;
  page_size: number;
}): ValidationDetailItem[] {
  return (body.size ?? MAX_FETCH_SIZE) < body.page_size
    ? [rootError(['body'], SIZE_BELOW_PAGE_SIZE_MSG)]
    : [];
}

/** A `gte`/`lte` filter names at least one bound, and `gte` ≤ `lte`. */
export function checkRangeFilter(
  name: string,
  filter: { gte?: number | undefined; lte?: number | undefined },
): ValidationDetailItem[] {
  const loc = ['body', 'filters', name];
  if (filter.gte === undefined && filter.lte === undefined) return [rootError(loc, RANGE_EMPTY_MSG)];
  if (filter.gte !== undefined && filter.lte !== undefined && filter.gte > filter.lte) {
    return [rootError(loc, RANGE_INVERTED_MSG)];
  }
  return [];
}

interface FetchBody {
  size?: number;
  page_size: number;
  filters?: Record<string, unknown> | null;
}

export const checkBusinessFetchRules: RequestRule = ({ body }) => checkFetchSize(body as FetchBody);

export const checkProspectFetchRules: RequestRule = ({ body }) => {
  const fetch = body as FetchBody;
  const detail = checkFetchSize(fetch);
  for (const name of PROSPECT_RANGE_FILTERS) {
    const filter = fetch.filters?.[name] as { gte?: number; lte?: number } | undefined;
    if (filter) detail.push(...checkRangeFilter(name, filter));
  }
  return detail;
};

/** Prospect match: `full_name` identifies a prospect only together with `company_name` (provider documentation). */
export const checkProspectMatchRules: RequestRule = ({ body }) => {
  const items = (
    body as { prospects_to_match: { full_name?: string | null; company_name?: string | null }[] }
  ).prospects_to_match;
  const detail: ValidationDetailItem[] = [];
  items.forEach((item, index) => {
    if (item.full_name && !item.company_name) {
      detail.push(rootError(['body', 'prospects_to_match', index], FULL_NAME_WITHOUT_COMPANY_MSG));
    }
  });
  return detail;
};
