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

/** Runs `use` with a fresh instance's connection and closes the instance afterwards, even on failure. */
export async function withDuckDB<T>(
  options: DuckDBOptions,
  use: (connection: DuckDBConnection) => Promise<T>,
): Promise<T> {
  const session = await openDuckDB(options);
  try {
    return await use(session.connection);
  } finally {
    await session.close();
  }
}

/** A SQL string literal. */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** A quoted SQL identifier. */
export function sqlIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** DuckDB error messages carry a SQL excerpt and hints after the first line; keep the first line. */
export function duckdbReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}
