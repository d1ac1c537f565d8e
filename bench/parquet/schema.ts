// Column schemas for the Parquet tables the pipeline writes, and how each column kind maps to DuckDB
// (which writes the files) and to what DuckDB reports when it reads them back.

/** Scalar column kinds. `json` holds any JSON value, written as its JSON text in a plain string column. */
export type ParquetScalarType = 'string' | 'int32' | 'int64' | 'double' | 'boolean' | 'timestamptz' | 'json';

/** A column kind: a scalar, a LIST of a kind, or a STRUCT of named fields (in order). */
export type ParquetColumnType =
  ParquetScalarType | { list: ParquetColumnType } | { struct: readonly ParquetField[] };

export interface ParquetField {
  name: string;
  type: ParquetColumnType;
}

/** The columns of a table, in order. */
export type ParquetSchema = readonly ParquetField[];

/** Thrown when a schema has empty, duplicate (DuckDB names are case-insensitive) or unknown columns. */
export class InvalidParquetSchemaError extends Error {
  override readonly name = 'InvalidParquetSchemaError';
  readonly code = 'INVALID_PARQUET_SCHEMA';
}

const SCALARS: Record<ParquetScalarType, { read: string; write: string }> = {
  string: { read: 'VARCHAR', write: 'VARCHAR' },
  int32: { read: 'INTEGER', write: 'INTEGER' },
  int64: { read: 'BIGINT', write: 'BIGINT' },
  double: { read: 'DOUBLE', write: 'DOUBLE' },
  boolean: { read: 'BOOLEAN', write: 'BOOLEAN' },
  // TIMESTAMPTZ is stored as INT64 micros with isAdjustedToUTC=true: warehouses load it as a UTC
  // timestamp (a plain TIMESTAMP would load as a zone-less DATETIME in BigQuery).
  timestamptz: { read: 'TIMESTAMPTZ', write: 'TIMESTAMPTZ' },
  // Read as DuckDB's JSON (any value), written as its text.
  json: { read: 'JSON', write: 'VARCHAR' },
};

/** Field names print bare in DuckDB's type strings when they are plain identifiers. */
function typeFieldName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

/**
 * The DuckDB type of a column kind: `read` is how the JSON spill is parsed (json → JSON), `write` is the
 * column type in the Parquet file, which is also what DuckDB's DESCRIBE prints when reading it back
 * (with `TIMESTAMPTZ` spelled `TIMESTAMP WITH TIME ZONE`; see `describedType`).
 */
export function duckdbType(type: ParquetColumnType, mode: 'read' | 'write'): string {
  if (typeof type === 'string') {
    const scalar = SCALARS[type];
    if (!scalar) throw new InvalidParquetSchemaError(`unknown column type ${JSON.stringify(type)}`);
    return scalar[mode];
  }
  if ('list' in type) return `${duckdbType(type.list, mode)}[]`;
  if ('struct' in type) {
    return `STRUCT(${type.struct.map((f) => `${typeFieldName(f.name)} ${duckdbType(f.type, mode)}`).join(', ')})`;
  }
  throw new InvalidParquetSchemaError(`unknown column type ${JSON.stringify(type)}`);
}

/** The type string DuckDB's DESCRIBE reports for a column of this kind in a file written here. */
export function describedType(type: ParquetColumnType): string {
  return duckdbType(type, 'write').replaceAll('TIMESTAMPTZ', 'TIMESTAMP WITH TIME ZONE');
}

function checkFields(fields: readonly ParquetField[], where: string): void {
  if (fields.length === 0) throw new InvalidParquetSchemaError(`${where} has no columns`);
  const seen = new Set<string>();
  for (const field of fields) {
    if (typeof field.name !== 'string' || field.name === '') {
      throw new InvalidParquetSchemaError(`${where} has a column without a name`);
    }
    const folded = field.name.toLowerCase();
    if (seen.has(folded))
      throw new InvalidParquetSchemaError(
        `${where} names "${field.name}" twice (names are case-insensitive)`,
      );
    seen.add(folded);
    checkType(field.type, field.name);
  }
}

function checkType(type: ParquetColumnType, column: string): void {
  if (typeof type === 'object' && type !== null && 'list' in type) return checkType(type.list, column);
  if (typeof type === 'object' && type !== null && 'struct' in type)
    return checkFields(type.struct, `struct column "${column}"`);
  duckdbType(type, 'write');
}

/** Throws `InvalidParquetSchemaError` unless the schema can be written. */
export function validateParquetSchema(schema: ParquetSchema): void {
  checkFields(schema, 'the schema');
}
