// The prospect datasets of bulk enrichment, provider operations beyond spec 0.2.286 (the provider's
// published API 0.2.273 has them; the spec has none): `/v1/prospects/<dataset>/bulk_enrich`, and the
// record each returns per prospect. Like the business records of ./datasets.ts, every field but a key
// is optional and nullable and states its exact type, since the pipeline derives columns from these.
import { Type, type Static } from 'typebox';
import { NetworkPostsRecordSchema } from './datasets.js';
import { Maybe, StrictObject } from './schemas/common.js';
import { ProspectSchema } from './schemas/prospects.js';

/** Dataset names, which are the path segments of `/v1/prospects/<dataset>/bulk_enrich`. */
export const PROSPECT_DATASETS = ['profiles', 'contacts_information', 'network_posts'] as const;
export type ProspectDataset = (typeof PROSPECT_DATASETS)[number];

export function isProspectDataset(value: string): value is ProspectDataset {
  return (PROSPECT_DATASETS as readonly string[]).includes(value);
}

/** Validation verdict of a professional email (provider document: `EmailValidationStatus`). */
export const EMAIL_VALIDATION_STATUSES = ['valid', 'catch-all', 'invalid'] as const;
export const EmailValidationStatusSchema = Type.Enum(EMAIL_VALIDATION_STATUSES, {
  title: 'EmailValidationStatus',
});

/** Objects whose keys are not documented but whose values are strings (provider document). */
const stringMap = () => Type.Record(Type.String(), Type.String());

/**
 * Contact information of a prospect (provider document: `ContactsInformationOutputSchema`; the field
 * `professions_email` is spelled as the provider spells it). Phone numbers are E.164.
 */
export const ContactsInformationRecordSchema = StrictObject(
  {
    emails: Maybe(Type.Array(stringMap(), { description: 'Addresses, e.g. `{address, type}`.' })),
    professions_email: Maybe(Type.String({ description: 'The professional (work) email address.' })),
    professional_email_status: Maybe(EmailValidationStatusSchema),
    phone_numbers: Maybe(Type.Array(stringMap(), { description: 'Numbers, e.g. `{phone_number}`.' })),
    mobile_phone: Maybe(Type.String()),
  },
  { title: 'ContactsInformationRecord' },
);
export type ContactsInformationRecord = Static<typeof ContactsInformationRecordSchema>;

/**
 * The record of each prospect dataset. A profile is the prospect record of spec 2.4, as prospect fetch
 * serves it; posts are the record of the single-prospect posts enrichment (spec 4.4).
 */
export const PROSPECT_DATASET_RECORD_SCHEMAS = {
  profiles: ProspectSchema,
  contacts_information: ContactsInformationRecordSchema,
  network_posts: NetworkPostsRecordSchema,
} as const;
export type ProspectDatasetRecordSchemas = typeof PROSPECT_DATASET_RECORD_SCHEMAS;
export type ProspectDatasetRecord<D extends ProspectDataset> = Static<ProspectDatasetRecordSchemas[D]>;
