// The optional `type` of a filter object. The provider's own clients and documentation examples send it
// (`{"country_code": {"type": "includes", "values": ["us"]}}`) and the service accepts it; it names the
// provider's filter class, so it must fit the filter's form, and is otherwise ignored.
import { Type } from 'typebox';

/**
 * `type` values per filter form, from the provider's filter classes (IncludesFilter, AnyMatchFilter,
 * AnyMatchPhraseFilter, DynamicIncludesFilter, ExistsFilter, RangeFilter, JobTitleFilter,
 * EventTypesFilter, BusinessIntentTopicsFilter). Any list class fits any `values` filter: the provider's
 * clients send `includes` on text filters whose class is another list class.
 */
export const FILTER_TYPES = {
  values: ['includes', 'any_match', 'any_match_phrase', 'dynamic_includes'],
  job_title: ['includes', 'any_match', 'any_match_phrase', 'dynamic_includes', 'job_title'],
  events: ['includes', 'event_types'],
  exists: ['exists'],
  range: ['range'],
  business_intent_topics: ['business_intent_topics'],
} as const;
export type FilterForm = keyof typeof FILTER_TYPES;

/** The `type` property of a filter of the given form: optional, one of the form's values. */
export function FilterTypeField<F extends FilterForm>(form: F) {
  const values: readonly (typeof FILTER_TYPES)[F][number][] = FILTER_TYPES[form];
  return Type.Optional(
    Type.Enum(values, {
      description: "The provider's filter class; accepted when it fits the filter's form, then ignored.",
    }),
  );
}
