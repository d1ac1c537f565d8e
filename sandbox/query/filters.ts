// Filters of business fetch/stats (provider document) as SQL conditions over `businesses b`, and of
// prospect fetch (spec 2.7) as masks over titles, regions and employers for the prospect index. Values of
// one filter are ORed, filters are ANDed; an empty `values` list leaves a filter out.
import {
  canonicalJobDepartment,
  INTENT_LEVELS,
  type BusinessFetchFilters,
  type ProspectFilters,
} from '../../contract/index.js';
import { normalizeCompanyName, titleWords } from '../data/normalize.js';
import { RELATED_FAMILIES, TITLES, type TitleEntry } from '../data/people.js';
import { REGION_LIST } from '../data/places.js';
import { HAS_EMAIL, HAS_PHONE } from '../data/prospect-batches.js';
import type { IndexedTerms, ProspectSearch } from './prospect-index.js';
import { anyOf, containsAny, negated, NEVER, type SqlParams } from './sql.js';

const lower = (values: readonly string[]) => values.map((value) => value.toLowerCase());
const upper = (values: readonly string[]) => values.map((value) => value.toUpperCase());

interface ValuesFilter<T = string> {
  values: T[];
  negate?: boolean | undefined;
}

function present<T>(filter: ValuesFilter<T> | null | undefined): filter is ValuesFilter<T> {
  return filter !== null && filter !== undefined && filter.values.length > 0;
}

function inList(column: string, values: readonly string[], params: SqlParams): string {
  return `${column} IN ${params.list([...new Set(values)])}`;
}

function naicsPrefixes(values: readonly string[], params: SqlParams): string {
  return anyOf([...new Set(values)].map((code) => `starts_with(b.naics, ${params.bind(code)})`));
}

/** Businesses whose name, exact or normalised, is one of the values. */
export function companyNameCondition(values: readonly string[], params: SqlParams): string {
  const norms = values.map(normalizeCompanyName).filter((name) => name.length > 0);
  const parts = [inList('b.name_lc', lower(values), params)];
  if (norms.length > 0) parts.push(inList('b.name_norm', norms, params));
  return anyOf(parts);
}

const INTENT_RANK = new Map<string, number>(INTENT_LEVELS.map((level, rank) => [level, rank]));

/** Extra condition for the `events` filter; null when the database has no events table. */
export type EventsCondition = (
  types: readonly string[],
  sinceIso: string,
  params: SqlParams,
) => string | null;

export interface BusinessFilterContext {
  params: SqlParams;
  /** Condition on events of the last N days, when events exist. */
  events?: EventsCondition;
  /** Current time, epoch ms, for `events.last_occurrence`. */
  now: number;
}

/** Conditions on `businesses b` for the business fetch and stats filters. */
export function businessConditions(
  filters: BusinessFetchFilters | null | undefined,
  context: BusinessFilterContext,
): string[] {
  if (!filters) return [];
  const { params } = context;
  const out: string[] = [];
  const add = <T>(filter: ValuesFilter<T> | null | undefined, build: (values: T[]) => string) => {
    if (present(filter)) out.push(negated(build(filter.values), filter.negate));
  };
  add(filters.country_code, (values) => inList('b.country_code', upper(values), params));
  add(filters.region_country_code, (values) => inList('b.region_code', lower(values), params));
  add(filters.company_size, (values) => inList('b.size_range', values, params));
  add(filters.company_revenue, (values) => inList('b.revenue_range', values, params));
  add(filters.company_age, (values) => inList('b.age_range', values, params));
  add(filters.number_of_locations, (values) => inList('b.locations_range', values, params));
  add(filters.listing_category, (values) => inList('lower(b.listing_category)', lower(values), params));
  add(filters.network_category, (values) => inList('lower(b.network_category)', lower(values), params));
  add(filters.naics_category, (values) => naicsPrefixes(values, params));
  add(filters.company_tech_stack_category, (values) => containsAny('b.tech_categories', values, params));
  add(filters.company_tech_stack_tech, (values) => containsAny('b.tech', values, params));
  add(filters.company_name, (values) => companyNameCondition(values, params));
  add(filters.city_region_country, (values) => inList('lower(b.city_region_country)', lower(values), params));
  add(filters.city_region, (values) => inList('lower(b.city_region)', lower(values), params));
  add(filters.website_keywords, (values) =>
    anyOf(values.map((phrase) => `contains(b.keywords, ${params.bind(phrase.toLowerCase())})`)),
  );
  if (filters.business_intent_topics && filters.business_intent_topics.topics.length > 0) {
    const { topics, topic_intent_level: level, negate } = filters.business_intent_topics;
    const minimum = level ? (INTENT_RANK.get(level) ?? 0) : 0;
    const levels = INTENT_LEVELS.filter((_, rank) => rank >= minimum);
    const parts = topics.flatMap((topic) =>
      level
        ? levels.map((l) => `contains(b.intent_topics, ${params.bind(`|${topic.toLowerCase()}=${l}|`)})`)
        : [`contains(b.intent_topics, ${params.bind(`|${topic.toLowerCase()}=`)})`],
    );
    out.push(negated(anyOf(parts), negate));
  }
  if (filters.events && filters.events.values.length > 0) {
    const since = new Date(context.now - filters.events.last_occurrence * 86_400_000).toISOString();
    const condition = context.events?.(filters.events.values, since, params) ?? NEVER;
    out.push(negated(condition, filters.events.negate));
  }
  if (filters.has_website) {
    out.push(
      negated(
        filters.has_website.value ? 'b.has_website' : '(NOT b.has_website)',
        filters.has_website.negate,
      ),
    );
  }
  return out;
}

/** Title families whose titles contain all words of one of the given titles, with their related families. */
export function relatedTitleFamilies(values: readonly string[]): string[] {
  const families = new Set<string>();
  for (const value of values) {
    const words = titleWords(value);
    if (words.length === 0) continue;
    for (const entry of TITLES) {
      const titleSet = new Set(titleWords(entry.title));
      if (words.every((word) => titleSet.has(word))) {
        families.add(entry.family);
        for (const related of RELATED_FAMILIES[entry.family] ?? []) families.add(related);
      }
    }
  }
  return [...families].sort();
}

function rangeOf(
  range: { gte?: number | undefined; lte?: number | undefined } | null | undefined,
): [number, number] {
  return [range?.gte ?? -Infinity, range?.lte ?? Infinity];
}

function titleMaskWhere(test: (entry: TitleEntry) => boolean): Uint8Array {
  return Uint8Array.from(TITLES, (entry) => (test(entry) ? 1 : 0));
}

/** Allowed catalogue titles for the job title filter; null when it is not given. (Levels and departments
 * are answered by the prospect index's bitmaps.) */
export function titleMask(filters: ProspectFilters): Uint8Array | null {
  if (!filters.job_title || filters.job_title.values.length === 0) return null;
  const wanted = filters.job_title.values.map(titleWords).filter((words) => words.length > 0);
  const related = filters.job_title.include_related_job_titles
    ? new Set(relatedTitleFamilies(filters.job_title.values))
    : new Set<string>();
  return titleMaskWhere((entry) => {
    const words = new Set(titleWords(entry.title));
    return related.has(entry.family) || wanted.some((value) => value.every((word) => words.has(word)));
  });
}

/** Allowed regions of the prospect's own location for the region filter; null when it is not given.
 * (Countries are answered by the prospect index's bitmaps.) */
export function regionMask(filters: ProspectFilters): Uint8Array | null {
  if (!present(filters.region_country_code)) return null;
  const regions = new Set(lower(filters.region_country_code.values));
  return Uint8Array.from(REGION_LIST, (entry) => (regions.has(entry.iso) ? 1 : 0));
}

/** The filters the prospect index answers from bitmaps: levels, departments, countries. */
export function indexedTerms(filters: ProspectFilters): IndexedTerms {
  return {
    levels: present(filters.job_level) ? [...filters.job_level.values] : null,
    departments: present(filters.job_department)
      ? filters.job_department.values.map(canonicalJobDepartment)
      : null,
    countries: present(filters.country_code) ? upper(filters.country_code.values) : null,
    employerCountries: present(filters.company_country_code)
      ? upper(filters.company_country_code.values)
      : null,
  };
}

/** The parts of a prospect search that need no database: titles, regions, contact flags, ranges. */
export function prospectSearchBase(
  filters: ProspectFilters | null | undefined,
): Omit<ProspectSearch, 'employers' | 'excluded'> {
  const f = filters ?? {};
  let flagsSet = 0;
  let flagsClear = 0;
  if (f.has_email) {
    if (f.has_email.value) flagsSet |= HAS_EMAIL;
    else flagsClear |= HAS_EMAIL;
  }
  if (f.has_phone_number) {
    if (f.has_phone_number.value) flagsSet |= HAS_PHONE;
    else flagsClear |= HAS_PHONE;
  }
  return {
    terms: indexedTerms(f),
    titles: titleMask(f),
    regions: regionMask(f),
    flagsSet,
    flagsClear,
    totalMonths: rangeOf(f.total_experience_months),
    currentMonths: rangeOf(f.current_role_months),
  };
}
