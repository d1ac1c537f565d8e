// Search-export filters: checked against the contract before any call, with the filter's name in every
// message, and the dimensions a search can be sliced on — their domains taken from the contract's
// enums and from the filter's own value lists — plus how a slice's bounds become request filters.
import {
  checkRequest,
  COMPANY_AGE_RANGES,
  COMPANY_SIZES,
  NUMBER_OF_LOCATIONS_RANGES,
  REVENUE_RANGES,
  ROUTES,
  type ValidationDetailItem,
} from '../contract/index.js';
import type { Constraints, Dimension } from './export-slicing.js';
import type { ExportTarget } from './export-types.js';
import { JobSpecError } from './errors.js';

export type { ExportTarget };
export const EXPORT_TARGETS: readonly ExportTarget[] = ['prospects', 'businesses'];

/** A search's `filters` object, as the service takes it. */
export type SearchFilters = Record<string, unknown>;

/** A dimension with its whole domain, as activities need it to build requests. */
export interface DimensionDomain extends Dimension {
  /** `list` and `flag` domains, in order; absent for ranges. */
  values?: (string | boolean)[];
}

/** Largest month count a range dimension covers by default (a record beyond it shows up as a gap). */
export const MAX_MONTHS = 1_199;
/** Domains with at most this many values carry their labels into plans and summaries. */
const MAX_LABELS = 64;

type SplitSource = 'range' | 'flag' | 'filter-list' | readonly string[];

interface SplitField {
  field: string;
  /** `range`/`flag`, an enum, or `filter-list`: only when the filter lists values itself. */
  source: SplitSource;
}

/** Fields a prospect search can be split on, in order of preference. All are single-valued per record. */
const PROSPECT_SPLITS: readonly SplitField[] = [
  { field: 'total_experience_months', source: 'range' },
  { field: 'current_role_months', source: 'range' },
  { field: 'business_id', source: 'filter-list' },
  { field: 'company_size', source: COMPANY_SIZES },
  { field: 'company_revenue', source: REVENUE_RANGES },
  { field: 'country_code', source: 'filter-list' },
  { field: 'region_country_code', source: 'filter-list' },
  { field: 'company_country_code', source: 'filter-list' },
  { field: 'company_region_country_code', source: 'filter-list' },
  { field: 'city_region_country', source: 'filter-list' },
  { field: 'network_category', source: 'filter-list' },
  { field: 'listing_category', source: 'filter-list' },
  { field: 'has_email', source: 'flag' },
  { field: 'has_phone_number', source: 'flag' },
];

/** Fields a business search can be split on; business filters can be negated, so enums get a remainder slice. */
const BUSINESS_SPLITS: readonly SplitField[] = [
  { field: 'company_size', source: COMPANY_SIZES },
  { field: 'company_revenue', source: REVENUE_RANGES },
  { field: 'company_age', source: COMPANY_AGE_RANGES },
  { field: 'number_of_locations', source: NUMBER_OF_LOCATIONS_RANGES },
  { field: 'country_code', source: 'filter-list' },
  { field: 'region_country_code', source: 'filter-list' },
  { field: 'city_region_country', source: 'filter-list' },
  { field: 'city_region', source: 'filter-list' },
  { field: 'network_category', source: 'filter-list' },
  { field: 'listing_category', source: 'filter-list' },
  { field: 'has_website', source: 'flag' },
];

export function splitFields(target: ExportTarget): string[] {
  return (target === 'prospects' ? PROSPECT_SPLITS : BUSINESS_SPLITS).map((s) => s.field);
}

function locText(loc: (string | number)[]): string {
  let text = '';
  for (const part of loc) {
    if (part === '__root__') continue;
    text += typeof part === 'number' ? `[${part}]` : text ? `.${part}` : part;
  }
  return text;
}

function describeProblem(item: ValidationDetailItem): string {
  const where = item.loc.slice(2);
  const name = locText(where) || 'filters';
  if (item.type === 'value_error.extra' && where.length === 1)
    return `filters.${name}: unknown filter (extra fields not permitted)`;
  return `${name === 'filters' ? name : `filters.${name}`}: ${item.msg}`;
}

/**
 * Checks a filters object against the contract's fetch request (schemas and cross-field rules such as
 * `gte` ≤ `lte`); throws `JobSpecError` listing each problem under the filter's name.
 */
export function validateExportFilters(target: ExportTarget, value: unknown, source: string): SearchFilters {
  const route = target === 'prospects' ? ROUTES.fetchProspects : ROUTES.fetchBusinesses;
  const checked = checkRequest(route, { body: { mode: 'full', size: 100, page_size: 100, filters: value } });
  if (!checked.ok) {
    const problems = checked.detail.map(describeProblem);
    throw new JobSpecError(
      `${source}: invalid ${target} filters:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  }
  return (value ?? {}) as SearchFilters;
}

interface ValuesFilter {
  values?: unknown[];
  negate?: boolean;
}

/** A filter's own values, de-duplicated without regard to case and sorted, so the domain is stable. */
function filterValues(field: string, filter: ValuesFilter): string[] {
  const seen = new Map<string, string>();
  for (const raw of filter.values ?? []) {
    const value = String(raw);
    const key = field === 'business_id' ? value : value.toLowerCase();
    if (!seen.has(key)) seen.set(key, value);
  }
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, value]) => value);
}

function listDimension(field: string, values: string[], negatable: boolean): DimensionDomain {
  const labelled = values.length <= MAX_LABELS && values.join('').length <= 2_000;
  return {
    field,
    kind: 'list',
    min: 0,
    max: values.length - 1,
    ...(labelled ? { labels: values } : {}),
    negatable,
    values,
  };
}

/**
 * The dimensions a search can be sliced on, in order of preference (or in the order of `splitBy`):
 * month ranges within the filter's own range, enums (narrowed to the filter's values when it lists
 * some), the filter's own long lists (`business_id`, countries, …), and yes/no flags it leaves open.
 */
export function exportDimensions(
  target: ExportTarget,
  filters: SearchFilters,
  splitBy?: readonly string[],
): DimensionDomain[] {
  const table = target === 'prospects' ? PROSPECT_SPLITS : BUSINESS_SPLITS;
  const chosen = splitBy
    ? splitBy.map((field) => table.find((s) => s.field === field)).filter((s): s is SplitField => !!s)
    : table;
  const dimensions: DimensionDomain[] = [];
  for (const { field, source } of chosen) {
    const given = filters[field] as (ValuesFilter & { gte?: number; lte?: number; value?: boolean }) | null;
    if (source === 'range') {
      const min = Math.max(0, given?.gte ?? 0);
      const max = Math.max(min, given?.lte ?? MAX_MONTHS);
      dimensions.push({ field, kind: 'range', min, max, negatable: false });
    } else if (source === 'flag') {
      if (given) continue;
      dimensions.push({
        field,
        kind: 'flag',
        min: 0,
        max: 1,
        labels: ['false', 'true'],
        negatable: false,
        values: [false, true],
      });
    } else {
      // A negated filter leaves an open-ended domain: nothing to split on.
      if (given?.negate) continue;
      const listed = given?.values && given.values.length > 0 ? filterValues(field, given) : undefined;
      if (listed) {
        if (listed.length > 1) dimensions.push(listDimension(field, listed, false));
      } else if (source !== 'filter-list') {
        dimensions.push(listDimension(field, [...source], target === 'businesses'));
      }
    }
  }
  return dimensions;
}

/** What the workflow needs of a dimension: no long value lists in its history. */
export function dimensionOutline({ values: _values, ...outline }: DimensionDomain): Dimension {
  return outline;
}

/** The request filters of a slice: the search's own filters with the slice's bounds in place. */
export function composeFilters(
  filters: SearchFilters,
  dimensions: readonly DimensionDomain[],
  constraints: Constraints,
): SearchFilters {
  const out: SearchFilters = { ...filters };
  for (const [field, bound] of Object.entries(constraints)) {
    const dimension = dimensions.find((d) => d.field === field);
    if (!dimension) throw new Error(`slice bound on ${field}, which is not a dimension of this export`);
    if ('outside' in bound) {
      out[field] = { values: dimension.values ?? [], negate: true };
    } else if (dimension.kind === 'range') {
      out[field] = { gte: bound.from, lte: bound.to };
    } else if (dimension.kind === 'flag') {
      if (bound.from === bound.to) out[field] = { value: dimension.values?.[bound.from] };
    } else {
      out[field] = { values: (dimension.values ?? []).slice(bound.from, bound.to + 1) };
    }
  }
  return out;
}
