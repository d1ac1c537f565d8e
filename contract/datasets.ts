// The twelve bulk-enrichment datasets (spec 4.3) and the record each returns per business (spec 2.6).
// The pipeline derives Parquet columns from these schemas, so every field states its exact type:
// string / integer / number / boolean / timestamp (string, format date-time) / array / object, and
// every field but the key is optional and nullable, since coverage varies per business.
import { Type, type Static, type TSchema } from 'typebox';
import { CompanySizeSchema, RevenueRangeSchema } from './enums.js';
import { BusinessIdSchema, Maybe, OpenObject, StrictObject, Timestamp } from './schemas/common.js';

/** Dataset names, which are the path segments of `/v1/businesses/<dataset>/bulk_enrich` (spec 4.3). */
export const BULK_DATASETS = [
  'network_posts',
  'workforce_trends',
  'technographics',
  'funding_and_acquisition',
  'company_ratings_by_employees',
  'firmographics',
  'pc_business_challenges_10k',
  'pc_strategy_10k',
  'financial_indicators',
  'pc_competitive_landscape_10k',
  'company_website_keywords',
  'website_changes',
] as const;
export type BulkDataset = (typeof BULK_DATASETS)[number];

export function isBulkDataset(value: string): value is BulkDataset {
  return (BULK_DATASETS as readonly string[]).includes(value);
}

const str = () => Maybe(Type.String());
const int = () => Maybe(Type.Integer());
const num = () => Maybe(Type.Number());
const bool = () => Maybe(Type.Boolean());
const time = () => Maybe(Timestamp());
const strings = () => Maybe(Type.Array(Type.String()));
/** Objects whose keys are not documented but whose values are strings (provider document). */
const stringMap = () => Type.Record(Type.String(), Type.String());

function fields<K extends string, S extends TSchema>(names: readonly K[], make: () => S): Record<K, S> {
  return Object.fromEntries(names.map((name) => [name, make()])) as Record<K, S>;
}

/** Fields named `${prefix}${name}${suffix}` for each name, typed as such. */
function affixedFields<N extends string, P extends string, X extends string, S extends TSchema>(
  names: readonly N[],
  prefix: P,
  suffix: X,
  make: () => S,
): Record<`${P}${N}${X}`, S> {
  return fields(
    names.map((name) => `${prefix}${name}${suffix}`),
    make,
  );
}

/** A post of a company or a prospect; like and comment counts may be missing (spec 2.6, 4.4). */
export const NetworkPostsRecordSchema = StrictObject(
  {
    display_name: str(),
    post_text: str(),
    post_url: str(),
    days_since_posted: int(),
    number_of_comments: int(),
    number_of_likes: int(),
    created_at: time(),
  },
  { title: 'NetworkPostsRecord' },
);

/** Departments of the workforce-trends `perc_<dept>_roles` / `change_in_<dept>_roles` fields (spec 2.6). */
export const WORKFORCE_DEPARTMENTS = [
  'real_estate',
  'design',
  'sales',
  'hr',
  'operations',
  'pr',
  'health',
  'trades',
  'engineering',
  'finance',
  'customer_service',
  'legal',
  'media',
  'marketing',
  'education',
] as const;

export const WorkforceTrendsRecordSchema = StrictObject(
  {
    profiles_found_per_quarter: num(),
    change_in_roles_divisor: num(),
    quarters: time(),
    ...affixedFields(WORKFORCE_DEPARTMENTS, 'perc_', '_roles', num),
    ...affixedFields(WORKFORCE_DEPARTMENTS, 'change_in_', '_roles', num),
  },
  { title: 'WorkforceTrendsRecord' },
);

/** Technology category arrays of technographics (spec 2.6). */
export const TECH_CATEGORIES = [
  'testing_and_qa',
  'sales',
  'prog_langs_and_frameworks',
  'productivity_and_operations',
  'product_and_design',
  'platform_and_storage',
  'operations_software',
  'operations_management',
  'marketing',
  'it_security',
  'it_management',
  'hr',
  'health_tech',
  'finance_and_accounting',
  'ecommerce',
  'devops_and_development',
  'customer_management',
  'computer_networks',
  'communications',
  'collaboration',
  'bi_and_analytics',
] as const;

export const TechnographicsRecordSchema = StrictObject(
  {
    full_tech_stack: strings(),
    full_nested_tech_stack: Maybe(Type.Array(OpenObject())),
    ...fields(TECH_CATEGORIES, strings),
  },
  { title: 'TechnographicsRecord' },
);

export const FundingAndAcquisitionRecordSchema = StrictObject(
  {
    domain: str(),
    company_name: str(),
    acquired_by: str(),
    investors: strings(),
    current_advisors: Maybe(Type.Array(stringMap())),
    funding_rounds_info: Maybe(Type.Array(OpenObject())),
    number_of_advisors: int(),
    num_of_news: int(),
    number_of_investors_for_first_funding_round: int(),
    number_of_investors_for_last_funding_round: int(),
    number_of_funding_rounds: int(),
    ipo_size_usd: str(),
    latest_funding_increase_in_percents: str(),
    last_funding_round_value_usd: str(),
    first_funding_round_value_usd: num(),
    known_funding_total_value: num(),
    first_funding_round_type: str(),
    last_funding_round_type: str(),
    ipo_date: time(),
    first_funding_round_date: time(),
    last_funding_round_date: time(),
    is_ipo: bool(),
  },
  { title: 'FundingAndAcquisitionRecord' },
);

export const CompanyRatingsByEmployeesRecordSchema = StrictObject(
  {
    ...fields(
      [
        'company_name',
        'company_city',
        'company_country_code',
        'company_region',
        'company_street',
        'company_url',
        'company_zip_code',
      ] as const,
      str,
    ),
    ...fields(
      [
        'experience_negative',
        'experience_neutral',
        'experience_positive',
        'ratings_all_reviews_count',
        'ratings_ceo_approval_count',
        'total_reviews_count',
        'ratings_business_outlook',
        'ratings_career_opportunities',
        'ratings_ceo_approval',
        'ratings_compensation_benefits',
        'ratings_culture_values',
        'ratings_diversity_inclusion',
        'ratings_overall',
        'ratings_recommend_to_friend',
        'ratings_senior_management',
        'ratings_work_life_balance',
      ] as const,
      num,
    ),
    // The spec leaves the inner values unspecified (the provider pairs a timestamp with a score).
    company_score: Maybe(Type.Array(Type.Array(Type.Unknown()))),
  },
  { title: 'CompanyRatingsByEmployeesRecord' },
);

export const FirmographicsRecordSchema = StrictObject(
  {
    business_id: BusinessIdSchema,
    ...fields(
      [
        'name',
        'business_description',
        'website',
        'country_name',
        'region_name',
        'city_name',
        'street',
        'zip_code',
        'naics',
        'naics_description',
        'sic_code',
        'sic_code_description',
        'ticker',
      ] as const,
      str,
    ),
    number_of_employees_range: Maybe(CompanySizeSchema),
    yearly_revenue_range: Maybe(RevenueRangeSchema),
    network_industry_category: str(),
    network_profile: str(),
    business_logo: str(),
    locations_distribution: Maybe(Type.Array(OpenObject())),
  },
  { title: 'FirmographicsRecord' },
);

const FILING_FIELDS = [
  'link_to_html',
  'link_to_filing_details',
  'form_type',
  'accession_number',
  'form_description',
  'company_name',
  'cik',
  'ticker',
] as const;

export const PcBusinessChallenges10kRecordSchema = StrictObject(
  {
    ...fields(
      [
        'technological_disruption',
        'company_data_security_breach',
        'company_market_saturation',
        'company_data_security_privacy',
        'company_competition',
        'company_customer_adoption',
      ] as const,
      strings,
    ),
    ...fields(FILING_FIELDS, str),
    filed_at: time(),
  },
  { title: 'PcBusinessChallenges10kRecord' },
);

export const PcStrategy10kRecordSchema = StrictObject(
  {
    ...fields(
      [
        'target_market',
        'company_value_proposition',
        'company_focus',
        'company_partnerships',
        'company_product_development',
        'company_marketing_sales',
      ] as const,
      strings,
    ),
    ...fields(FILING_FIELDS, str),
    filed_at: time(),
  },
  { title: 'PcStrategy10kRecord' },
);

export const PcCompetitiveLandscape10kRecordSchema = StrictObject(
  {
    competitive_differentiation: strings(),
    key_competitors: strings(),
    ...fields(FILING_FIELDS, str),
    filed_at: time(),
  },
  { title: 'PcCompetitiveLandscape10kRecord' },
);

export const FinancialIndicatorsRecordSchema = StrictObject(
  {
    ...fields(
      [
        'asset_turnover',
        'cagr',
        'cogs',
        'ebitda',
        'enterprise_value_over_ebitda',
        'price_earnings_ratio',
        'revenue_yearly',
        'roa',
        'roc',
        'sg_and_a',
        'tsr_1y',
        'tsr_3y',
        'tsr_5y',
        'working_capital',
      ] as const,
      num,
    ),
    earnings_surprises: Maybe(stringMap()),
    peer_companies: Maybe(stringMap()),
    leadership: Maybe(Type.Array(stringMap())),
  },
  { title: 'FinancialIndicatorsRecord' },
);

export const CompanyWebsiteKeywordsRecordSchema = StrictObject(
  {
    url: str(),
    keywords_indicator: str(),
    text_results: Maybe(Type.Array(OpenObject())),
  },
  { title: 'CompanyWebsiteKeywordsRecord' },
);

export const WebsiteChangesRecordSchema = StrictObject(
  {
    url: str(),
    change_description: str(),
    change_implication: str(),
    date: time(),
  },
  { title: 'WebsiteChangesRecord' },
);

/** The record schema of each dataset: the `data` object of one element of `bulk_enrich.data`. */
export const DATASET_RECORD_SCHEMAS = {
  network_posts: NetworkPostsRecordSchema,
  workforce_trends: WorkforceTrendsRecordSchema,
  technographics: TechnographicsRecordSchema,
  funding_and_acquisition: FundingAndAcquisitionRecordSchema,
  company_ratings_by_employees: CompanyRatingsByEmployeesRecordSchema,
  firmographics: FirmographicsRecordSchema,
  pc_business_challenges_10k: PcBusinessChallenges10kRecordSchema,
  pc_strategy_10k: PcStrategy10kRecordSchema,
  financial_indicators: FinancialIndicatorsRecordSchema,
  pc_competitive_landscape_10k: PcCompetitiveLandscape10kRecordSchema,
  company_website_keywords: CompanyWebsiteKeywordsRecordSchema,
  website_changes: WebsiteChangesRecordSchema,
} as const satisfies Record<BulkDataset, TSchema>;

export type DatasetRecordSchemas = typeof DATASET_RECORD_SCHEMAS;
/** The record type of one dataset, e.g. `DatasetRecord<'firmographics'>`. */
export type DatasetRecord<D extends BulkDataset> = Static<DatasetRecordSchemas[D]>;
