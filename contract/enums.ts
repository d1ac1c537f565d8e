// Enumerated values of the contract: categories of spec section 2.7 and, where the spec is silent, the
// provider document's enums renamed per the name map (google→listing, linkedin→network).
import { Type } from 'typebox';

/** Job level categories (spec 2.7), the wire values of the `job_level` filter. */
export const JOB_LEVELS = [
  'manager',
  'president',
  'senior manager',
  'owner',
  'advisor',
  'freelancer',
  'junior',
  'director',
  'c-suite',
  'board member',
  'senior non-managerial',
  'non-managerial',
  'partner',
  'vice president',
  'founder',
] as const;
export type JobLevel = (typeof JOB_LEVELS)[number];

/**
 * Department categories (spec 2.7) as the provider writes them on the wire: lower case, so the spec's
 * "IT" and "R&D" are `it` and `r&d`. Records carry these values.
 */
export const JOB_DEPARTMENTS = [
  'retail',
  'engineering',
  'customer success',
  'administration',
  'education',
  'security',
  'healthcare',
  'public service',
  'partnerships',
  'creative',
  'strategy',
  'real estate',
  'procurement',
  'it',
  'data',
  'c-suite',
  'manufacturing',
  'support',
  'logistics',
  'product',
  'sales',
  'design',
  'marketing',
  'finance',
  'r&d',
  'trade',
  'human resources',
  'legal',
  'operations',
] as const;
export type JobDepartment = (typeof JOB_DEPARTMENTS)[number];

/**
 * Values the `job_department` filter accepts: the wire values plus the spec's spellings `IT` and `R&D`,
 * which mean `it` and `r&d` (see `canonicalJobDepartment`).
 */
export const JOB_DEPARTMENT_FILTER_VALUES = [...JOB_DEPARTMENTS, 'IT', 'R&D'] as const;
export type JobDepartmentFilterValue = (typeof JOB_DEPARTMENT_FILTER_VALUES)[number];

/** The wire value a `job_department` filter value stands for. */
export function canonicalJobDepartment(value: JobDepartmentFilterValue): JobDepartment {
  return value.toLowerCase() as JobDepartment;
}

/** Employee ranges (spec 2.7): `company_size` filter and firmographics `number_of_employees_range`. */
export const COMPANY_SIZES = [
  '1-10',
  '11-50',
  '51-200',
  '201-500',
  '501-1000',
  '1001-5000',
  '5001-10000',
  '10001+',
] as const;
export type CompanySize = (typeof COMPANY_SIZES)[number];

/** Revenue ranges (spec 2.7): `company_revenue` filter and firmographics `yearly_revenue_range`. */
export const REVENUE_RANGES = [
  '0-500K',
  '500K-1M',
  '1M-5M',
  '5M-10M',
  '10M-25M',
  '25M-75M',
  '75M-200M',
  '200M-500M',
  '500M-1B',
  '1B-10B',
  '10B-100B',
  '100B-1T',
  '1T-10T',
  '10T+',
] as const;
export type RevenueRange = (typeof REVENUE_RANGES)[number];

/** Company age in years, business fetch filter `company_age` (provider document). */
export const COMPANY_AGE_RANGES = ['0-3', '3-6', '6-10', '10-20', '20+'] as const;
export type CompanyAgeRange = (typeof COMPANY_AGE_RANGES)[number];

/** Office counts, business fetch filter `number_of_locations` (provider document). */
export const NUMBER_OF_LOCATIONS_RANGES = [
  '0-1',
  '2-5',
  '6-20',
  '21-50',
  '51-100',
  '101-1000',
  '1001+',
] as const;
export type NumberOfLocationsRange = (typeof NUMBER_OF_LOCATIONS_RANGES)[number];

/** Intent levels of the business fetch filter `business_intent_topics` (provider document). */
export const INTENT_LEVELS = ['emerging_intent', 'high_intent', 'very_high_intent'] as const;
export type IntentLevel = (typeof INTENT_LEVELS)[number];

/** The 19 values of the autocomplete `field` query parameter (provider document, renamed). */
export const AUTOCOMPLETE_FIELDS = [
  'country',
  'country_code',
  'region_country_code',
  'listing_category',
  'naics_category',
  'network_category',
  'company_tech_stack_tech',
  'company_tech_stack_categories',
  'job_title',
  'company_size',
  'company_revenue',
  'number_of_locations',
  'company_age',
  'job_department',
  'job_level',
  'city_region_country',
  'company_name',
  'business_intent_topics',
  'city_region',
] as const;
export type AutocompleteField = (typeof AUTOCOMPLETE_FIELDS)[number];

/** Kinds of business event: events fetch, enrollments, business fetch `events` filter (provider document). */
export const BUSINESS_EVENT_TYPES = [
  'ipo_announcement',
  'new_funding_round',
  'new_investment',
  'new_product',
  'new_office',
  'closing_office',
  'new_partnership',
  'increase_in_engineering_department',
  'increase_in_sales_department',
  'increase_in_marketing_department',
  'increase_in_operations_department',
  'increase_in_customer_service_department',
  'increase_in_all_departments',
  'decrease_in_engineering_department',
  'decrease_in_sales_department',
  'decrease_in_marketing_department',
  'decrease_in_operations_department',
  'decrease_in_customer_service_department',
  'decrease_in_all_departments',
  'employee_joined_company',
  'hiring_in_creative_department',
  'hiring_in_education_department',
  'hiring_in_engineering_department',
  'hiring_in_finance_department',
  'hiring_in_health_department',
  'hiring_in_human_resources_department',
  'hiring_in_legal_department',
  'hiring_in_marketing_department',
  'hiring_in_operations_department',
  'hiring_in_professional_service_department',
  'hiring_in_sales_department',
  'hiring_in_support_department',
  'hiring_in_trade_department',
  'hiring_in_unknown_department',
  'company_award',
  'outages_and_security_breaches',
  'cost_cutting',
  'merger_and_acquisitions',
  'lawsuits_and_legal_issues',
] as const;
export type BusinessEventType = (typeof BUSINESS_EVENT_TYPES)[number];

/** Entity kinds of events (provider document). */
export const ENTITY_TYPES = ['business', 'prospect'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** `response_context.request_status`: `miss` when nothing matched, `failure` on errors (provider documentation). */
export const REQUEST_STATUSES = ['success', 'miss', 'failure'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/** Fetch modes: the spec names `full`; the provider document adds `preview` (fewer fields). */
export const FETCH_MODES = ['full', 'preview'] as const;
export type FetchMode = (typeof FETCH_MODES)[number];

/** `offline_mode` parameter of posts enrichment: a string, not a boolean (provider document). */
export const OFFLINE_MODES = ['true', 'false'] as const;

// Schemas of the enums, titled so that the OpenAPI document names them once under components.
export const JobLevelSchema = Type.Enum(JOB_LEVELS, { title: 'JobLevel' });
export const JobDepartmentSchema = Type.Enum(JOB_DEPARTMENTS, { title: 'JobDepartment' });
export const JobDepartmentFilterValueSchema = Type.Enum(JOB_DEPARTMENT_FILTER_VALUES, {
  title: 'JobDepartmentFilterValue',
});
export const CompanySizeSchema = Type.Enum(COMPANY_SIZES, { title: 'CompanySize' });
export const RevenueRangeSchema = Type.Enum(REVENUE_RANGES, { title: 'RevenueRange' });
export const CompanyAgeRangeSchema = Type.Enum(COMPANY_AGE_RANGES, { title: 'CompanyAgeRange' });
export const NumberOfLocationsRangeSchema = Type.Enum(NUMBER_OF_LOCATIONS_RANGES, {
  title: 'NumberOfLocationsRange',
});
export const IntentLevelSchema = Type.Enum(INTENT_LEVELS, { title: 'IntentLevel' });
export const AutocompleteFieldSchema = Type.Enum(AUTOCOMPLETE_FIELDS, { title: 'AutocompleteField' });
export const BusinessEventTypeSchema = Type.Enum(BUSINESS_EVENT_TYPES, { title: 'BusinessEventType' });
export const EntityTypeSchema = Type.Enum(ENTITY_TYPES, { title: 'EntityType' });
export const RequestStatusSchema = Type.Enum(REQUEST_STATUSES, { title: 'RequestStatus' });
export const FetchModeSchema = Type.Enum(FETCH_MODES, { title: 'FetchMode' });
export const OfflineModeSchema = Type.Enum(OFFLINE_MODES, { title: 'OfflineMode' });
