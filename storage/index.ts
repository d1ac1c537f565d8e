// The storage layer the pipeline's activities use: object stores (S3, local folder), input readers
// (CSV, JSON Lines, Parquet) and the Parquet writer, merger and readers.
export * from './object-store.js';
export { LocalObjectStore, writeFileAtomically } from './local-store.js';
export {
  S3ObjectStore,
  createS3Client,
  type S3ConnectionOptions,
  type S3ObjectStoreOptions,
} from './s3-store.js';
export {
  openObjectStore,
  InvalidLocationError,
  type OpenObjectStoreOptions,
  type OpenedLocation,
} from './open-store.js';
export { describeLocation, sha256File, withLocalCopy, type FileLocation } from './files.js';
export * from './input/index.js';
export { CsvParser, sniffCsvDelimiter } from './input/csv-parser.js';
export {
  openDuckDB,
  withDuckDb,
  queryRows,
  sqlString,
  sqlIdent,
  type DuckDBOptions,
  type DuckDBSession,
} from './duckdb.js';
