// The shape every input reader returns, whatever the format: numbered rows and numbered rejects, in
// chunks, with memory that does not grow with the file. The readers live beside this file, one a format.
//
// Row numbers: `rowNumber` is the 1-based ordinal of a data record — for CSV the header is not counted;
// blank lines are not records. Rejected records take their number too, so rows and rejects together
// number 1..N without gaps. For CSV and JSON Lines a reject also carries `line`, the physical line it
// starts on (a quoted CSV field may span lines, so `line` and `rowNumber` can differ).
import type { DuckDBOptions } from '../duckdb.js';

export type InputFormat = 'csv' | 'jsonl' | 'parquet';

export type InputFileErrorCode =
  | 'NOT_FOUND'
  | 'EMPTY'
  | 'WRONG_FORMAT'
  | 'NO_HEADER'
  | 'UNKNOWN_FORMAT'
  | 'UNREADABLE'
  | 'NO_USABLE_COLUMN'
  | 'UNKNOWN_COLUMN'
  /** A company list with people datasets. */
  | 'WRONG_ENTITY'
  /** A people list with employer datasets but no way to learn the employers. */
  | 'NO_EMPLOYER';

/** Thrown when an input file cannot be read at all; the message starts with the file's location. */
export class InputFileError extends Error {
  override readonly name = 'InputFileError';
  constructor(
    readonly code: InputFileErrorCode,
    readonly file: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${detail}`, options);
  }
}

/** One usable-looking record. Values are text (JSON Lines numbers and objects are stringified); empty → null. */
export interface InputRow {
  rowNumber: number;
  values: Record<string, string | null>;
  /**
   * With `keepRaw`: the record exactly as the file has it (CSV: its text without the line break; JSON
   * Lines: the line), so a rejected row can be stored as it was. Parquet records have no text.
   */
  raw?: string;
}

/** A record that could not be read; the pipeline writes these to its rejects output. */
export interface InputReject {
  rowNumber: number;
  /** Physical line the record starts on (CSV, JSON Lines). */
  line?: number;
  reason: string;
  /**
   * The raw record: whole when it could be delimited (a wrong field count, a line that is not a JSON
   * object), else its start (at most 2,000 characters: a quote left open, an over-long record).
   */
  text?: string;
}

export interface InputChunk {
  rows: InputRow[];
  rejects: InputReject[];
}

export interface OpenInputOptions {
  /** Overrides detection by extension. */
  format?: InputFormat;
  /** CSV field separator; sniffed from the first 64 KiB among `,` `;` tab `|` when unset (tab for `.tsv`). */
  delimiter?: string;
  /** Rows plus rejects per chunk. Default 2,048. */
  chunkRows?: number;
  /** Give each row its record's raw text (`InputRow.raw`), for a planner that stores rejects as they were. */
  keepRaw?: boolean;
  /** A CSV record or JSON line longer than this many characters is rejected. Default 1 MiB. */
  maxRecordChars?: number;
  /** Scratch folder (Parquet downloads, DuckDB spill); the OS temp folder by default. */
  tempDir?: string;
  /** DuckDB settings for Parquet input; default memory limit 128MB. */
  duckdb?: DuckDBOptions;
  signal?: AbortSignal;
}

export interface InputFile {
  /** The location, for messages. */
  readonly name: string;
  readonly format: InputFormat;
  /**
   * Column names. CSV: the header, trimmed, blanks named `column_<n>`, repeats suffixed `_2`, `_3`.
   * JSON Lines: the keys of the records in the first 64 KiB (later records may carry more keys, which
   * appear in their values). Parquet: the schema's top-level columns.
   */
  readonly columns: readonly string[];
  /** CSV only: the delimiter in use. */
  readonly delimiter: string | undefined;
  /** Data rows when the file states it up front (Parquet); undefined for CSV and JSON Lines. */
  readonly rowCount: number | undefined;
  /** The rows, in file order. Single use; ending the iteration early closes the file. */
  chunks(): AsyncIterable<InputChunk>;
  close(): Promise<void>;
}

/** Rows plus rejects per chunk unless `chunkRows` says otherwise. */
export const DEFAULT_CHUNK_ROWS = 2048;
/** The most of a raw record a reject keeps. */
export const RAW_TEXT_LIMIT = 2000;

/** Sets a value, also under the name `__proto__` (which plain assignment would treat as the prototype). */
export function setValue(values: Record<string, string | null>, key: string, value: string | null): void {
  if (key === '__proto__') {
    Object.defineProperty(values, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    values[key] = value;
  }
}

/** Collects rows and rejects into chunks of exactly `size` entries (the last one smaller). */
export class ChunkBuilder {
  private rows: InputRow[] = [];
  private rejects: InputReject[] = [];
  readonly ready: InputChunk[] = [];
  constructor(private readonly size: number) {}

  addRow(row: InputRow): void {
    this.rows.push(row);
    if (this.rows.length + this.rejects.length >= this.size) this.cut();
  }

  addReject(reject: InputReject): void {
    this.rejects.push(reject);
    if (this.rows.length + this.rejects.length >= this.size) this.cut();
  }

  cut(): void {
    if (this.rows.length + this.rejects.length === 0) return;
    this.ready.push({ rows: this.rows, rejects: this.rejects });
    this.rows = [];
    this.rejects = [];
  }

  take(): InputChunk[] {
    return this.ready.splice(0, this.ready.length);
  }
}
