// Parquet input, read by DuckDB: Parquet needs random access, so it is read from a local file (an
// object in a remote store is downloaded to a temporary file first). The row count is known up front.
import fs from 'node:fs/promises';
import path from 'node:path';
import { duckdbReason, openDuckDB, sqlIdent, sqlString, type DuckDBSession } from '../duckdb.js';
import { jsonText, makeScratchDir, type FileLocation } from '../files.js';
import { ObjectNotFoundError } from '../object-store.js';
import {
  DEFAULT_CHUNK_ROWS,
  InputFileError,
  setValue,
  type InputFile,
  type InputRow,
  type OpenInputOptions,
} from './input-file.js';

/** Top-level DuckDB types that are not scalars: read as JSON text. */
function isNestedType(type: string): boolean {
  return /\]$/.test(type) || /^(STRUCT|MAP|UNION)\(/.test(type) || type === 'JSON';
}

async function checkParquetMagic(file: string, name: string): Promise<void> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new InputFileError('NOT_FOUND', name, 'file not found', { cause: error });
    throw new InputFileError('UNREADABLE', name, `cannot open: ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new InputFileError('WRONG_FORMAT', name, 'is a folder, not a file');
    if (stat.size === 0) throw new InputFileError('EMPTY', name, 'is empty (0 bytes)');
    const head = Buffer.alloc(4);
    const tail = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    if (stat.size >= 8) await handle.read(tail, 0, 4, stat.size - 4);
    if (head.toString('latin1') !== 'PAR1' || tail.toString('latin1') !== 'PAR1') {
      throw new InputFileError(
        'WRONG_FORMAT',
        name,
        'is not a Parquet file (no PAR1 magic at its start and end)',
      );
    }
  } finally {
    await handle.close();
  }
}

export async function openParquetInput(
  location: FileLocation,
  name: string,
  options: OpenInputOptions,
): Promise<InputFile> {
  let scratch: string | undefined;
  let session: DuckDBSession | undefined;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await session?.close();
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  };
  try {
    let file: string;
    if ('path' in location) {
      file = location.path;
    } else {
      const direct = location.store.localPath(location.key);
      if (direct !== undefined) {
        file = direct;
      } else {
        scratch = await makeScratchDir(options.tempDir);
        file = path.join(scratch, 'input.parquet');
        try {
          await location.store.downloadToFile(location.key, file, { signal: options.signal });
        } catch (error) {
          if (error instanceof ObjectNotFoundError)
            throw new InputFileError('NOT_FOUND', name, 'object not found', { cause: error });
          throw new InputFileError('UNREADABLE', name, `cannot download: ${(error as Error).message}`, {
            cause: error,
          });
        }
      }
    }
    await checkParquetMagic(file, name);
    session = await openDuckDB({ memoryLimit: '128MB', tempDir: options.tempDir, ...options.duckdb });
    const source = `read_parquet(${sqlString(file)})`;
    let described: { name: string; type: string }[];
    let rowCount: number;
    try {
      const schema = await session.connection.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`);
      described = schema
        .getRowObjectsJson()
        .map((r) => ({ name: jsonText(r.column_name), type: jsonText(r.column_type) }));
      const count = await session.connection.runAndReadAll(`SELECT count(*)::DOUBLE AS n FROM ${source}`);
      rowCount = Number(count.getRowObjectsJson()[0]?.n ?? 0);
    } catch (error) {
      throw new InputFileError('UNREADABLE', name, `cannot read as Parquet: ${duckdbReason(error)}`, {
        cause: error,
      });
    }
    if (described.length === 0) throw new InputFileError('NO_HEADER', name, 'has no columns');
    const columns = described.map((c) => c.name);
    const items = described.map((c) =>
      isNestedType(c.type) ? `to_json(${sqlIdent(c.name)})::VARCHAR` : `CAST(${sqlIdent(c.name)} AS VARCHAR)`,
    );
    // One JSON array per row: a single string per row crosses from DuckDB to JavaScript fastest.
    const query = `SELECT to_json([${items.join(', ')}])::VARCHAR AS row FROM ${source}`;
    const opened = session;
    let started = false;
    return {
      name,
      format: 'parquet',
      columns,
      delimiter: undefined,
      rowCount,
      close,
      async *chunks() {
        if (started) throw new Error(`${name}: chunks() can be iterated once`);
        started = true;
        try {
          const result = await opened.connection.stream(query);
          const size = options.chunkRows ?? DEFAULT_CHUNK_ROWS;
          let rowNumber = 0;
          let rows: InputRow[] = [];
          for (;;) {
            options.signal?.throwIfAborted();
            const chunk = await result.fetchChunk();
            if (!chunk || chunk.rowCount === 0) break;
            const vector = chunk.getColumnVector(0);
            for (let i = 0; i < chunk.rowCount; i++) {
              const cells = JSON.parse(vector.getItem(i) as string) as (string | null)[];
              const values: Record<string, string | null> = {};
              for (let j = 0; j < columns.length; j++) {
                const cell = cells[j];
                setValue(values, columns[j]!, cell === undefined || cell === '' ? null : cell);
              }
              rowNumber += 1;
              rows.push({ rowNumber, values });
              if (rows.length >= size) {
                yield { rows, rejects: [] };
                rows = [];
              }
            }
          }
          if (rows.length > 0) yield { rows, rejects: [] };
        } catch (error) {
          if (error instanceof InputFileError || (error as Error).name === 'AbortError') throw error;
          throw new InputFileError('UNREADABLE', name, `read failed: ${duckdbReason(error)}`, {
            cause: error,
          });
        } finally {
          await close();
        }
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}
