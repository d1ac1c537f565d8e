// The records the service returns for a business: one builder per bulk dataset (spec 2.6), the company
// hierarchy (spec 2.5) and the fetch record. Coverage is partial on purpose: a builder returns null when
// the business has no such data (10-K datasets only for listed companies, funding for a minority, ...),
// and then no row is stored. Field order is fixed, so the same seed gives byte-identical JSON.
import { WORKFORCE_DEPARTMENTS, type BulkDataset } from '../../contract/datasets.js';
import {
  ADVISOR_ROLES,
  COMPETITION_PHRASES,
  FUNDING_ROUND_TYPES,
  INVESTORS,
  POST_OPENERS,
  POST_SUBJECTS,
  RISK_PHRASES,
  STRATEGY_PHRASES,
  TECH_CATEGORIES,
  WEBSITE_CHANGE_KINDS,
  techCategoryLabel,
} from './catalogs.js';
import { DATA_AS_OF_MS, techLists, type BusinessRow } from './businesses.js';
import { FIRST_NAMES, LAST_NAMES } from './people.js';
import { streamFor, type SeedKey, type SeededRandom } from './random.js';

const DAY_MS = 86_400_000;

/** ISO 8601 UTC timestamp, seconds precision: `2025-11-03T14:22:05Z`. */
export function isoTimestamp(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** A moment `days` days (plus a random time of day) before the as-of date. */
function daysAgo(r: SeededRandom, days: number): string {
  return isoTimestamp(DATA_AS_OF_MS - days * DAY_MS - r.int(0, DAY_MS - 1));
}

function personName(r: SeededRandom): string {
  return `${r.pick(FIRST_NAMES)} ${r.pick(LAST_NAMES)}`;
}

function usd(value: number): number {
  return Math.round(value / 1000) * 1000;
}

/** What the dataset builders may look at besides the business itself. */
export interface RecordContext {
  key: SeedKey;
  rows: readonly BusinessRow[];
  /** Indexes of listed companies, for peers. */
  publicBixes: readonly number[];
}

type Builder = (row: BusinessRow, r: SeededRandom, ctx: RecordContext) => Record<string, unknown> | null;

function postsRecord(r: SeededRandom, displayName: string, slug: string): Record<string, unknown> {
  const days = Math.floor(r.next() ** 2 * 180);
  const popular = r.chance(0.85);
  return {
    display_name: displayName,
    post_text: `${r.pick(POST_OPENERS)} ${r.pick(POST_SUBJECTS)}.`,
    post_url: `https://network.example/posts/${slug}-${r.int(100000, 999999)}`,
    days_since_posted: days,
    number_of_comments: popular ? Math.floor(r.next() ** 3 * 120) : null,
    number_of_likes: popular ? Math.floor(r.next() ** 2 * 900) : null,
    created_at: daysAgo(r, days),
  };
}

/** The posts record of a prospect, or null when the prospect has none on record. */
export function prospectPostsRecord(
  r: SeededRandom,
  fullName: string,
  slug: string,
): Record<string, unknown> | null {
  if (!r.chance(0.3)) return null;
  return postsRecord(r, fullName, slug);
}

const firmographics: Builder = (row, r) => {
  if (!r.chance(0.98)) return null;
  const abroad = row.locations > 3 && r.chance(0.4) ? Math.floor(row.locations * r.decimal(0.1, 0.4, 2)) : 0;
  const distribution: Record<string, unknown>[] = [
    { country: row.country.name, country_code: row.country.code, locations: row.locations - abroad },
  ];
  if (abroad > 0) distribution.push({ country: 'other', country_code: null, locations: abroad });
  return {
    business_id: row.businessId,
    name: row.name,
    business_description: row.description,
    website: row.website,
    country_name: row.country.name,
    region_name: row.region.name,
    city_name: row.city.name,
    street: row.street,
    zip_code: row.zipCode,
    naics: row.industry.naics,
    naics_description: row.industry.naicsDescription,
    sic_code: row.industry.sic,
    sic_code_description: row.industry.sicDescription,
    ticker: row.ticker,
    number_of_employees_range: row.sizeRange,
    yearly_revenue_range: row.revenueRange,
    network_industry_category: row.industry.networkCategory,
    // A URI with its scheme here (provider document: format uri), where prospects' addresses have none.
    network_profile: `https://${row.networkUrl}`,
    business_logo: row.logo,
    locations_distribution: distribution,
  };
};

const technographics: Builder = (row, r) => {
  if (row.tech.size === 0 || !r.chance(0.85)) return null;
  const { technologies } = techLists(row);
  const record: Record<string, unknown> = {
    full_tech_stack: technologies,
    full_nested_tech_stack: [...row.tech].map(([category, names]) => ({
      category: techCategoryLabel(category),
      technologies: names,
    })),
  };
  for (const category of TECH_CATEGORIES) record[category] = row.tech.get(category) ?? [];
  return record;
};

const workforceTrends: Builder = (row, r) => {
  if (!r.chance(row.sizeRank >= 1 ? 0.65 : 0.2)) return null;
  const shares = WORKFORCE_DEPARTMENTS.map(() => r.next() ** 3);
  const total = shares.reduce((a, b) => a + b, 0);
  const record: Record<string, unknown> = {
    profiles_found_per_quarter: Math.max(1, Math.round(row.employees * r.decimal(0.3, 0.8, 2))),
    change_in_roles_divisor: Math.max(1, Math.round(row.employees * r.decimal(0.25, 0.7, 2))),
    quarters: '2025-10-01T00:00:00Z',
  };
  WORKFORCE_DEPARTMENTS.forEach((dept, i) => {
    record[`perc_${dept}_roles`] = Math.round(((shares[i] ?? 0) / total) * 10000) / 100;
  });
  for (const dept of WORKFORCE_DEPARTMENTS) record[`change_in_${dept}_roles`] = r.decimal(-15, 25, 2);
  return record;
};

const fundingAndAcquisition: Builder = (row, r, ctx) => {
  const parent = row.parentBix !== null ? ctx.rows[row.parentBix] : undefined;
  if (!(row.isPublic ? r.chance(0.9) : parent ? r.chance(0.6) : r.chance(0.12))) return null;
  const rounds = r.int(1, row.isPublic ? 6 : 4);
  let date = DATA_AS_OF_MS - r.int(200, 3000) * DAY_MS;
  let value = r.int(200, 3000) * 1000;
  const info: Record<string, unknown>[] = [];
  const investors = new Set<string>();
  for (let i = 0; i < rounds; i += 1) {
    const roundInvestors = r.sample(INVESTORS, r.int(1, 4));
    roundInvestors.forEach((name) => investors.add(name));
    info.push({
      round_type: FUNDING_ROUND_TYPES[Math.min(i + (value > 5e6 ? 1 : 0), FUNDING_ROUND_TYPES.length - 1)],
      date: isoTimestamp(date),
      value_usd: usd(value),
      investors: roundInvestors,
    });
    date += r.int(200, 700) * DAY_MS;
    value *= r.decimal(1.5, 4, 2);
    if (date > DATA_AS_OF_MS) break;
  }
  const first = info[0] as { round_type: string; date: string; value_usd: number; investors: string[] };
  const last = info[info.length - 1] as typeof first;
  const previous = info.length > 1 ? (info[info.length - 2] as typeof first) : undefined;
  const total = info.reduce((sum, round) => sum + (round.value_usd as number), 0);
  const advisors = r.sample(ADVISOR_ROLES, r.int(0, 3)).map((title) => ({ name: personName(r), title }));
  const ipoDate = row.isPublic ? isoTimestamp(DATA_AS_OF_MS - r.int(300, 7000) * DAY_MS) : null;
  return {
    domain: row.domain,
    company_name: row.name,
    acquired_by: parent ? parent.name : null,
    investors: [...investors].sort(),
    current_advisors: advisors,
    funding_rounds_info: info,
    number_of_advisors: advisors.length,
    num_of_news: r.int(0, 40),
    number_of_investors_for_first_funding_round: first.investors.length,
    number_of_investors_for_last_funding_round: last.investors.length,
    number_of_funding_rounds: info.length,
    ipo_size_usd: row.isPublic ? String(usd(r.int(50, 2000) * 1e6)) : null,
    latest_funding_increase_in_percents: previous
      ? String(Math.round((last.value_usd / previous.value_usd - 1) * 100))
      : null,
    last_funding_round_value_usd: String(last.value_usd),
    first_funding_round_value_usd: first.value_usd,
    known_funding_total_value: total,
    first_funding_round_type: first.round_type,
    last_funding_round_type: last.round_type,
    ipo_date: ipoDate,
    first_funding_round_date: first.date,
    last_funding_round_date: last.date,
    is_ipo: row.isPublic,
  };
};

const companyRatings: Builder = (row, r) => {
  if (!r.chance(row.sizeRank >= 2 ? 0.55 : 0.12)) return null;
  const reviews = Math.max(3, Math.round(Math.sqrt(row.employees) * r.decimal(0.5, 4, 2)));
  const overall = r.decimal(2.4, 4.8, 1);
  const rating = () => Math.min(5, Math.max(1, Math.round((overall + r.normal() * 0.4) * 10) / 10));
  const positive = r.decimal(0.3, 0.8, 2);
  const negative = Math.round(r.decimal(0.05, 1 - positive, 2) * 100) / 100;
  const scores: [string, number][] = [];
  for (let q = 3; q >= 0; q -= 1) scores.push([isoTimestamp(DATA_AS_OF_MS - q * 91 * DAY_MS), rating()]);
  return {
    company_name: row.name,
    company_city: row.city.name,
    company_country_code: row.country.code.toLowerCase(),
    company_region: row.region.name,
    company_street: row.street,
    company_url: row.website,
    company_zip_code: row.zipCode,
    experience_negative: negative,
    experience_neutral: Math.round((1 - positive - negative) * 100) / 100,
    experience_positive: positive,
    ratings_all_reviews_count: reviews,
    ratings_ceo_approval_count: Math.round(reviews * r.decimal(0.3, 0.9, 2)),
    total_reviews_count: reviews + r.int(0, 20),
    ratings_business_outlook: r.decimal(0.3, 0.95, 2),
    ratings_career_opportunities: rating(),
    ratings_ceo_approval: r.decimal(0.3, 0.98, 2),
    ratings_compensation_benefits: rating(),
    ratings_culture_values: rating(),
    ratings_diversity_inclusion: rating(),
    ratings_overall: overall,
    ratings_recommend_to_friend: r.decimal(0.3, 0.95, 2),
    ratings_senior_management: rating(),
    ratings_work_life_balance: rating(),
    company_score: scores,
  };
};

function filing(row: BusinessRow, r: SeededRandom): Record<string, unknown> {
  const cik = String(1_000_000 + (row.bix % 8_999_999)).padStart(10, '0');
  const accession = `${cik}-25-${String(r.int(1, 999999)).padStart(6, '0')}`;
  return {
    link_to_html: `https://filings.example/archives/${cik}/${accession}.htm`,
    link_to_filing_details: `https://filings.example/archives/${cik}/${accession}-index.htm`,
    form_type: '10-K',
    accession_number: accession,
    form_description: 'Annual report pursuant to Section 13 or 15(d)',
    company_name: row.name,
    cik,
    ticker: row.ticker,
  };
}

function phrases(
  r: SeededRandom,
  table: Readonly<Record<string, readonly string[]>>,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [field, options] of Object.entries(table))
    out[field] = r.sample(options, r.int(1, Math.min(3, options.length)));
  return out;
}

function filedAt(r: SeededRandom): string {
  return isoTimestamp(Date.UTC(2025, 1, 10) + r.int(0, 50) * DAY_MS + r.int(0, DAY_MS - 1));
}

const businessChallenges: Builder = (row, r) => {
  if (!row.isPublic || !r.chance(0.95)) return null;
  return { ...phrases(r, RISK_PHRASES), ...filing(row, r), filed_at: filedAt(r) };
};

const strategy: Builder = (row, r) => {
  if (!row.isPublic || !r.chance(0.95)) return null;
  return { ...phrases(r, STRATEGY_PHRASES), ...filing(row, r), filed_at: filedAt(r) };
};

const competitiveLandscape: Builder = (row, r, ctx) => {
  if (!row.isPublic || !r.chance(0.9)) return null;
  const competitors = r
    .sample(ctx.publicBixes, 4)
    .filter((bix) => bix !== row.bix)
    .slice(0, 3)
    .map((bix) => (ctx.rows[bix] as BusinessRow).name);
  return {
    competitive_differentiation: r.sample(COMPETITION_PHRASES.competitive_differentiation ?? [], r.int(1, 3)),
    key_competitors: competitors,
    ...filing(row, r),
    filed_at: filedAt(r),
  };
};

const financialIndicators: Builder = (row, r, ctx) => {
  if (!row.isPublic || !r.chance(0.95)) return null;
  const revenue = row.employees * r.int(90, 450) * 1000;
  const ebitda = Math.round(revenue * r.decimal(-0.05, 0.35, 3));
  const peers: Record<string, string> = {};
  for (const bix of r.sample(ctx.publicBixes, 4)) {
    const peer = ctx.rows[bix] as BusinessRow;
    if (peer.bix !== row.bix && peer.ticker) peers[peer.ticker] = peer.name;
  }
  const surprises: Record<string, string> = {};
  for (const quarter of ['2025-Q1', '2025-Q2', '2025-Q3']) surprises[quarter] = `${r.decimal(-12, 15, 1)}%`;
  return {
    asset_turnover: r.decimal(0.2, 2.5, 2),
    cagr: r.decimal(-0.1, 0.4, 3),
    cogs: Math.round(revenue * r.decimal(0.3, 0.75, 3)),
    ebitda,
    enterprise_value_over_ebitda: ebitda > 0 ? r.decimal(4, 40, 1) : null,
    price_earnings_ratio: ebitda > 0 ? r.decimal(6, 60, 1) : null,
    revenue_yearly: revenue,
    roa: r.decimal(-0.05, 0.2, 3),
    roc: r.decimal(-0.05, 0.3, 3),
    sg_and_a: Math.round(revenue * r.decimal(0.1, 0.35, 3)),
    tsr_1y: r.decimal(-0.4, 0.6, 3),
    tsr_3y: r.decimal(-0.5, 1.2, 3),
    tsr_5y: r.decimal(-0.6, 2.5, 3),
    working_capital: Math.round(revenue * r.decimal(-0.05, 0.3, 3)),
    earnings_surprises: surprises,
    peer_companies: peers,
    leadership: [
      { name: personName(r), title: 'Chief Executive Officer' },
      { name: personName(r), title: 'Chief Financial Officer' },
    ],
  };
};

const websiteKeywords: Builder = (row, r) => {
  if (!row.website || !r.chance(0.6)) return null;
  return {
    url: row.website,
    keywords_indicator: row.keywords.length >= 5 ? 'high' : row.keywords.length >= 4 ? 'medium' : 'low',
    text_results: row.keywords.map((keyword) => ({
      keyword,
      text: `${row.name} ${r.pick(['offers', 'specialises in', 'is known for', 'talks about'])} ${keyword}.`,
      url: `${row.website}/${r.pick(['', 'about', 'services', 'blog', 'solutions'])}`.replace(/\/$/, ''),
    })),
  };
};

const websiteChanges: Builder = (row, r) => {
  if (!row.website || !r.chance(0.35)) return null;
  const change = r.pick(WEBSITE_CHANGE_KINDS);
  return {
    url: row.website,
    change_description: change.description,
    change_implication: change.implication,
    date: daysAgo(r, r.int(1, 120)),
  };
};

const networkPosts: Builder = (row, r) => {
  if (!r.chance(row.sizeRank >= 2 ? 0.6 : 0.3)) return null;
  return postsRecord(r, row.name, row.networkSlug);
};

const BUILDERS: Record<BulkDataset, Builder> = {
  network_posts: networkPosts,
  workforce_trends: workforceTrends,
  technographics,
  funding_and_acquisition: fundingAndAcquisition,
  company_ratings_by_employees: companyRatings,
  firmographics,
  pc_business_challenges_10k: businessChallenges,
  pc_strategy_10k: strategy,
  financial_indicators: financialIndicators,
  pc_competitive_landscape_10k: competitiveLandscape,
  company_website_keywords: websiteKeywords,
  website_changes: websiteChanges,
};

/** The record of `dataset` for a business, or null when the business has no such data. */
export function datasetRecord(
  dataset: BulkDataset,
  row: BusinessRow,
  ctx: RecordContext,
): Record<string, unknown> | null {
  return BUILDERS[dataset](row, streamFor(ctx.key, `dataset:${dataset}`, row.bix), ctx);
}

/** The company hierarchy record (spec 2.5) of a business in a tree; null for a standalone business. */
export function hierarchyRecord(
  row: BusinessRow,
  rows: readonly BusinessRow[],
): Record<string, unknown> | null {
  if (row.rootBix === null) return null;
  const root = rows[row.rootBix] as BusinessRow;
  const parent = row.parentBix !== null ? (rows[row.parentBix] as BusinessRow) : null;
  const levels: Record<string, unknown>[] = [];
  let current: BusinessRow[] = [root];
  for (let level = 0; current.length > 0; level += 1) {
    levels.push({
      level,
      companies: current.map((company) => {
        const up = company.parentBix !== null ? (rows[company.parentBix] as BusinessRow) : null;
        return {
          id: company.businessId,
          name: company.name,
          parent_id: up?.businessId ?? null,
          parent_name: up?.name ?? null,
        };
      }),
    });
    current = current.flatMap((company) => company.childBixes.map((bix) => rows[bix] as BusinessRow));
  }
  return {
    business_id: row.businessId,
    parent_company_id: parent?.businessId ?? null,
    parent_company_name: parent?.name ?? null,
    ultimate_parent_id: root.businessId,
    ultimate_parent_name: root.name,
    subsidiaries: row.childBixes.map((bix) => {
      const child = rows[bix] as BusinessRow;
      return { id: child.businessId, name: child.name };
    }),
    organization_tree: levels,
  };
}

/** The business record of `POST /v1/businesses` (full mode). */
export function fetchRecord(row: BusinessRow): Record<string, unknown> {
  return {
    business_id: row.businessId,
    name: row.name,
    domain: row.domain,
    logo: row.logo,
    country_name: row.country.name,
    region: row.region.name,
    city_name: row.city.name,
    number_of_employees_range: row.sizeRange,
    yearly_revenue_range: row.revenueRange,
    website: row.website,
    business_description: row.description,
    naics: Number(row.industry.naics),
    naics_description: row.industry.naicsDescription,
    sic_code: row.industry.sic,
    sic_code_description: row.industry.sicDescription,
    business_intent_topics: row.intentTopics.map((t) => ({ topic: t.topic, intent_level: t.level })),
  };
}
