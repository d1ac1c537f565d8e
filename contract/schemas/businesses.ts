// Business operations other than bulk enrichment (spec 4.2): match, fetch, stats, autocomplete,
// events, enrollments, company hierarchy. Fields the spec does not show follow the provider document.
import { Type, type Static, type TSchema } from 'typebox';
import {
  AutocompleteFieldSchema,
  BusinessEventTypeSchema,
  CompanyAgeRangeSchema,
  CompanySizeSchema,
  ENTITY_TYPES,
  FetchModeSchema,
  IntentLevelSchema,
  NumberOfLocationsRangeSchema,
  RequestStatusSchema,
  RevenueRangeSchema,
} from '../enums.js';
import {
  MAX_BUSINESS_PAGE_SIZE,
  MAX_ENROLLMENT_IDS,
  MAX_EVENT_BUSINESS_IDS,
  MAX_EXCLUDE_IDS,
  MAX_FETCH_SIZE,
  MAX_MATCH_ITEMS,
  MAX_NAME_LENGTH,
  MIN_ENROLLMENT_KEY_LENGTH,
  MIN_MATCH_ITEMS,
} from '../limits.js';
import {
  BusinessIdSchema,
  Maybe,
  Nullable,
  OpenObject,
  RequestContextField,
  ResponseContextSchema,
  StrictObject,
  Timestamp,
} from './common.js';
import { FilterTypeField } from './filter-types.js';

// ---- match ----------------------------------------------------------------------------------------

/** One set of business attributes to resolve; matching is by domain, URL, network URL, name + domain. */
export const BusinessMatchInputSchema = StrictObject(
  {
    name: Maybe(Type.String({ maxLength: MAX_NAME_LENGTH })),
    domain: Maybe(Type.String()),
    url: Maybe(Type.String()),
    network_url: Maybe(Type.String()),
  },
  { title: 'BusinessMatchInput' },
);
export type BusinessMatchInput = Static<typeof BusinessMatchInputSchema>;

export const MatchBusinessesRequestSchema = StrictObject(
  {
    request_context: RequestContextField,
    businesses_to_match: Type.Array(BusinessMatchInputSchema, {
      minItems: MIN_MATCH_ITEMS,
      maxItems: MAX_MATCH_ITEMS,
    }),
  },
  { title: 'MatchBusinessesRequest' },
);

/** Same position as its input; `business_id` is null when nothing matched. */
export const BusinessMatchResultSchema = StrictObject(
  {
    input: BusinessMatchInputSchema,
    business_id: Nullable(BusinessIdSchema),
    error: Type.Optional(Type.String()),
    error_type: Type.Optional(Type.String()),
  },
  { title: 'BusinessMatchResult' },
);

export const MatchBusinessesResponseSchema = StrictObject(
  {
    response_context: ResponseContextSchema,
    total_results: Type.Integer({ minimum: 0, description: 'Number of input items.' }),
    total_matches: Type.Integer({ minimum: 0, description: 'Number of items with a business_id.' }),
    matched_businesses: Type.Array(BusinessMatchResultSchema),
  },
  { title: 'MatchBusinessesResponse' },
);

// ---- fetch filters (provider document, renamed) ---------------------------------------------------

/** `values` matches when any entry matches; `negate` inverts the filter. */
function Includes<T extends TSchema>(item: T, title: string) {
  return StrictObject(
    { type: FilterTypeField('values'), values: Type.Array(item), negate: Type.Optional(Type.Boolean()) },
    { title },
  );
}

/** Alpha-2 country code, either case. */
export const CountryCodeSchema = Type.String({ pattern: '^[A-Za-z]{2}$', title: 'CountryCode' });
/** ISO 3166-2 region code formatted country-region, e.g. `US-CA`, either case. */
export const RegionCodeSchema = Type.String({
  pattern: '^[A-Za-z]{2}-[A-Za-z0-9]{1,3}$',
  title: 'RegionCode',
});
/** NAICS code with 2 to 6 digits. */
export const NaicsCodeSchema = Type.String({ pattern: '^\\d{2,6}$', title: 'NaicsCode' });

export const TextIncludesFilterSchema = Includes(Type.String(), 'TextIncludesFilter');
export const ExistsFilterSchema = StrictObject(
  { type: FilterTypeField('exists'), value: Type.Boolean(), negate: Type.Optional(Type.Boolean()) },
  { title: 'ExistsFilter' },
);

export const BusinessFetchFiltersSchema = StrictObject(
  {
    country_code: Maybe(Includes(CountryCodeSchema, 'CountryCodeFilter')),
    region_country_code: Maybe(Includes(RegionCodeSchema, 'RegionCodeFilter')),
    company_size: Maybe(Includes(CompanySizeSchema, 'CompanySizeFilter')),
    company_revenue: Maybe(Includes(RevenueRangeSchema, 'CompanyRevenueFilter')),
    company_age: Maybe(Includes(CompanyAgeRangeSchema, 'CompanyAgeFilter')),
    listing_category: Maybe(TextIncludesFilterSchema),
    naics_category: Maybe(Includes(NaicsCodeSchema, 'NaicsCategoryFilter')),
    network_category: Maybe(TextIncludesFilterSchema),
    company_tech_stack_category: Maybe(TextIncludesFilterSchema),
    company_tech_stack_tech: Maybe(TextIncludesFilterSchema),
    company_name: Maybe(Includes(Type.String({ maxLength: MAX_NAME_LENGTH }), 'CompanyNameFilter')),
    number_of_locations: Maybe(Includes(NumberOfLocationsRangeSchema, 'NumberOfLocationsFilter')),
    city_region_country: Maybe(TextIncludesFilterSchema),
    city_region: Maybe(TextIncludesFilterSchema),
    website_keywords: Maybe(TextIncludesFilterSchema),
    business_intent_topics: Maybe(
      StrictObject(
        {
          type: FilterTypeField('business_intent_topics'),
          topics: Type.Array(Type.String(), { minItems: 1 }),
          topic_intent_level: Maybe(IntentLevelSchema),
          negate: Type.Optional(Type.Boolean()),
        },
        { title: 'BusinessIntentTopicsFilter' },
      ),
    ),
    events: Maybe(
      StrictObject(
        {
          type: FilterTypeField('events'),
          values: Type.Array(BusinessEventTypeSchema),
          last_occurrence: Type.Integer({ description: 'Only events of the last N days.' }),
          negate: Type.Optional(Type.Boolean()),
        },
        { title: 'BusinessEventsFilter' },
      ),
    ),
    has_website: Maybe(ExistsFilterSchema),
  },
  { title: 'BusinessFetchFilters' },
);
export type BusinessFetchFilters = Static<typeof BusinessFetchFiltersSchema>;

// ---- fetch ----------------------------------------------------------------------------------------

export const FetchBusinessesRequestSchema = StrictObject(
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
    page_size: Type.Integer({ minimum: 1, maximum: MAX_BUSINESS_PAGE_SIZE }),
    page: Maybe(Type.Integer({ minimum: 1, default: 1, description: '1-based page number (offset mode).' })),
    exclude: Maybe(Type.Array(BusinessIdSchema, { maxItems: MAX_EXCLUDE_IDS })),
    filters: Maybe(BusinessFetchFiltersSchema),
    next_cursor: Maybe(
      Type.String({
        description:
          'Cursor mode when a string: "null" starts from the first record, later pages send the ' +
          "previous response's page.next_cursor. Absent or JSON null: offset mode with `page`.",
      }),
    ),
  },
  { title: 'FetchBusinessesRequest' },
);

/** A business as the fetch returns it: minimal data for filtering, deduplication and previews. */
export const BusinessSchema = StrictObject(
  {
    business_id: BusinessIdSchema,
    name: Type.String({ maxLength: MAX_NAME_LENGTH }),
    domain: Maybe(Type.String()),
    logo: Maybe(Type.String()),
    country_name: Maybe(Type.String()),
    region: Maybe(Type.String()),
    city_name: Maybe(Type.String()),
    number_of_employees_range: Maybe(CompanySizeSchema),
    yearly_revenue_range: Maybe(RevenueRangeSchema),
    website: Maybe(Type.String()),
    business_description: Maybe(Type.String()),
    naics: Maybe(
      Type.Integer({ description: 'An integer here, a string in firmographics (provider document).' }),
    ),
    naics_description: Maybe(Type.String()),
    sic_code: Maybe(Type.String({ pattern: '^\\d{2,4}$' })),
    sic_code_description: Maybe(Type.String()),
    business_intent_topics: Maybe(Type.Array(OpenObject())),
    events: Maybe(Type.Array(Type.String())),
  },
  { title: 'Business' },
);
export type Business = Static<typeof BusinessSchema>;

/** Cursor-mode page information: records in this page, and the cursor of the next (null at the end). */
export const CursorPageSchema = StrictObject(
  { size: Type.Integer({ minimum: 0 }), next_cursor: Maybe(Type.String()) },
  { title: 'CursorPage' },
);

export const FetchBusinessesOffsetResponseSchema = StrictObject(
  {
    response_context: ResponseContextSchema,
    data: Type.Array(BusinessSchema),
    total_results: Type.Integer({ minimum: 0 }),
    page: Type.Integer({ minimum: 0 }),
    total_pages: Type.Integer({ minimum: 0 }),
  },
  { title: 'FetchBusinessesOffsetResponse' },
);
export const FetchBusinessesCursorResponseSchema = StrictObject(
  {
    response_context: ResponseContextSchema,
    data: Type.Array(BusinessSchema),
    total_results: Type.Integer({ minimum: 0 }),
    page: CursorPageSchema,
  },
  { title: 'FetchBusinessesCursorResponse' },
);
/** First form: offset pages (`page` is a number); second form: cursor pages (`page` is an object). */
export const FetchBusinessesResponseSchema = Type.Union(
  [FetchBusinessesOffsetResponseSchema, FetchBusinessesCursorResponseSchema],
  { title: 'FetchBusinessesResponse' },
);

// ---- stats ----------------------------------------------------------------------------------------

export const BusinessStatsRequestSchema = StrictObject(
  { request_context: RequestContextField, filters: BusinessFetchFiltersSchema },
  { title: 'BusinessStatsRequest' },
);

/** Counts nested two levels deep: outer key → inner key → number of businesses. */
const NestedCounts = (description: string) =>
  Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer({ minimum: 0 })), { description });

export const BusinessStatsResponseSchema = StrictObject(
  {
    response_context: ResponseContextSchema,
    total_results: Type.Integer({ minimum: 0 }),
    stats: StrictObject(
      {
        business_categories_per_location: NestedCounts('network category → company country code → count'),
        revenue_per_category: NestedCounts('network category → revenue range → count'),
        number_of_employees_per_category: NestedCounts('network category → employee range → count'),
      },
      { title: 'BusinessStats' },
    ),
  },
  { title: 'BusinessStatsResponse' },
);

// ---- autocomplete ---------------------------------------------------------------------------------

export const AutocompleteQuerySchema = Type.Object(
  {
    field: AutocompleteFieldSchema,
    query: Type.Optional(Type.String({ default: '' })),
    semantic_search: Type.Optional(Type.Boolean({ default: false })),
  },
  { title: 'AutocompleteQuery' },
);
export const AutocompleteItemSchema = StrictObject(
  { query: Type.String(), label: Type.String(), value: Type.String() },
  { title: 'AutocompleteItem' },
);
export const AutocompleteResponseSchema = Type.Array(AutocompleteItemSchema, {
  title: 'AutocompleteResponse',
});

// ---- events ---------------------------------------------------------------------------------------

/** ISO 8601 date (`YYYY-MM-DD`) or date-time, time zone optional (provider document). */
export const EventTimeBoundSchema = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})?)?$',
  title: 'EventTimeBound',
});

export const FetchBusinessEventsRequestSchema = StrictObject(
  {
    request_context: RequestContextField,
    entity_type: Type.Optional(Type.Enum(ENTITY_TYPES, { default: 'business' })),
    event_types: Type.Array(BusinessEventTypeSchema, { minItems: 1 }),
    timestamp_from: Maybe(EventTimeBoundSchema),
    timestamp_to: Maybe(EventTimeBoundSchema),
    business_ids: Type.Array(BusinessIdSchema, {
      minItems: 1,
      maxItems: MAX_EVENT_BUSINESS_IDS,
      uniqueItems: true,
    }),
  },
  { title: 'FetchBusinessEventsRequest' },
);

/** One event of a business. */
export const BusinessEventSchema = StrictObject(
  {
    event_id: Type.String(),
    event_name: BusinessEventTypeSchema,
    event_time: Timestamp(),
    business_id: BusinessIdSchema,
    data: OpenObject('Event details; fields depend on the event type.'),
  },
  { title: 'BusinessEvent' },
);
export type BusinessEvent = Static<typeof BusinessEventSchema>;

/** The spec leaves this body unconstrained; this is the shape the project's service returns. */
export const FetchBusinessEventsResponseSchema = StrictObject(
  {
    response_context: ResponseContextSchema,
    total_results: Type.Integer({ minimum: 0 }),
    data: Type.Array(BusinessEventSchema),
  },
  { title: 'FetchBusinessEventsResponse' },
);

// ---- enrollments ----------------------------------------------------------------------------------

const EnrollmentKey = Type.String({ minLength: MIN_ENROLLMENT_KEY_LENGTH });
const EnrollmentBusinessIds = Type.Array(BusinessIdSchema, { minItems: 1, maxItems: MAX_ENROLLMENT_IDS });

export const EnrollmentSchema = StrictObject(
  {
    enrollment_id: Type.String(),
    enrollment_key: EnrollmentKey,
    event_types: Type.Array(BusinessEventTypeSchema),
    business_ids: Type.Array(BusinessIdSchema),
  },
  { title: 'Enrollment' },
);
export type Enrollment = Static<typeof EnrollmentSchema>;

export const ListEnrollmentsResponseSchema = StrictObject(
  { response_context: ResponseContextSchema, enrollments: Type.Array(EnrollmentSchema) },
  { title: 'ListEnrollmentsResponse' },
);

export const CreateEnrollmentsRequestSchema = StrictObject(
  {
    request_context: RequestContextField,
    enrollment_key: EnrollmentKey,
    event_types: Type.Array(BusinessEventTypeSchema, { minItems: 1 }),
    business_ids: EnrollmentBusinessIds,
  },
  { title: 'CreateEnrollmentsRequest' },
);
export const UpdateEnrollmentsRequestSchema = StrictObject(
  {
    request_context: RequestContextField,
    enrollment_id: Type.String(),
    enrollment_key: EnrollmentKey,
    event_types: Type.Array(BusinessEventTypeSchema, { minItems: 1 }),
    business_ids: EnrollmentBusinessIds,
  },
  { title: 'UpdateEnrollmentsRequest' },
);
export const EnrollmentWriteResponseSchema = StrictObject(
  { response_context: ResponseContextSchema, enrollment_key: EnrollmentKey, enrollment_id: Type.String() },
  { title: 'EnrollmentWriteResponse' },
);
export const DeleteEnrollmentsRequestSchema = StrictObject(
  { request_context: RequestContextField, enrollment_id: Type.String() },
  { title: 'DeleteEnrollmentsRequest' },
);
export const DeleteEnrollmentsResponseSchema = StrictObject(
  { response_context: ResponseContextSchema, status: Type.Optional(RequestStatusSchema) },
  { title: 'DeleteEnrollmentsResponse' },
);

// ---- company hierarchy (spec 2.5) -----------------------------------------------------------------

export const HierarchyCompanySchema = StrictObject(
  {
    id: BusinessIdSchema,
    name: Type.String(),
    parent_id: Nullable(BusinessIdSchema),
    parent_name: Nullable(Type.String()),
  },
  { title: 'HierarchyCompany' },
);

/** Level 0 holds the root (null parent); each next level lists children of the level above. */
export const CompanyHierarchyRecordSchema = StrictObject(
  {
    business_id: BusinessIdSchema,
    parent_company_id: Maybe(BusinessIdSchema),
    parent_company_name: Maybe(Type.String()),
    ultimate_parent_id: Maybe(BusinessIdSchema),
    ultimate_parent_name: Maybe(Type.String()),
    subsidiaries: Maybe(
      Type.Array(StrictObject({ id: BusinessIdSchema, name: Type.String() }, { title: 'Subsidiary' })),
    ),
    organization_tree: Maybe(
      Type.Array(
        StrictObject(
          { level: Type.Integer({ minimum: 0 }), companies: Type.Array(HierarchyCompanySchema) },
          { title: 'OrganizationTreeLevel' },
        ),
      ),
    ),
  },
  { title: 'CompanyHierarchyRecord' },
);
export type CompanyHierarchyRecord = Static<typeof CompanyHierarchyRecordSchema>;

export const EnrichHierarchyRequestSchema = StrictObject(
  {
    request_context: RequestContextField,
    parameters: Maybe(OpenObject('May be empty.')),
    business_id: BusinessIdSchema,
  },
  { title: 'EnrichHierarchyRequest' },
);
/** `data` is absent or null, and `request_status` is `miss`, when the business has no hierarchy. */
export const EnrichHierarchyResponseSchema = StrictObject(
  {
    response_context: ResponseContextSchema,
    data: Maybe(CompanyHierarchyRecordSchema),
    entity_id: Type.Optional(Type.String()),
  },
  { title: 'EnrichHierarchyResponse' },
);
