// Short-lived DuckDB instances for Parquet work: one per operation, memory-capped, spilling to a
// scratch folder, offline (no extension downloads), UTC — and always closed, even on failure.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface DuckDBOptions {
  /**
   * DuckDB's `memory_limit` (e.g. `256MB`). DuckDB spills to `tempDir` beyond it; the process also
   * holds DuckDB's library (~40 MB) outside the limit. Default `256MB`.
   */
  memoryLimit?: string;
  /** Worker threads of the instance. Default 2 (the machines this runs on have two cores). */
  threads?: number;
  /** Folder for DuckDB's spill files and our own scratch files; the OS temp folder by default. */
  tempDir?: string;
}

/** An open instance with one connection; `close` releases both and the spill folder. */
export interface DuckDBSession {
  connection: DuckDBConnection;
  close(): Promise<void>;
}

/**
 * Opens a private in-memory instance. Creating one costs ~20 ms and operations here run for
 * milliseconds to seconds on whole files, so one instance per operation keeps memory limits simple
 * (the limit is the instance's) without pooling.
 */
export async function openDuckDB(options: DuckDBOptions = {}): Promise<DuckDBSession> {
  const spillDir = await mkdtemp(path.join(options.tempDir ?? tmpdir(), 'enrichflow-duckdb-'));
  let instance: DuckDBInstance | undefined;
  let connection: DuckDBConnection | undefined;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    connection?.closeSync();
    instance?.closeSync();
    await rm(spillDir, { recursive: true, force: true });
  };
  try {
    instance = await DuckDBInstance.create(':memory:', {
      memory_limit: options.memoryLimit ?? '256MB',
      threads: String(options.threads ?? 2),
      temp_directory: spillDir,
      // Everything needed (parquet, json) is built in; never try the network.
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    });
    connection = await instance.connect();
    // Zone-less timestamp text is read as UTC, and TIMESTAMPTZ prints in UTC.
    await connection.run("SET GLOBAL TimeZone = 'UTC'");
    return { connection, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface DuckDbSessionOptions {
  /** Parent of the scratch folder; the OS temp folder by default. */
  workDir?: string;
  /** DuckDB `memory_limit`; default 256MB, so a worker's peak stays well under its budget. */
  memoryLimit?: string;
  /** DuckDB worker threads; default 2. Each thread has its own reader buffers: one uses less memory. */
  threads?: number;
  /**
   * Aborting interrupts the running query (DuckDB checks for it between vectors) and makes the session
   * reject with the signal's reason; the instance and scratch folder are still removed.
   */
  signal?: AbortSignal;
}

/**
 * Runs `fn` with a fresh DuckDB instance and a scratch folder, both removed afterwards. `reopen` closes
 * the instance and hands out a new one on the same folder: DuckDB's freed memory stays with the
 * process's allocator until its instance closes, so a step that follows a large one starts lower.
 */
export async function withDuckDb<T>(
  options: DuckDbSessionOptions,
  fn: (
    connection: DuckDBConnection,
    scratchDir: string,
    reopen: () => Promise<DuckDBConnection>,
  ) => Promise<T>,
): Promise<T> {
  const { signal } = options;
  signal?.throwIfAborted();
  const scratchDir = await mkdtemp(path.join(options.workDir ?? tmpdir(), 'enrichflow-'));
  let session: DuckDBSession | undefined;
  const interrupt = () => session?.connection.interrupt();
  signal?.addEventListener('abort', interrupt, { once: true });
  try {
    const open = async () => {
      const opened = await openDuckDB({
        memoryLimit: options.memoryLimit ?? '256MB',
        tempDir: scratchDir,
        ...(options.threads ? { threads: options.threads } : {}),
      });
      try {
        // Rows keep their insertion order so plans and tables come out in input order.
        await opened.connection.run('SET preserve_insertion_order = true');
      } catch (error) {
        await opened.close();
        throw error;
      }
      return opened;
    };
    session = await open();
    try {
      const result = await fn(session.connection, scratchDir, async () => {
        await session?.close();
        session = await open();
        return session.connection;
      });
      signal?.throwIfAborted();
      return result;
    } catch (error) {
      // An interrupted query fails with DuckDB's "INTERRUPT" error: the caller wants the abort reason.
      signal?.throwIfAborted();
      throw error;
    } finally {
      await session.close();
    }
  } finally {
    signal?.removeEventListener('abort', interrupt);
    await rm(scratchDir, { recursive: true, force: true });
  }
}

/** Runs a query and returns its rows as plain JSON-compatible objects. */
export async function queryRows<T = Record<string, unknown>>(
  connection: DuckDBConnection,
  sql: string,
): Promise<T[]> {
  const reader = await connection.runAndReadAll(sql);
  return reader.getRowObjectsJson() as T[];
}

/** A SQL string literal. */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** A quoted SQL identifier. */
export function sqlIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** DuckDB error messages carry a SQL excerpt and hints after the first line; keep the first line. */
export function duckdbReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}
