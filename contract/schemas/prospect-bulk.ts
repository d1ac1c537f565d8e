// Bulk enrichment of prospects (provider operations beyond spec 0.2.286): one request and one response
// schema per prospect dataset, shaped as business bulk enrichment is (spec 4.3) with `prospect_ids`.
import { Type, type Static, type TSchema } from 'typebox';
import { MAX_BULK_IDS, MIN_BULK_IDS } from '../limits.js';
import {
  PROSPECT_DATASET_RECORD_SCHEMAS,
  PROSPECT_DATASETS,
  type ProspectDataset,
  type ProspectDatasetRecord,
} from '../prospect-datasets.js';
import {
  Maybe,
  NetworkPostsParametersSchema,
  OpenObject,
  ProspectIdSchema,
  RequestContextField,
  ResponseContextSchema,
  StrictObject,
} from './common.js';

/** PascalCase title of a prospect dataset, prefixed so it never clashes with a business one. */
export function prospectDatasetTitle(dataset: ProspectDataset): string {
  return `Prospect${dataset
    .split('_')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('')}`;
}

const BulkProspectIds = Type.Array(ProspectIdSchema, { minItems: MIN_BULK_IDS, maxItems: MAX_BULK_IDS });

/** `parameters`: `offline_mode` for posts (provider document), free-form otherwise. */
const PROSPECT_BULK_PARAMETERS = {
  profiles: Maybe(OpenObject()),
  contacts_information: Maybe(OpenObject()),
  network_posts: Maybe(NetworkPostsParametersSchema),
} as const satisfies Record<ProspectDataset, TSchema>;

function requestSchema<D extends ProspectDataset>(dataset: D) {
  return StrictObject(
    {
      prospect_ids: BulkProspectIds,
      request_context: RequestContextField,
      parameters: PROSPECT_BULK_PARAMETERS[dataset],
    },
    { title: `${prospectDatasetTitle(dataset)}BulkEnrichRequest` },
  );
}

function responseSchema<D extends ProspectDataset>(dataset: D) {
  return StrictObject(
    {
      response_context: ResponseContextSchema,
      total_results: Type.Integer({ minimum: 0, description: 'Number of elements of `data`.' }),
      data: Type.Array(
        StrictObject(
          { prospect_id: ProspectIdSchema, data: PROSPECT_DATASET_RECORD_SCHEMAS[dataset] },
          { title: `${prospectDatasetTitle(dataset)}BulkEnrichRow` },
        ),
        { description: 'One element per prospect with data; ids with no data are left out.' },
      ),
      entity_id: Type.Optional(Type.String()),
    },
    { title: `${prospectDatasetTitle(dataset)}BulkEnrichResponse` },
  );
}

type RequestSchemas = { [D in ProspectDataset]: ReturnType<typeof requestSchema<D>> };
type ResponseSchemas = { [D in ProspectDataset]: ReturnType<typeof responseSchema<D>> };

function byDataset<T>(make: (dataset: ProspectDataset) => T): Record<ProspectDataset, T> {
  return Object.fromEntries(PROSPECT_DATASETS.map((dataset) => [dataset, make(dataset)])) as Record<
    ProspectDataset,
    T
  >;
}

/** Request body schema of `/v1/prospects/<dataset>/bulk_enrich`, per dataset. */
export const PROSPECT_BULK_ENRICH_REQUEST_SCHEMAS = byDataset(requestSchema) as RequestSchemas;
/** 200 body schema of `/v1/prospects/<dataset>/bulk_enrich`, per dataset. */
export const PROSPECT_BULK_ENRICH_RESPONSE_SCHEMAS = byDataset(responseSchema) as ResponseSchemas;

export type ProspectBulkEnrichRequest<D extends ProspectDataset> = Static<RequestSchemas[D]>;
export type ProspectBulkEnrichResponse<D extends ProspectDataset> = Static<ResponseSchemas[D]>;
/** One element of a prospect `bulk_enrich.data`. */
export type ProspectBulkEnrichRow<D extends ProspectDataset> = {
  prospect_id: string;
  data: ProspectDatasetRecord<D>;
};
