// Writes the pipeline's Parquet tables: rows are spilled to a JSON Lines scratch file as they come
// (memory stays flat), then DuckDB converts the file in one `COPY … (FORMAT PARQUET, COMPRESSION ZSTD)`
// with every column's type pinned. Chosen by measurement: bench/results/parquet-writers.md.
// Also merges small parts into warehouse-sized files, and reads files back (counts, schema, rows).
import { createWriteStream, type WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import pLimit from 'p-limit';
import {
  duckdbReason,
  openDuckDB,
  sqlIdent,
  sqlString,
  withDuckDb,
  type DuckDBOptions,
} from '../../storage/duckdb.js';
import {
  describeLocation,
  jsonText,
  makeScratchDir,
  sha256File,
  withLocalCopy,
  type FileLocation,
} from '../../storage/files.js';
import { writeFileAtomically } from '../../storage/local-store.js';
import { ObjectNotFoundError, type ObjectStore } from '../../storage/object-store.js';
import { duckdbType, validateParquetSchema, type ParquetSchema } from './schema.js';

/** Thrown when DuckDB cannot write or merge a Parquet file (e.g. a value that does not fit its column). */
export class ParquetWriteError extends Error {
  override readonly name = 'ParquetWriteError';
  readonly code = 'PARQUET_WRITE_FAILED';
  constructor(
    readonly destination: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`writing ${destination}: ${detail}`, options);
  }
}

/** What the manifest records about a written file. */
export interface ParquetFileInfo {
  /** The destination: a local path or `s3://bucket/key` / `file:///…` URL. */
  location: string;
  /** The object key when written to a store. */
  key?: string;
  rowCount: number;
  bytes: number;
  /** SHA-256 of the file's bytes, hex. */
  sha256: string;
}

export interface ParquetWriteOptions {
  schema: ParquetSchema;
  /** A local path or a store key; the file appears there complete or not at all. */
  destination: FileLocation;
  /** Scratch folder for the spill file and DuckDB; the OS temp folder by default. */
  tempDir?: string;
  /**
   * DuckDB settings of the conversion. Default: memory limit 128MB and one thread — measured as fast as
   * two (the JSON scan of one file hardly parallelises) with ~60 MB less peak RSS.
   */
  duckdb?: DuckDBOptions;
  /** Default `zstd`. */
  compression?: 'zstd' | 'snappy';
  /**
   * Rows per row group. Default 50,000 for parts: DuckDB buffers a row group in memory, and 122,880
   * rows of firmographics overflow a 128MB limit (it then spills and runs twice as long). Merged files
   * use DuckDB's 122,880.
   */
  rowGroupSize?: number;
  signal?: AbortSignal;
}

/**
 * The write side of one Parquet table part: `write` rows (objects keyed by column name; missing keys
 * and undefined are NULL, unknown keys are ignored), then `finish` once.
 *
 * Values: `string` columns take strings; `int32`/`int64`/`double` numbers (int64 also bigint or a
 * decimal string); `boolean` booleans; `timestamptz` a Date or an ISO-8601 string (without an offset it
 * is UTC); `json` any JSON-serialisable value, stored as its JSON text; lists take arrays and structs
 * objects. NaN and ±Infinity become NULL. Otherwise DuckDB's casts apply (`"42"` → 42, 1.5 → 2 in an
 * integer column, 123 → `"123"` in a string column); a value no cast fits fails `finish` with a
 * `ParquetWriteError`.
 */
export interface ParquetSink {
  readonly rowCount: number;
  write(rows: Iterable<Record<string, unknown>>): Promise<void>;
  /** Converts the rows to Parquet at the destination and returns what the manifest needs. */
  finish(): Promise<ParquetFileInfo>;
  /** Drops everything written so far; nothing appears at the destination. */
  abort(): Promise<void>;
}

const SPILL_FLUSH_CHARS = 1 << 20;

function bigintSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

function serialiseRow(row: Record<string, unknown>): string {
  try {
    return JSON.stringify(row);
  } catch (error) {
    if (error instanceof TypeError && /BigInt/i.test(error.message)) return JSON.stringify(row, bigintSafe);
    throw error;
  }
}

function copyOptions(
  options: Pick<ParquetWriteOptions, 'compression' | 'rowGroupSize'>,
  defaultRowGroup: number,
): string {
  const compression = (options.compression ?? 'zstd').toUpperCase();
  return `FORMAT PARQUET, COMPRESSION ${compression}, ROW_GROUP_SIZE ${options.rowGroupSize ?? defaultRowGroup}`;
}

const PART_ROW_GROUP = 50_000;
const MERGED_ROW_GROUP = 122_880;

/** The SELECT that reads a spill file with every column's type pinned. */
function spillSelect(schema: ParquetSchema, spillFile: string | undefined): string {
  const columnsStruct = schema
    .map((f) => `${sqlString(f.name)}: ${sqlString(duckdbType(f.type, 'read'))}`)
    .join(', ');
  const items = schema.map((f) => {
    const read = duckdbType(f.type, 'read');
    const write = duckdbType(f.type, 'write');
    const id = sqlIdent(f.name);
    if (spillFile === undefined) return `CAST(NULL AS ${write}) AS ${id}`;
    return read === write ? id : `CAST(${id} AS ${write}) AS ${id}`;
  });
  if (spillFile === undefined) return `SELECT ${items.join(', ')} WHERE false`;
  return (
    `SELECT ${items.join(', ')} FROM read_json(${sqlString(spillFile)}, format = 'newline_delimited', ` +
    `columns = {${columnsStruct}})`
  );
}

/** Places a finished local file at its destination and describes it. */
async function deliver(
  localFile: string,
  destination: FileLocation,
  rowCount: number,
  signal: AbortSignal | undefined,
): Promise<ParquetFileInfo> {
  const [stat, sha256] = await Promise.all([fs.stat(localFile), sha256File(localFile)]);
  const info: ParquetFileInfo = {
    location: describeLocation(destination),
    rowCount,
    bytes: stat.size,
    sha256,
  };
  if ('path' in destination) {
    // A rename when the scratch folder is on the same file system, a copy otherwise.
    await writeFileAtomically(path.resolve(destination.path), (temp) =>
      fs.rename(localFile, temp).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EXDEV') throw error;
        return fs.copyFile(localFile, temp);
      }),
    );
  } else {
    await destination.store.putFile(destination.key, localFile, { signal });
    info.key = destination.key;
  }
  return info;
}

export class ParquetTableWriter implements ParquetSink {
  private readonly options: ParquetWriteOptions;
  private readonly scratch: string;
  private readonly spillFile: string;
  private spill: WriteStream | undefined;
  private buffer = '';
  private count = 0;
  private state: 'open' | 'finishing' | 'done' = 'open';

  private constructor(options: ParquetWriteOptions, scratch: string) {
    this.options = options;
    this.scratch = scratch;
    this.spillFile = path.join(scratch, 'rows.jsonl');
  }

  static async create(options: ParquetWriteOptions): Promise<ParquetTableWriter> {
    validateParquetSchema(options.schema);
    return new ParquetTableWriter(options, await makeScratchDir(options.tempDir));
  }

  get rowCount(): number {
    return this.count;
  }

  async write(rows: Iterable<Record<string, unknown>>): Promise<void> {
    if (this.state !== 'open') throw new Error('ParquetTableWriter: write after finish/abort');
    for (const row of rows) {
      this.buffer += serialiseRow(row);
      this.buffer += '\n';
      this.count += 1;
      if (this.buffer.length >= SPILL_FLUSH_CHARS) await this.flush();
    }
  }

  private async flush(): Promise<void> {
    if (this.buffer.length === 0) return;
    this.spill ??= createWriteStream(this.spillFile, { highWaterMark: SPILL_FLUSH_CHARS });
    const text = this.buffer;
    this.buffer = '';
    if (!this.spill.write(text)) await once(this.spill, 'drain');
  }

  async finish(): Promise<ParquetFileInfo> {
    if (this.state !== 'open') throw new Error('ParquetTableWriter: finish called twice');
    this.state = 'finishing';
    const destination = describeLocation(this.options.destination);
    try {
      await this.flush();
      if (this.spill) {
        this.spill.end();
        await once(this.spill, 'finish');
      }
      this.options.signal?.throwIfAborted();
      const out = path.join(this.scratch, 'table.parquet');
      const select = spillSelect(this.options.schema, this.count > 0 ? this.spillFile : undefined);
      await withDuckDb(
        { memoryLimit: '128MB', threads: 1, workDir: this.scratch, ...this.options.duckdb },
        async (connection) => {
          try {
            await connection.run(
              `COPY (${select}) TO ${sqlString(out)} (${copyOptions(this.options, PART_ROW_GROUP)})`,
            );
          } catch (error) {
            throw new ParquetWriteError(destination, duckdbReason(error), { cause: error });
          }
        },
      );
      await fs.rm(this.spillFile, { force: true }); // free the disk before the upload
      return await deliver(out, this.options.destination, this.count, this.options.signal);
    } finally {
      this.state = 'done';
      this.spill?.destroy();
      await fs.rm(this.scratch, { recursive: true, force: true });
    }
  }

  async abort(): Promise<void> {
    if (this.state === 'done') return;
    this.state = 'done';
    this.spill?.destroy();
    this.buffer = '';
    await fs.rm(this.scratch, { recursive: true, force: true });
  }
}

/** Opens a `ParquetSink` (a `ParquetTableWriter`). */
export function createParquetSink(options: ParquetWriteOptions): Promise<ParquetSink> {
  return ParquetTableWriter.create(options);
}

/** Writes rows (an array or any iterable, sync or async, of row batches or rows) as one Parquet file. */
export async function writeParquetFile(
  options: ParquetWriteOptions,
  rows: Iterable<Record<string, unknown>> | AsyncIterable<Record<string, unknown>[]>,
): Promise<ParquetFileInfo> {
  const writer = await ParquetTableWriter.create(options);
  try {
    if (Symbol.asyncIterator in rows) {
      for await (const batch of rows) await writer.write(batch);
    } else {
      await writer.write(rows);
    }
    return await writer.finish();
  } catch (error) {
    await writer.abort();
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------
// Merging parts

export interface MergeParquetPartsOptions {
  store: ObjectStore;
  /** Keys of the parts, in the order their rows should appear; all with the same schema. */
  parts: readonly string[];
  /** Key of the n-th merged file (0-based); should be deterministic so a retried merge overwrites. */
  outputKey: (index: number) => string;
  /** Smallest merged file, bytes; the whole table goes in one file when it is smaller. Default 64 MiB. */
  targetBytes?: number;
  tempDir?: string;
  /** DuckDB settings of the merge; default memory limit 256MB. Merges run single-threaded (see below). */
  duckdb?: Omit<DuckDBOptions, 'threads'>;
  compression?: 'zstd' | 'snappy';
  rowGroupSize?: number;
  signal?: AbortSignal;
}

/**
 * Compacts many small parts into few large files: every file at least `targetBytes`, except when the
 * whole table is smaller, in which case it is one file. Rows keep the parts' order. Parts are not
 * deleted (the commit step does that once the manifest is written).
 *
 * DuckDB starts a new file when one passes `FILE_SIZE_BYTES`; if the last file comes out smaller than
 * the target it is merged into the one before it. The merge runs on one DuckDB thread: with more, DuckDB
 * interleaves parts across output files, and the output would differ from run to run.
 */
export async function mergeParquetParts(options: MergeParquetPartsOptions): Promise<ParquetFileInfo[]> {
  const target = options.targetBytes ?? 64 * 1024 * 1024;
  if (options.parts.length === 0) return [];
  const scratch = await makeScratchDir(options.tempDir);
  try {
    // Bring the parts to local disk (a local store's files are read in place).
    const limit = pLimit(4);
    const localParts = await Promise.all(
      options.parts.map((key, index) =>
        limit(async () => {
          const direct = options.store.localPath(key);
          if (direct !== undefined) {
            if (!(await options.store.exists(key)))
              throw new ObjectNotFoundError(`${options.store.url}/${key}`);
            return direct;
          }
          const file = path.join(scratch, 'parts', `${String(index).padStart(6, '0')}.parquet`);
          await fs.mkdir(path.dirname(file), { recursive: true });
          await options.store.downloadToFile(key, file, { signal: options.signal });
          return file;
        }),
      ),
    );
    const where = `${options.store.url}/${options.outputKey(0)}`;
    const outDir = path.join(scratch, 'merged');
    const files = await withDuckDb(
      { workDir: scratch, ...options.duckdb, threads: 1 },
      async (connection) => {
        const source = `read_parquet([${localParts.map(sqlString).join(', ')}])`;
        try {
          await connection.run(
            `COPY (SELECT * FROM ${source}) TO ${sqlString(outDir)} (${copyOptions(options, MERGED_ROW_GROUP)}, FILE_SIZE_BYTES ${target})`,
          );
          const names = (await fs.readdir(outDir)).filter((f) => f.endsWith('.parquet'));
          const ordered = names
            .map((f) => ({ f, n: Number(/(\d+)\.parquet$/.exec(f)?.[1] ?? 0) }))
            .sort((a, b) => a.n - b.n)
            .map((x) => path.join(outDir, x.f));
          if (ordered.length === 0) {
            // Parts without rows: DuckDB wrote no file, but a table is still one file with its schema.
            const empty = path.join(scratch, 'empty.parquet');
            await connection.run(
              `COPY (SELECT * FROM ${source} LIMIT 0) TO ${sqlString(empty)} (${copyOptions(options, MERGED_ROW_GROUP)})`,
            );
            ordered.push(empty);
          }
          const last = ordered.at(-1);
          const beforeLast = ordered.at(-2);
          if (last && beforeLast && (await fs.stat(last)).size < target) {
            const joined = path.join(scratch, 'tail.parquet');
            await connection.run(
              `COPY (SELECT * FROM read_parquet([${sqlString(beforeLast)}, ${sqlString(last)}])) TO ${sqlString(joined)} (${copyOptions(options, MERGED_ROW_GROUP)})`,
            );
            ordered.splice(-2, 2, joined);
          }
          const counted: { file: string; rows: number }[] = [];
          for (const file of ordered) {
            const result = await connection.runAndReadAll(
              `SELECT count(*)::DOUBLE AS n FROM read_parquet(${sqlString(file)})`,
            );
            counted.push({ file, rows: Number(result.getRowObjectsJson()[0]?.n ?? 0) });
          }
          return counted;
        } catch (error) {
          throw new ParquetWriteError(where, `merge failed: ${duckdbReason(error)}`, { cause: error });
        }
      },
    );
    const results: ParquetFileInfo[] = [];
    for (const [index, { file, rows }] of files.entries()) {
      results.push(
        await deliver(file, { store: options.store, key: options.outputKey(index) }, rows, options.signal),
      );
    }
    return results;
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// Reading back

export interface ParquetFileDescription {
  rowCount: number;
  bytes: number;
  /** Top-level columns with the types DuckDB reports. */
  columns: { name: string; type: string }[];
}

export interface ReadParquetOptions {
  tempDir?: string;
  duckdb?: DuckDBOptions;
  signal?: AbortSignal;
}

/** Row count, size and column types of a Parquet file (from its footer; the data is not scanned). */
export async function describeParquetFile(
  location: FileLocation,
  options: ReadParquetOptions = {},
): Promise<ParquetFileDescription> {
  return withLocalCopy(location, options, async (file) => {
    const bytes = (await fs.stat(file)).size;
    return withDuckDb(
      { memoryLimit: '64MB', workDir: options.tempDir, ...options.duckdb },
      async (connection) => {
        const source = `read_parquet(${sqlString(file)})`;
        const schema = await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`);
        const count = await connection.runAndReadAll(`SELECT count(*)::DOUBLE AS n FROM ${source}`);
        return {
          rowCount: Number(count.getRowObjectsJson()[0]?.n ?? 0),
          bytes,
          columns: schema
            .getRowObjectsJson()
            .map((r) => ({ name: jsonText(r.column_name), type: jsonText(r.column_type) })),
        };
      },
    );
  });
}

/** Rows in a Parquet file. */
export async function countParquetRows(
  location: FileLocation,
  options: ReadParquetOptions = {},
): Promise<number> {
  return (await describeParquetFile(location, options)).rowCount;
}

/**
 * The rows of a Parquet file in batches, as JavaScript values: BIGINT → bigint, TIMESTAMPTZ → Date,
 * LIST → array, STRUCT → object, NULL → null. For checks and small tables; the file is downloaded first
 * when it lives in S3.
 */
export async function* readParquetRows(
  location: FileLocation,
  options: ReadParquetOptions & { columns?: readonly string[] } = {},
): AsyncGenerator<Record<string, unknown>[]> {
  const scratch =
    'path' in location || location.store.localPath(location.key)
      ? undefined
      : await makeScratchDir(options.tempDir);
  try {
    let file: string;
    if ('path' in location) file = location.path;
    else if (scratch === undefined) file = location.store.localPath(location.key)!;
    else {
      file = path.join(scratch, 'table.parquet');
      await location.store.downloadToFile(location.key, file, { signal: options.signal });
    }
    const session = await openDuckDB({ memoryLimit: '128MB', tempDir: options.tempDir, ...options.duckdb });
    try {
      const select = options.columns ? options.columns.map(sqlIdent).join(', ') : '*';
      const result = await session.connection.stream(
        `SELECT ${select} FROM read_parquet(${sqlString(file)})`,
      );
      for await (const rows of result.yieldRowObjectJs()) yield rows;
    } finally {
      await session.close();
    }
  } finally {
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  }
}
