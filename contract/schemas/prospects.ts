// Prospect operations (spec 4.4): match, fetch with the filters of spec 2.7 (offset and cursor
// pages), and single-prospect posts enrichment.
import { Type, type Static, type TSchema } from 'typebox';
import { NetworkPostsRecordSchema } from '../datasets.js';
import {
  CompanySizeSchema,
  FetchModeSchema,
  JobDepartmentFilterValueSchema,
  JobLevelSchema,
  RevenueRangeSchema,
} from '../enums.js';
import {
  MAX_EXCLUDE_IDS,
  MAX_FETCH_SIZE,
  MAX_JOB_TITLE_VALUES,
  MAX_MATCH_ITEMS,
  MAX_NAME_LENGTH,
  MAX_PROSPECT_PAGE_SIZE,
  MIN_MATCH_ITEMS,
} from '../limits.js';
import { CountryCodeSchema, CursorPageSchema, NaicsCodeSchema, RegionCodeSchema } from './businesses.js';
import {
  BusinessIdSchema,
  Maybe,
  NetworkPostsParametersSchema,
  Nullable,
  ProspectIdSchema,
  RequestContextField,
  ResponseContextSchema,
  StrictObject,
} from './common.js';
import { FilterTypeField } from './filter-types.js';

// ---- filters (spec 2.7) ---------------------------------------------------------------------------

/** `values`: matches when any entry matches. */
function Values<T extends TSchema>(item: T, title: string, options: { maxItems?: number } = {}) {
  return StrictObject({ type: FilterTypeField('values'), values: Type.Array(item, options) }, { title });
}

/** `gte` and/or `lte`, integers; at least one, and `gte` ≤ `lte` (see rules). */
export const IntegerRangeFilterSchema = StrictObject(
  { type: FilterTypeField('range'), gte: Type.Optional(Type.Integer()), lte: Type.Optional(Type.Integer()) },
  { title: 'IntegerRangeFilter' },
);
/** `value`: whether the field is populated. */
export const BooleanValueFilterSchema = StrictObject(
  { type: FilterTypeField('exists'), value: Type.Boolean() },
  { title: 'BooleanValueFilter' },
);
const TextValues = Values(Type.String(), 'TextValuesFilter');

export const ProspectFiltersSchema = StrictObject(
  {
    has_email: Maybe(BooleanValueFilterSchema),
    has_phone_number: Maybe(BooleanValueFilterSchema),
    /** Whether the employer has a website (provider document; the spec does not list it). */
    has_website: Maybe(BooleanValueFilterSchema),
    job_title: Maybe(
      StrictObject(
        {
          type: FilterTypeField('job_title'),
          values: Type.Array(Type.String(), { maxItems: MAX_JOB_TITLE_VALUES }),
          include_related_job_titles: Maybe(Type.Boolean({ default: false })),
        },
        { title: 'JobTitleFilter' },
      ),
    ),
    job_level: Maybe(Values(JobLevelSchema, 'JobLevelFilter')),
    job_department: Maybe(Values(JobDepartmentFilterValueSchema, 'JobDepartmentFilter')),
    business_id: Maybe(Values(BusinessIdSchema, 'BusinessIdFilter')),
    country_code: Maybe(Values(CountryCodeSchema, 'CountryCodeValuesFilter')),
    region_country_code: Maybe(Values(RegionCodeSchema, 'RegionCodeValuesFilter')),
    city_region_country: Maybe(TextValues),
    company_size: Maybe(Values(CompanySizeSchema, 'CompanySizeValuesFilter')),
    company_revenue: Maybe(Values(RevenueRangeSchema, 'CompanyRevenueValuesFilter')),
    listing_category: Maybe(TextValues),
    naics_category: Maybe(Values(NaicsCodeSchema, 'NaicsCategoryValuesFilter')),
    network_category: Maybe(TextValues),
    company_country_code: Maybe(Values(CountryCodeSchema, 'CountryCodeValuesFilter')),
    company_region_country_code: Maybe(Values(RegionCodeSchema, 'RegionCodeValuesFilter')),
    total_experience_months: Maybe(IntegerRangeFilterSchema),
    current_role_months: Maybe(IntegerRangeFilterSchema),
    company_name: Maybe(Values(Type.String({ maxLength: MAX_NAME_LENGTH }), 'CompanyNameValuesFilter')),
  },
  { title: 'ProspectFilters' },
);
export type ProspectFilters = Static<typeof ProspectFiltersSchema>;
/** Names of the prospect filters whose form is `gte`/`lte`. */
export const PROSPECT_RANGE_FILTERS = ['total_experience_months', 'current_role_months'] as const;

// ---- fetch ----------------------------------------------------------------------------------------

export const FetchProspectsRequestSchema = StrictObject(
  {
    request_context: RequestContextField,
    mode: FetchModeSchema,
    // Optional, 60,000 when absent (provider documentation: pagination).
    size: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_FETCH_SIZE,
        default: MAX_FETCH_SIZE,
        description: 'Maximum records across all pages; default 60,000.',
      }),
    ),
    page_size: Type.Integer({ minimum: 1, maximum: MAX_PROSPECT_PAGE_SIZE }),
    page: Maybe(Type.Integer({ minimum: 1, default: 1, description: '1-based page number (offset mode).' })),
    filters: Maybe(ProspectFiltersSchema),
    exclude: Maybe(Type.Array(ProspectIdSchema, { maxItems: MAX_EXCLUDE_IDS })),
    next_cursor: Maybe(
      Type.String({
        description:
          'Cursor mode when a string: "null" starts from the first record, later pages send the ' +
          "previous response's page.next_cursor; no offset cap. Absent or JSON null: offset mode.",
      }),
    ),
  },
  { title: 'FetchProspectsRequest' },
);

/** Prospect record (spec 2.4); mode `full` fills every field, `preview` fewer. */
export const ProspectSchema = StrictObject(
  {
    prospect_id: ProspectIdSchema,
    professional_email_hashed: Maybe(Type.String()),
    first_name: Type.Optional(Type.String()),
    last_name: Type.Optional(Type.String()),
    full_name: Type.Optional(Type.String()),
    country_name: Type.Optional(Type.String()),
    region_name: Type.Optional(Type.String()),
    city: Type.Optional(Type.String()),
    network: Type.Optional(Type.String({ description: 'Profile address without scheme.' })),
    experience: Type.Optional(Type.Array(Type.String())),
    skills: Type.Optional(Type.Array(Type.String())),
    interests: Maybe(Type.Array(Type.String())),
    company_name: Type.Optional(Type.String()),
    company_website: Type.Optional(Type.String()),
    company_network: Type.Optional(Type.String()),
    job_department: Maybe(Type.String()),
    job_department_array: Type.Optional(Type.Array(Type.String())),
    job_department_main: Type.Optional(Type.String()),
    job_seniority_level: Type.Optional(Type.Array(Nullable(Type.String()))),
    job_level_array: Type.Optional(Type.Array(Type.String())),
    job_level_main: Type.Optional(Type.String()),
    job_title: Type.Optional(Type.String()),
    business_id: Type.Optional(BusinessIdSchema),
    network_url_array: Type.Optional(Type.Array(Type.String())),
  },
  { title: 'Prospect' },
);
export type Prospect = Static<typeof ProspectSchema>;

export const FetchProspectsOffsetResponseSchema = StrictObject(
  {
    response_context: ResponseContextSchema,
    data: Type.Array(ProspectSchema),
    total_results: Type.Integer({ minimum: 0 }),
    page: Type.Integer({ minimum: 0 }),
    total_pages: Type.Integer({ minimum: 0 }),
  },
  { title: 'FetchProspectsOffsetResponse' },
);
export const FetchProspectsCursorResponseSchema = StrictObject(
  {
    response_context: ResponseContextSchema,
    data: Type.Array(ProspectSchema),
    total_results: Type.Integer({ minimum: 0 }),
    page: CursorPageSchema,
  },
  { title: 'FetchProspectsCursorResponse' },
);
/** Offset mode answers with `page` a number; cursor mode with `page: {size, next_cursor}`. */
export const FetchProspectsResponseSchema = Type.Union(
  [FetchProspectsOffsetResponseSchema, FetchProspectsCursorResponseSchema],
  { title: 'FetchProspectsResponse' },
);

// ---- match ----------------------------------------------------------------------------------------

/** Email, phone, network URL, or full name with company name identify a prospect. */
export const ProspectMatchInputSchema = StrictObject(
  {
    business_id: Maybe(Type.String()),
    full_name: Maybe(Type.String()),
    company_name: Maybe(Type.String()),
    email: Maybe(Type.String()),
    phone_number: Maybe(Type.String()),
    network: Maybe(Type.String()),
  },
  { title: 'ProspectMatchInput' },
);
export type ProspectMatchInput = Static<typeof ProspectMatchInputSchema>;

export const MatchProspectsRequestSchema = StrictObject(
  {
    request_context: RequestContextField,
    prospects_to_match: Type.Array(ProspectMatchInputSchema, {
      minItems: MIN_MATCH_ITEMS,
      maxItems: MAX_MATCH_ITEMS,
    }),
  },
  { title: 'MatchProspectsRequest' },
);
export const ProspectMatchResultSchema = StrictObject(
  {
    input: ProspectMatchInputSchema,
    prospect_id: Nullable(ProspectIdSchema),
    error: Type.Optional(Type.String()),
    error_type: Type.Optional(Type.String()),
  },
  { title: 'ProspectMatchResult' },
);
export const MatchProspectsResponseSchema = StrictObject(
  {
    response_context: ResponseContextSchema,
    total_results: Type.Integer({ minimum: 0 }),
    total_matches: Type.Integer({ minimum: 0 }),
    matched_prospects: Type.Array(ProspectMatchResultSchema),
  },
  { title: 'MatchProspectsResponse' },
);

// ---- posts ----------------------------------------------------------------------------------------

export const EnrichProspectPostsRequestSchema = StrictObject(
  {
    request_context: RequestContextField,
    parameters: Maybe(NetworkPostsParametersSchema),
    prospect_id: ProspectIdSchema,
  },
  { title: 'EnrichProspectPostsRequest' },
);
/** One posts record, a single object (not an array); absent or null when the prospect has none. */
export const EnrichProspectPostsResponseSchema = StrictObject(
  {
    response_context: ResponseContextSchema,
    data: Maybe(NetworkPostsRecordSchema),
    entity_id: Type.Optional(Type.String()),
  },
  { title: 'EnrichProspectPostsResponse' },
);
