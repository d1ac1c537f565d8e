// Autocomplete of filter values: each of the 19 fields has a candidate list built once from the data
// (countries, regions, categories, technologies, locations, company names) or the fixed enums (sizes,
// revenue, age, locations, levels, departments), and a query keeps the candidates whose label or value
// starts with it (any word with `semantic_search`, plus related job titles).
import {
  COMPANY_AGE_RANGES,
  COMPANY_SIZES,
  JOB_DEPARTMENTS,
  JOB_LEVELS,
  NUMBER_OF_LOCATIONS_RANGES,
  REVENUE_RANGES,
  type AutocompleteField,
} from '../../contract/index.js';
import { INTENT_TOPICS, TECHNOLOGIES } from '../data/catalogs.js';
import { foldText } from '../data/normalize.js';
import { TITLES } from '../data/people.js';
import type { SandboxStore } from '../data/store.js';
import { relatedTitleFamilies } from './filters.js';

export interface AutocompleteItem {
  query: string;
  label: string;
  value: string;
}

interface Candidate {
  label: string;
  value: string;
  /** Folded label and value, for matching. */
  search: string;
  words: string[];
  /** For job titles: the title family, for semantic widening. */
  family?: string;
}

/** Most items one call returns. */
export const AUTOCOMPLETE_LIMIT = 20;

const NAICS_SECTORS: Record<string, string> = {
  '22': 'Utilities',
  '23': 'Construction',
  '31': 'Manufacturing',
  '32': 'Manufacturing',
  '33': 'Manufacturing',
  '44': 'Retail Trade',
  '45': 'Retail Trade',
  '48': 'Transportation and Warehousing',
  '51': 'Information',
  '52': 'Finance and Insurance',
  '53': 'Real Estate and Rental and Leasing',
  '54': 'Professional, Scientific, and Technical Services',
  '56': 'Administrative and Support and Waste Management and Remediation Services',
  '61': 'Educational Services',
  '62': 'Health Care and Social Assistance',
  '72': 'Accommodation and Food Services',
  '81': 'Other Services (except Public Administration)',
};

function titleCase(text: string): string {
  return text.replace(
    /(^|[\s-])(\p{L})/gu,
    (_, before: string, letter: string) => before + letter.toUpperCase(),
  );
}

function candidate(label: string, value: string, family?: string): Candidate {
  const search = foldText(`${label} ${value}`);
  return { label, value, search, words: search.split(' '), ...(family ? { family } : {}) };
}

const enumCandidates = (values: readonly string[]) => values.map((value) => candidate(value, value));

export class Autocomplete {
  private constructor(
    private readonly candidates: Map<AutocompleteField, Candidate[]>,
    private readonly store: SandboxStore,
  ) {}

  static async build(store: SandboxStore): Promise<Autocomplete> {
    const distinct = async (sql: string) =>
      (await store.query(sql)).map((row) => Object.values(row).map((v) => String(v)));
    const countries = await distinct(
      'SELECT DISTINCT country_code, country_name FROM businesses ORDER BY country_name',
    );
    const regions = await distinct(
      'SELECT DISTINCT region_code, region_name, country_name FROM businesses ORDER BY country_name, region_name',
    );
    const naics = await distinct('SELECT DISTINCT naics, naics_description FROM businesses ORDER BY naics');
    const listing = await distinct('SELECT DISTINCT listing_category FROM businesses ORDER BY 1');
    const network = await distinct('SELECT DISTINCT network_category FROM businesses ORDER BY 1');
    const locations = await distinct('SELECT DISTINCT city_region_country FROM businesses ORDER BY 1');
    const metros = await distinct('SELECT DISTINCT city_region FROM businesses ORDER BY 1');
    const tech = await distinct(
      `SELECT DISTINCT unnest(string_split(trim(tech, '|'), '|')) AS t FROM businesses WHERE tech <> '||' ORDER BY 1`,
    );
    const techCategories = await distinct(
      `SELECT DISTINCT unnest(string_split(trim(tech_categories, '|'), '|')) AS t FROM businesses WHERE tech_categories <> '||' ORDER BY 1`,
    );

    const naicsCandidates: Candidate[] = [];
    const seenCodes = new Set<string>();
    for (const [code = '', description = ''] of naics) {
      for (const [prefix, label] of [
        [code.slice(0, 2), NAICS_SECTORS[code.slice(0, 2)] ?? description],
        [code.slice(0, 4), description],
        [code, description],
      ] as const) {
        if (seenCodes.has(prefix)) continue;
        seenCodes.add(prefix);
        naicsCandidates.push(candidate(`${prefix} - ${label}`, prefix));
      }
    }
    const titles = new Map<string, string>();
    for (const entry of TITLES) titles.set(entry.title, entry.family);

    const map = new Map<AutocompleteField, Candidate[]>([
      ['country', countries.map(([, name = '']) => candidate(titleCase(name), name))],
      [
        'country_code',
        countries.map(([code = '', name = '']) => candidate(titleCase(name), code.toLowerCase())),
      ],
      [
        'region_country_code',
        regions.map(([code = '', region = '', country = '']) =>
          candidate(`${titleCase(region)}, ${titleCase(country)}`, code),
        ),
      ],
      ['listing_category', listing.map(([value = '']) => candidate(value, value))],
      ['naics_category', naicsCandidates],
      ['network_category', network.map(([value = '']) => candidate(titleCase(value), value))],
      ['company_tech_stack_tech', tech.map(([value = '']) => candidate(value, value))],
      [
        'company_tech_stack_categories',
        techCategories.map(([value = '']) => candidate(titleCase(value), titleCase(value))),
      ],
      [
        'job_title',
        [...titles]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([title, family]) => candidate(title, title, family)),
      ],
      ['company_size', enumCandidates(COMPANY_SIZES)],
      ['company_revenue', enumCandidates(REVENUE_RANGES)],
      ['number_of_locations', enumCandidates(NUMBER_OF_LOCATIONS_RANGES)],
      ['company_age', enumCandidates(COMPANY_AGE_RANGES)],
      ['job_department', enumCandidates(JOB_DEPARTMENTS)],
      ['job_level', enumCandidates(JOB_LEVELS)],
      ['city_region_country', locations.map(([value = '']) => candidate(value, value))],
      // Company names are answered from the database (see completeCompanyName), not held in memory.
      ['company_name', []],
      ['business_intent_topics', enumCandidates(INTENT_TOPICS)],
      ['city_region', metros.map(([value = '']) => candidate(value, value))],
    ]);
    // Technology names come back lower case from the membership text; restore their catalogue spelling.
    map.set('company_tech_stack_tech', restoreTechSpelling(map.get('company_tech_stack_tech') ?? []));
    return new Autocomplete(map, store);
  }

  /**
   * Candidates of `field` matching `query`: label or value starting with it first, then (with
   * `semanticSearch`) any word starting with each query word and, for job titles, related titles.
   */
  async complete(
    field: AutocompleteField,
    query: string,
    semanticSearch: boolean,
  ): Promise<AutocompleteItem[]> {
    if (field === 'company_name') return this.completeCompanyName(query, semanticSearch);
    return this.completeFromList(field, query, semanticSearch);
  }

  /** Names starting with the query (any word with semantic search), shortest first. */
  private async completeCompanyName(query: string, semanticSearch: boolean): Promise<AutocompleteItem[]> {
    const folded = query.toLowerCase().trim();
    const pattern = folded.replace(/[\\%_]/g, (c) => `\\${c}`);
    const rows = await this.store.query(
      `SELECT DISTINCT name, length(name) AS l FROM businesses
       WHERE name_lc LIKE $prefix ESCAPE '\\' ${semanticSearch ? "OR name_lc LIKE $word ESCAPE '\\'" : ''}
       ORDER BY l, name LIMIT ${AUTOCOMPLETE_LIMIT}`,
      { prefix: `${pattern}%`, ...(semanticSearch ? { word: `% ${pattern}%` } : {}) },
    );
    return rows.map((row) => ({ query, label: String(row.name), value: String(row.name) }));
  }

  private completeFromList(
    field: AutocompleteField,
    query: string,
    semanticSearch: boolean,
  ): AutocompleteItem[] {
    const candidates = this.candidates.get(field) ?? [];
    const folded = foldText(query);
    const item = (c: Candidate): AutocompleteItem => ({ query, label: c.label, value: c.value });
    if (folded.length === 0) return candidates.slice(0, AUTOCOMPLETE_LIMIT).map(item);
    const prefix = candidates.filter(
      (c) => c.search.startsWith(folded) || foldText(c.value).startsWith(folded),
    );
    const results = [...prefix];
    const taken = new Set(prefix);
    const words = folded.split(' ');
    const wordMatch = (c: Candidate) => words.every((word) => c.words.some((w) => w.startsWith(word)));
    for (const c of candidates) {
      if (results.length >= AUTOCOMPLETE_LIMIT * 2) break;
      if (!taken.has(c) && (semanticSearch ? wordMatch(c) : c.search.includes(folded))) {
        results.push(c);
        taken.add(c);
      }
    }
    if (semanticSearch && field === 'job_title') {
      // Titles of the matched titles' own families first, then of their related families.
      const own = new Set(results.flatMap((c) => (c.family ? [c.family] : [])));
      const related = new Set(relatedTitleFamilies([query]));
      for (const families of [own, related]) {
        for (const c of candidates) {
          if (!taken.has(c) && c.family && families.has(c.family)) {
            results.push(c);
            taken.add(c);
          }
        }
      }
    }
    return results.slice(0, AUTOCOMPLETE_LIMIT).map(item);
  }
}

const TECH_SPELLING = new Map(
  Object.values(TECHNOLOGIES)
    .flat()
    .map((name) => [name.toLowerCase(), name] as const),
);

function restoreTechSpelling(candidates: Candidate[]): Candidate[] {
  return candidates.map((c) => {
    const name = TECH_SPELLING.get(c.value) ?? c.value;
    return candidate(name, name);
  });
}
