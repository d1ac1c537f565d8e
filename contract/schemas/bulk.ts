// Bulk enrichment (spec 4.3): one request and one response schema per dataset, built from the
// dataset record schemas, so each of the twelve routes validates and documents its own record.
import { Type, type Static, type TSchema } from 'typebox';
import {
  BULK_DATASETS,
  DATASET_RECORD_SCHEMAS,
  type BulkDataset,
  type DatasetRecordSchemas,
} from '../datasets.js';
import { MAX_BULK_IDS, MIN_BULK_IDS } from '../limits.js';
import {
  BusinessIdSchema,
  Maybe,
  NetworkPostsParametersSchema,
  OpenObject,
  RequestContextField,
  ResponseContextSchema,
  StrictObject,
  Timestamp,
} from './common.js';

/** PascalCase of a dataset name, for schema titles (`firmographics` → `Firmographics`). */
export function datasetTitle(dataset: BulkDataset): string {
  return dataset
    .split('_')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

const BulkBusinessIds = Type.Array(BusinessIdSchema, { minItems: MIN_BULK_IDS, maxItems: MAX_BULK_IDS });

/** `parameters` of each dataset: documented for three of them, free-form for the rest. */
const BULK_PARAMETERS = {
  network_posts: Maybe(NetworkPostsParametersSchema),
  workforce_trends: Maybe(OpenObject()),
  technographics: Maybe(OpenObject()),
  funding_and_acquisition: Maybe(OpenObject()),
  company_ratings_by_employees: Maybe(OpenObject()),
  firmographics: Maybe(OpenObject()),
  pc_business_challenges_10k: Maybe(OpenObject()),
  pc_strategy_10k: Maybe(OpenObject()),
  financial_indicators: Maybe(
    StrictObject(
      { date: Timestamp('Date the indicators refer to.') },
      { title: 'FinancialIndicatorsParameters' },
    ),
  ),
  pc_competitive_landscape_10k: Maybe(OpenObject()),
  company_website_keywords: Maybe(
    StrictObject({ keywords: Type.Array(Type.String()) }, { title: 'CompanyWebsiteKeywordsParameters' }),
  ),
  website_changes: Maybe(OpenObject()),
} as const satisfies Record<BulkDataset, TSchema>;

function bulkRequestSchema<D extends BulkDataset>(dataset: D) {
  return StrictObject(
    {
      business_ids: BulkBusinessIds,
      request_context: RequestContextField,
      parameters: BULK_PARAMETERS[dataset],
    },
    { title: `${datasetTitle(dataset)}BulkEnrichRequest` },
  );
}

function bulkResponseSchema<D extends BulkDataset>(dataset: D) {
  return StrictObject(
    {
      response_context: ResponseContextSchema,
      total_results: Type.Integer({ minimum: 0, description: 'Number of elements of `data`.' }),
      data: Type.Array(
        StrictObject(
          { business_id: BusinessIdSchema, data: DATASET_RECORD_SCHEMAS[dataset] },
          { title: `${datasetTitle(dataset)}BulkEnrichRow` },
        ),
        { description: 'One element per business with data; ids with no data are left out.' },
      ),
      entity_id: Type.Optional(Type.String()),
    },
    { title: `${datasetTitle(dataset)}BulkEnrichResponse` },
  );
}

type BulkRequestSchemas = { [D in BulkDataset]: ReturnType<typeof bulkRequestSchema<D>> };
type BulkResponseSchemas = { [D in BulkDataset]: ReturnType<typeof bulkResponseSchema<D>> };

function byDataset<T>(make: (dataset: BulkDataset) => T): Record<BulkDataset, T> {
  return Object.fromEntries(BULK_DATASETS.map((dataset) => [dataset, make(dataset)])) as Record<
    BulkDataset,
    T
  >;
}

/** Request body schema of `/v1/businesses/<dataset>/bulk_enrich`, per dataset. */
export const BULK_ENRICH_REQUEST_SCHEMAS = byDataset(bulkRequestSchema) as BulkRequestSchemas;
/** 200 body schema of `/v1/businesses/<dataset>/bulk_enrich`, per dataset. */
export const BULK_ENRICH_RESPONSE_SCHEMAS = byDataset(bulkResponseSchema) as BulkResponseSchemas;

export type BulkEnrichRequest<D extends BulkDataset> = Static<BulkRequestSchemas[D]>;
export type BulkEnrichResponse<D extends BulkDataset> = Static<BulkResponseSchemas[D]>;
/** One element of `bulk_enrich.data`. */
export type BulkEnrichRow<D extends BulkDataset> = {
  business_id: string;
  data: Static<DatasetRecordSchemas[D]>;
};
