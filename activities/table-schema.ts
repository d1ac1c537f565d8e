// Parquet column types of each output table, derived from the contract's record schemas: strings,
// BIGINT, DOUBLE, BOOLEAN, TIMESTAMPTZ for timestamps, LIST for arrays, STRUCT where the contract
// names an object's fields, and JSON text where it does not.
import { DATASET_RECORD_SCHEMAS } from '../contract/datasets.js';
import { CompanyHierarchyRecordSchema } from '../contract/schemas/businesses.js';
import type { EnrichDataset } from '../workflows/types.js';
import { sqlIdent } from './duckdb-session.js';

interface JsonSchema {
  type?: string;
  format?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
}

/** The DuckDB type of a JSON-schema-shaped contract field. */
export function duckDbType(schema: JsonSchema): string {
  if (schema.anyOf) {
    const nonNull = schema.anyOf.filter((s) => s.type !== 'null');
    if (nonNull.length === 1 && nonNull[0]) return duckDbType(nonNull[0]);
    // A union of string literals is an enumeration (size and revenue ranges): plain text.
    return nonNull.every((s) => s.type === 'string' || typeof s.const === 'string') ? 'VARCHAR' : 'JSON';
  }
  if (schema.enum?.every((v) => typeof v === 'string') || typeof schema.const === 'string') {
    return 'VARCHAR';
  }
  switch (schema.type) {
    case 'string':
      return schema.format === 'date-time' ? 'TIMESTAMPTZ' : 'VARCHAR';
    case 'integer':
      return 'BIGINT';
    case 'number':
      return 'DOUBLE';
    case 'boolean':
      return 'BOOLEAN';
    case 'array':
      return schema.items ? `${duckDbType(schema.items)}[]` : 'JSON';
    case 'object': {
      const entries = Object.entries(schema.properties ?? {});
      if (entries.length === 0 || schema.patternProperties) return 'JSON';
      return `STRUCT(${entries.map(([name, s]) => `${sqlIdent(name)} ${duckDbType(s)}`).join(', ')})`;
    }
    default:
      return 'JSON';
  }
}

export function recordSchemaOf(dataset: EnrichDataset): JsonSchema {
  const schema =
    dataset === 'company_hierarchies' ? CompanyHierarchyRecordSchema : DATASET_RECORD_SCHEMAS[dataset];
  return schema as unknown as JsonSchema;
}

/** Columns of a dataset's table, `business_id` first, in the contract's field order. */
export function datasetColumns(dataset: EnrichDataset): { name: string; type: string }[] {
  const properties = recordSchemaOf(dataset).properties ?? {};
  return [
    { name: 'business_id', type: 'VARCHAR' },
    ...Object.entries(properties)
      .filter(([name]) => name !== 'business_id')
      .map(([name, schema]) => ({ name, type: duckDbType(schema) })),
  ];
}

/** The `data` struct type of a dataset's result lines, for DuckDB's `read_json(columns = …)`. */
export function datasetRecordStruct(dataset: EnrichDataset): string {
  return duckDbType({ ...recordSchemaOf(dataset), patternProperties: undefined });
}
