// Generates the businesses of a seed: identity (name, domain, network page), place, industry codes,
// size and revenue, age, tech stack, website keywords, intent topics, and the parent/subsidiary trees
// that group some of them. Each business draws from its own stream; only the uniqueness of domains and
// network slugs depends on the order, which is fixed (index order).
import {
  COMPANY_AGE_RANGES,
  COMPANY_SIZES,
  INTENT_LEVELS,
  NUMBER_OF_LOCATIONS_RANGES,
  REVENUE_RANGES,
  type CompanySize,
  type IntentLevel,
  type RevenueRange,
} from '../../contract/enums.js';
import {
  COMMON_TECH_CATEGORIES,
  INTENT_TOPICS,
  TECHNOLOGIES,
  TECH_CATEGORIES,
  techCategoryLabel,
  type TechCategory,
} from './catalogs.js';
import {
  INDUSTRIES,
  INDUSTRY_WEIGHTS,
  LEGAL_FORMS_BY_COUNTRY,
  NAME_ENDS,
  NAME_MIDDLES,
  NAME_STARTS,
  type Industry,
} from './industries.js';
import { companyNetworkUrl, foldText, normalizeCompanyName } from './normalize.js';
import {
  COUNTRIES,
  COUNTRY_WEIGHTS,
  STREET_NAMES,
  cityRegion,
  cityRegionCountry,
  regionIsoCode,
  type City,
  type Country,
  type Region,
} from './places.js';
import { entityId, seedKey, streamFor, type SeedKey, type SeededRandom } from './random.js';

/** The moment the generated world describes: fixed, so output never depends on the day it is made. */
export const DATA_AS_OF = '2026-01-01T00:00:00.000Z';
export const DATA_AS_OF_MS = Date.parse(DATA_AS_OF);
const AS_OF_YEAR = new Date(DATA_AS_OF_MS).getUTCFullYear();

const SIZE_WEIGHTS = [35, 30, 18, 8, 4, 3.2, 1, 0.8];
const SIZE_BOUNDS: readonly [number, number][] = [
  [1, 10],
  [11, 50],
  [51, 200],
  [201, 500],
  [501, 1000],
  [1001, 5000],
  [5001, 10000],
  [10001, 120000],
];
/** Lowest revenue range index per size rank, and how many ranges above it the company may sit. */
const REVENUE_BASE: readonly [number, number][] = [
  [0, 2],
  [1, 2],
  [3, 2],
  [4, 2],
  [5, 2],
  [6, 3],
  [8, 1],
  [9, 2],
];
const PUBLIC_CHANCE = [0, 0, 0.005, 0.03, 0.1, 0.35, 0.5, 0.7];
const AUDIENCES = [
  'businesses',
  'enterprises',
  'local communities',
  'consumers',
  'public institutions',
  'growing companies',
];
const NO_TECH: Map<TechCategory, string[]> = new Map();
const ADJECTIVES = [
  'Blue',
  'Silver',
  'Golden',
  'North',
  'South',
  'Green',
  'Iron',
  'Bright',
  'Clear',
  'Swift',
  'True',
  'Prime',
  'Grand',
  'Open',
  'Bold',
];
const NOUNS = [
  'Harbor',
  'Summit',
  'Peak',
  'River',
  'Bridge',
  'Field',
  'Falcon',
  'Anchor',
  'Beacon',
  'Compass',
  'Lantern',
  'Meadow',
  'Orchard',
  'Signal',
  'Tide',
  'Vista',
  'Willow',
  'Canyon',
  'Pioneer',
  'Keystone',
];

export interface BusinessRow {
  bix: number;
  businessId: string;
  name: string;
  nameNorm: string;
  /** Brand part of the name ("Velora"), for derived names. */
  stem: string;
  domain: string | null;
  website: string | null;
  networkSlug: string;
  networkUrl: string;
  logo: string;
  description: string;
  industry: Industry;
  country: Country;
  region: Region;
  city: City;
  regionIso: string;
  street: string;
  zipCode: string;
  cityRegionCountry: string;
  cityRegion: string;
  sizeRank: number;
  sizeRange: CompanySize;
  employees: number;
  revenueRange: RevenueRange;
  foundedYear: number;
  ageRange: string;
  locations: number;
  locationsRange: string;
  isPublic: boolean;
  ticker: string | null;
  tech: Map<TechCategory, string[]>;
  keywords: string[];
  intentTopics: { topic: string; level: IntentLevel }[];
  parentBix: number | null;
  rootBix: number | null;
  /** Depth in its tree (0 = root), null when not part of a tree. */
  treeLevel: number | null;
  childBixes: number[];
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function brandStem(r: SeededRandom): string {
  if (r.chance(0.12)) return `${r.pick(ADJECTIVES)} ${r.pick(NOUNS)}`;
  const start = r.pick(NAME_STARTS);
  const middle = r.pick(NAME_MIDDLES);
  const end = r.pick(NAME_ENDS);
  return capitalize(`${start}${middle}${end}`.toLowerCase());
}

const domainLabels = new Map<string, string>();

/** Letters and digits of a name, lower case, accents dropped: "São Paulo" → "saopaulo". */
function domainLabel(text: string): string {
  let label = domainLabels.get(text);
  if (label === undefined) {
    label = foldText(text).replace(/ /g, '');
    if (domainLabels.size < 100_000) domainLabels.set(text, label);
  }
  return label;
}

function ageRangeOf(years: number): string {
  if (years < 3) return COMPANY_AGE_RANGES[0];
  if (years < 6) return COMPANY_AGE_RANGES[1];
  if (years < 10) return COMPANY_AGE_RANGES[2];
  if (years < 20) return COMPANY_AGE_RANGES[3];
  return COMPANY_AGE_RANGES[4];
}

function locationsRangeOf(count: number): string {
  const bounds = [1, 5, 20, 50, 100, 1000];
  for (let i = 0; i < bounds.length; i += 1)
    if (count <= (bounds[i] ?? 0)) return NUMBER_OF_LOCATIONS_RANGES[i] as string;
  return NUMBER_OF_LOCATIONS_RANGES[6];
}

/** Keeps domains and network slugs unique across the generated world. */
export class IdentityRegistry {
  private readonly domains = new Set<string>();
  private readonly slugs = new Set<string>();

  claimDomain(candidates: readonly string[], fallback: string): string {
    for (const candidate of candidates) {
      if (!this.domains.has(candidate)) {
        this.domains.add(candidate);
        return candidate;
      }
    }
    this.domains.add(fallback);
    return fallback;
  }

  claimSlug(candidates: readonly string[], fallback: string): string {
    for (const candidate of candidates) {
      if (!this.slugs.has(candidate)) {
        this.slugs.add(candidate);
        return candidate;
      }
    }
    this.slugs.add(fallback);
    return fallback;
  }
}

function techStack(r: SeededRandom, industry: Industry): Map<TechCategory, string[]> {
  const stack = new Map<TechCategory, string[]>();
  for (const category of TECH_CATEGORIES) {
    const biased = industry.techBias.includes(category);
    const common = COMMON_TECH_CATEGORIES.includes(category);
    const chance = biased ? 0.85 : common ? 0.55 : 0.08;
    if (!r.chance(chance)) continue;
    stack.set(category, r.sample(TECHNOLOGIES[category], r.int(1, biased ? 3 : 2)).sort());
  }
  return stack;
}

export function generateBusiness(
  key: SeedKey,
  bix: number,
  registry: IdentityRegistry,
  identityOnly = false,
): BusinessRow {
  const r = streamFor(key, 'business', bix);
  const industry = r.weighted(INDUSTRIES, INDUSTRY_WEIGHTS);
  const country = r.weighted(COUNTRIES, COUNTRY_WEIGHTS);
  const region = r.pick(country.regions);
  const city = r.pick(region.cities);
  const sizeRank = r.weighted([0, 1, 2, 3, 4, 5, 6, 7], SIZE_WEIGHTS);
  const [low, high] = SIZE_BOUNDS[sizeRank] ?? [1, 10];
  const employees = sizeRank === 7 ? low + Math.floor(r.next() ** 3 * (high - low)) : r.int(low, high);
  const [revBase, revSpread] = REVENUE_BASE[sizeRank] ?? [0, 1];
  const revenueRange = REVENUE_RANGES[Math.min(revBase + r.int(0, revSpread), 11)] as RevenueRange;

  const stem = brandStem(r);
  const word = r.pick(industry.nameWords);
  const shape = r.next();
  const baseName =
    shape < 0.55 ? `${stem} ${word}` : shape < 0.85 ? stem : `${stem} ${r.pick(industry.nameWords)}`;
  const legalForms = LEGAL_FORMS_BY_COUNTRY[country.code] ?? [''];
  const legal = r.chance(0.45) ? r.pick(legalForms) : '';
  const name = legal ? `${baseName} ${legal}` : baseName;

  const hasWebsite = r.chance(sizeRank === 0 ? 0.93 : 0.985);
  const label = domainLabel(stem);
  const labelWithWord = domainLabel(`${stem}${word}`);
  const tlds = [...(industry.tlds ?? []), country.tld, 'com'];
  const tld = r.pick(tlds);
  let domain: string | null = null;
  if (hasWebsite) {
    const candidates = [
      `${shape < 0.55 ? labelWithWord : label}.${tld}`,
      `${labelWithWord}.${tld}`,
      `${label}${domainLabel(word)}.${country.tld}`,
      `${label}-${domainLabel(word)}.com`,
      `${label}${domainLabel(city.name)}.com`,
    ];
    domain = registry.claimDomain(candidates, `${labelWithWord}${bix}.com`);
  }
  const websiteShape = r.next();
  const website = domain
    ? websiteShape < 0.7
      ? `https://www.${domain}`
      : websiteShape < 0.95
        ? `https://${domain}`
        : `http://www.${domain}`
    : null;
  const slugBase = domainLabel(baseName);
  const networkSlug = registry.claimSlug(
    [slugBase, `${slugBase}-${domainLabel(city.name)}`, `${slugBase}-${country.code.toLowerCase()}`],
    `${slugBase}-${bix}`,
  );

  // The draws below come after every draw the identity needs, so skipping them (prospect generation only
  // needs employers' identities) leaves the identities unchanged. One object literal keeps rows in a
  // single fast shape.
  let nameNorm = '';
  let description = '';
  let street = '';
  let zipCode = '';
  let foundedYear = 0;
  let ageYears = 0;
  let locations = 0;
  let isPublic = false;
  let ticker: string | null = null;
  let tech = NO_TECH;
  let keywords: string[] = [];
  let intentTopics: { topic: string; level: IntentLevel }[] = [];
  if (!identityOnly) {
    ageYears = Math.floor(r.next() ** (sizeRank >= 4 ? 0.6 : 1.4) * 70);
    foundedYear = AS_OF_YEAR - ageYears;
    locations =
      sizeRank <= 1
        ? r.chance(0.9)
          ? 1
          : 2
        : sizeRank <= 3
          ? r.int(1, 6)
          : sizeRank <= 5
            ? r.int(3, 60)
            : r.int(20, 1500);
    isPublic = r.chance(Math.min(0.95, (PUBLIC_CHANCE[sizeRank] ?? 0) * industry.publicBias));
    ticker = isPublic ? tickerOf(r, stem, country.code) : null;
    tech = hasWebsite ? techStack(r, industry) : new Map<TechCategory, string[]>();
    keywords = hasWebsite ? r.sample(industry.keywords, r.int(3, 6)) : [];
    intentTopics = r.chance(0.3)
      ? r.sample(INTENT_TOPICS, r.int(1, 3)).map((topic) => ({ topic, level: r.pick(INTENT_LEVELS) }))
      : [];
    const offering = r.pick(industry.offerings);
    const audience = r.pick(AUDIENCES);
    description = `${name} provides ${offering} for ${audience}${sizeRank >= 4 ? ' worldwide' : ''}, from ${city.name}. Founded in ${foundedYear}.`;
    const zipTail = String(r.int(0, 10 ** country.zipDigits - 1)).padStart(country.zipDigits, '0');
    street = `${r.int(1, 980)} ${r.pick(STREET_NAMES)}`;
    zipCode = `${city.zipPrefix}${zipTail}`.trim();
    nameNorm = normalizeCompanyName(name);
  }

  return {
    bix,
    businessId: entityId(key, 'business', bix, 32),
    name,
    nameNorm,
    stem,
    domain,
    website,
    networkSlug,
    networkUrl: companyNetworkUrl(networkSlug),
    logo: `https://logos.example/${networkSlug}.png`,
    description,
    industry,
    country,
    region,
    city,
    regionIso: regionIsoCode(country.code, region.code),
    street,
    zipCode,
    cityRegionCountry: cityRegionCountry(city.name, region.code, country.code),
    cityRegion: cityRegion(city.metro, region.code),
    sizeRank,
    sizeRange: COMPANY_SIZES[sizeRank] as CompanySize,
    employees,
    revenueRange,
    foundedYear,
    ageRange: identityOnly ? '' : ageRangeOf(ageYears),
    locations,
    locationsRange: identityOnly ? '' : locationsRangeOf(locations),
    isPublic,
    ticker,
    tech,
    keywords,
    intentTopics,
    parentBix: null,
    rootBix: null,
    treeLevel: null,
    childBixes: [],
  };
}

/** The main stock exchange (ISO 10383 MIC) of each generated country, all among the provider's MICs. */
const EXCHANGES: Readonly<Record<string, string>> = {
  GB: 'XLON',
  CA: 'XTSE',
  DE: 'XETR',
  FR: 'XPAR',
  IN: 'XNSE',
  AU: 'XASX',
  NL: 'XAMS',
  IL: 'XTAE',
  ES: 'XMAD',
  SE: 'XSTO',
  SG: 'XSES',
  BR: 'BVMF',
  JP: 'XTKS',
  IE: 'XDUB',
  CH: 'XSWX',
  MX: 'XMEX',
};

/** `MIC:SYMBOL`, the provider's ticker form; US four-letter symbols on Nasdaq, shorter ones on NYSE. */
function tickerOf(r: SeededRandom, stem: string, countryCode: string): string {
  const letters = stem.toUpperCase().replace(/[^A-Z]/g, '');
  const length = r.int(3, 4);
  let symbol = letters.slice(0, length);
  while (symbol.length < length) symbol += String.fromCharCode(65 + r.int(0, 25));
  const exchange = EXCHANGES[countryCode] ?? (symbol.length === 4 ? 'XNAS' : 'XNYS');
  return `${exchange}:${symbol}`;
}

const techListCache = new WeakMap<BusinessRow, { technologies: string[]; categories: string[] }>();

/** Technology labels of a business: every technology, and every category in the provider's label form. */
export function techLists(row: BusinessRow): { technologies: string[]; categories: string[] } {
  let lists = techListCache.get(row);
  if (!lists) {
    lists = { technologies: [], categories: [] };
    for (const [category, names] of row.tech) {
      lists.categories.push(techCategoryLabel(category));
      lists.technologies.push(...names);
    }
    techListCache.set(row, lists);
  }
  return lists;
}

/**
 * Groups some businesses into parent/subsidiary trees. Larger companies become roots; subsidiaries are
 * drawn from businesses not yet in a tree, and a few of them have subsidiaries of their own.
 */
export function buildHierarchies(key: SeedKey, rows: BusinessRow[]): void {
  const r = streamFor(key, 'hierarchy', 0);
  const n = rows.length;
  if (n < 4) return;
  const taken = new Uint8Array(n);
  const attach = (parent: BusinessRow, depth: number, budget: number): number => {
    let used = 0;
    const wanted = depth === 1 ? r.int(1, Math.min(6, parent.sizeRank)) : r.int(1, 2);
    for (let k = 0; k < wanted && used < budget; k += 1) {
      let child: BusinessRow | undefined;
      for (let attempt = 0; attempt < 8; attempt += 1) {
        const candidate = rows[r.int(0, n - 1)];
        if (candidate && !taken[candidate.bix] && candidate.sizeRank <= parent.sizeRank) {
          child = candidate;
          break;
        }
      }
      if (!child) continue;
      taken[child.bix] = 1;
      child.parentBix = parent.bix;
      child.rootBix = parent.rootBix;
      child.treeLevel = depth;
      parent.childBixes.push(child.bix);
      used += 1;
      if (depth < 3 && r.chance(depth === 1 ? 0.25 : 0.1)) used += attach(child, depth + 1, budget - used);
    }
    return used;
  };
  for (const row of rows) {
    if (taken[row.bix] || row.sizeRank < 3) continue;
    if (!r.chance(0.12)) continue;
    taken[row.bix] = 1;
    row.rootBix = row.bix;
    row.treeLevel = 0;
    attach(row, 1, 40);
    if (row.childBixes.length === 0) {
      row.rootBix = null;
      row.treeLevel = null;
    }
  }
}

/** Weights that place prospects at employers: bigger companies employ more of the people on record. */
export function employerWeights(rows: readonly BusinessRow[]): Float64Array {
  const cumulative = new Float64Array(rows.length);
  let total = 0;
  for (let i = 0; i < rows.length; i += 1) {
    total += Math.min(Math.sqrt((rows[i] as BusinessRow).employees), 150);
    cumulative[i] = total;
  }
  return cumulative;
}

/** Index of the employer for a uniform draw `u` in [0, 1). */
export function pickEmployer(cumulative: Float64Array, u: number): number {
  const target = u * (cumulative[cumulative.length - 1] ?? 0);
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((cumulative[mid] ?? 0) <= target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Generates the businesses of a seed in memory (the prospects and records need all of them), with their
 * trees. Exposed for the sample-input script and tests, which need the same rows without a database.
 */
export function generateBusinessRows(
  seed: string | number,
  count: number,
  identityOnly = false,
): BusinessRow[] {
  const key = seedKey(seed);
  const registry = new IdentityRegistry();
  const rows: BusinessRow[] = new Array<BusinessRow>(count);
  for (let bix = 0; bix < count; bix += 1) rows[bix] = generateBusiness(key, bix, registry, identityOnly);
  if (!identityOnly) buildHierarchies(key, rows);
  return rows;
}
