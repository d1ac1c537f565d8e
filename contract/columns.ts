// Column types derived from record schemas, so the pipeline maps each dataset field to a Parquet type
// without re-reading JSON Schema: scalars, timestamps, lists, structs where fields are documented, maps
// where only the value type is, and JSON text where neither is.
import type { TSchema } from 'typebox';
import { DATASET_RECORD_SCHEMAS, type BulkDataset } from './datasets.js';
import { PROSPECT_DATASET_RECORD_SCHEMAS, type ProspectDataset } from './prospect-datasets.js';

export type ColumnType =
  | { kind: 'string' | 'integer' | 'number' | 'boolean' | 'timestamp' | 'json' }
  | { kind: 'list'; element: ColumnType }
  | { kind: 'struct'; fields: ColumnSpec[] }
  | { kind: 'map'; value: ColumnType };

export interface ColumnSpec {
  name: string;
  type: ColumnType;
  /** False only for fields every record carries with a non-null value (e.g. firmographics `business_id`). */
  nullable: boolean;
}

interface JsonSchemaNode {
  type?: string;
  format?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchemaNode[];
  items?: JsonSchemaNode;
  properties?: Record<string, JsonSchemaNode>;
  patternProperties?: Record<string, JsonSchemaNode>;
  required?: string[];
}

function describe(node: JsonSchemaNode): { type: ColumnType; nullable: boolean } {
  if (node.anyOf) {
    const others = node.anyOf.filter((branch) => branch.type !== 'null');
    const nullable = others.length < node.anyOf.length;
    if (others.length === 1 && others[0]) return { type: describe(others[0]).type, nullable };
    // A union of string literals is an enumeration (size and revenue ranges): plain text.
    if (others.every((branch) => branch.type === 'string' || typeof branch.const === 'string')) {
      return { type: { kind: 'string' }, nullable };
    }
    return { type: { kind: 'json' }, nullable };
  }
  if (node.enum)
    return {
      type: { kind: node.enum.every((v) => typeof v === 'string') ? 'string' : 'json' },
      nullable: false,
    };
  switch (node.type) {
    case 'string':
      return { type: { kind: node.format === 'date-time' ? 'timestamp' : 'string' }, nullable: false };
    case 'integer':
    case 'number':
    case 'boolean':
      return { type: { kind: node.type }, nullable: false };
    case 'array':
      return {
        type: { kind: 'list', element: node.items ? describe(node.items).type : { kind: 'json' } },
        nullable: false,
      };
    case 'object': {
      if (node.properties && Object.keys(node.properties).length > 0) {
        return { type: { kind: 'struct', fields: columnsOf(node) }, nullable: false };
      }
      const value = Object.values(node.patternProperties ?? {})[0];
      if (value && (value.type || value.anyOf || value.enum))
        return { type: { kind: 'map', value: describe(value).type }, nullable: false };
      return { type: { kind: 'json' }, nullable: false };
    }
    default:
      return { type: { kind: 'json' }, nullable: true };
  }
}

function columnsOf(node: JsonSchemaNode): ColumnSpec[] {
  const required = new Set(node.required ?? []);
  return Object.entries(node.properties ?? {}).map(([name, property]) => {
    const { type, nullable } = describe(property);
    return { name, type, nullable: nullable || !required.has(name) };
  });
}

/** The columns of an object schema's properties, in declaration order. */
export function columnsOfSchema(schema: TSchema): ColumnSpec[] {
  return columnsOf(JSON.parse(JSON.stringify(schema)) as JsonSchemaNode);
}

/** The columns of one dataset's record (without the row's `business_id`). */
export function datasetColumns(dataset: BulkDataset): ColumnSpec[] {
  return columnsOfSchema(DATASET_RECORD_SCHEMAS[dataset]);
}

/** The columns of one prospect dataset's record (without the row's `prospect_id`; profiles repeat it). */
export function prospectDatasetColumns(dataset: ProspectDataset): ColumnSpec[] {
  return columnsOfSchema(PROSPECT_DATASET_RECORD_SCHEMAS[dataset]);
}
