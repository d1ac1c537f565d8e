// Reads the user's input file — CSV, JSON Lines or Parquet, local or in an object store — behind one
// interface (`input-file.ts`): picks the format from the name (or the caller), opens the reader for it.
// CSV and JSON Lines stream from a text source; Parquet goes through DuckDB.
import { describeLocation, type FileLocation } from '../files.js';
import { openCsvInput } from './csv.js';
import {
  InputFileError,
  type InputChunk,
  type InputFile,
  type InputFormat,
  type OpenInputOptions,
} from './input-file.js';
import { openJsonLinesInput } from './jsonl.js';
import { openParquetInput } from './parquet.js';
import { openTextSource } from './text-source.js';

export {
  InputFileError,
  type InputChunk,
  type InputFile,
  type InputFileErrorCode,
  type InputFormat,
  type InputReject,
  type InputRow,
  type OpenInputOptions,
} from './input-file.js';

/** The format an input name implies by its extension, or undefined. */
export function detectInputFormat(name: string): InputFormat | undefined {
  const lower = name.toLowerCase();
  if (lower.endsWith('.csv') || lower.endsWith('.tsv')) return 'csv';
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return 'jsonl';
  if (lower.endsWith('.parquet') || lower.endsWith('.pq')) return 'parquet';
  return undefined;
}

/**
 * Opens an input file and checks it can be read — exists, not empty, the right format, a header — so a
 * bad file fails here, before any work starts. Call `chunks()` for the rows and `close()` when done.
 */
export async function openInputFile(
  location: FileLocation,
  options: OpenInputOptions = {},
): Promise<InputFile> {
  const name = describeLocation(location);
  const baseName = 'path' in location ? location.path : location.key;
  const format = options.format ?? detectInputFormat(baseName);
  if (format === undefined) {
    const compressed = /\.(gz|zip|bz2|zst|xz)$/i.test(baseName);
    throw new InputFileError(
      'UNKNOWN_FORMAT',
      name,
      compressed
        ? 'compressed input is not supported; decompress it first'
        : 'cannot tell the format from the extension (.csv, .tsv, .jsonl, .ndjson, .parquet); name the format explicitly',
    );
  }
  if (format === 'parquet') return openParquetInput(location, name, options);
  const text = await openTextSource(location, name, options);
  try {
    if (format === 'csv') {
      const delimiter = options.delimiter ?? (baseName.toLowerCase().endsWith('.tsv') ? '\t' : undefined);
      return await openCsvInput(text, name, { ...options, delimiter });
    }
    return await openJsonLinesInput(text, name, options);
  } catch (error) {
    await text.close();
    throw error;
  }
}

/** Reads every chunk of an input file (for tests and small files); closes it. */
export async function readAllInput(file: InputFile): Promise<InputChunk> {
  const all: InputChunk = { rows: [], rejects: [] };
  try {
    for await (const chunk of file.chunks()) {
      all.rows.push(...chunk.rows);
      all.rejects.push(...chunk.rejects);
    }
  } finally {
    await file.close();
  }
  return all;
}
