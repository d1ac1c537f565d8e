// DuckDB column types of each output table, from the contract's column tree: strings, BIGINT, DOUBLE,
// BOOLEAN, TIMESTAMPTZ for timestamps, LIST for arrays, STRUCT where the contract names an object's
// fields, and JSON text where it does not (maps included: warehouses load JSON text more reliably).
import {
  columnsOfSchema,
  prospectDatasetColumns,
  type ColumnSpec,
  type ColumnType,
} from '../contract/columns.js';
import { DATASET_RECORD_SCHEMAS } from '../contract/datasets.js';
import { CompanyHierarchyRecordSchema } from '../contract/schemas/businesses.js';
import { isPeopleDataset, prospectDatasetOf, type EnrichDataset } from '../pipeline/run-types.js';
import { sqlIdent } from '../storage/duckdb.js';

export function duckDbType(type: ColumnType): string {
  switch (type.kind) {
    case 'string':
      return 'VARCHAR';
    case 'integer':
      return 'BIGINT';
    case 'number':
      return 'DOUBLE';
    case 'boolean':
      return 'BOOLEAN';
    case 'timestamp':
      return 'TIMESTAMPTZ';
    case 'list':
      return `${duckDbType(type.element)}[]`;
    case 'struct':
      return `STRUCT(${type.fields.map((f) => `${sqlIdent(f.name)} ${duckDbType(f.type)}`).join(', ')})`;
    default:
      return 'JSON';
  }
}

function recordColumns(dataset: EnrichDataset): ColumnSpec[] {
  if (isPeopleDataset(dataset)) return prospectDatasetColumns(prospectDatasetOf(dataset));
  return columnsOfSchema(
    dataset === 'company_hierarchies' ? CompanyHierarchyRecordSchema : DATASET_RECORD_SCHEMAS[dataset],
  );
}

/** The id a dataset's table is keyed by: `prospect_id` for the prospect datasets, else `business_id`. */
export function datasetKey(dataset: EnrichDataset): 'business_id' | 'prospect_id' {
  return isPeopleDataset(dataset) ? 'prospect_id' : 'business_id';
}

/** Columns of a dataset's table, its key (`business_id`, `prospect_id`) first, in the contract's field order. */
export function datasetColumns(dataset: EnrichDataset): { name: string; type: string }[] {
  const key = datasetKey(dataset);
  return [
    { name: key, type: 'VARCHAR' },
    ...recordColumns(dataset)
      .filter((c) => c.name !== key)
      .map((c) => ({ name: c.name, type: duckDbType(c.type) })),
  ];
}

/** The `data` struct type of a dataset's result lines, for DuckDB's `read_json(columns = …)`. */
export function datasetRecordStruct(dataset: EnrichDataset): string {
  return duckDbType({ kind: 'struct', fields: recordColumns(dataset) });
}
