// A short-lived DuckDB database in a scratch folder, for activities that reshape tables (planning,
// joining match results, writing Parquet). Memory is capped and DuckDB spills to the folder beyond it.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface DuckDbSessionOptions {
  /** Parent of the scratch folder; the OS temp folder by default. */
  workDir?: string;
  /** DuckDB `memory_limit`; default 256MB, so a worker's peak stays well under its budget. */
  memoryLimit?: string;
  threads?: number;
}

export async function withDuckDb<T>(
  options: DuckDbSessionOptions,
  fn: (connection: DuckDBConnection, scratchDir: string) => Promise<T>,
): Promise<T> {
  const scratchDir = await mkdtemp(path.join(options.workDir ?? tmpdir(), 'enrichflow-'));
  const instance = await DuckDBInstance.create(path.join(scratchDir, 'session.duckdb'), {
    memory_limit: options.memoryLimit ?? '256MB',
    threads: String(options.threads ?? 2),
    temp_directory: path.join(scratchDir, 'spill'),
    preserve_insertion_order: 'true',
  });
  const connection = await instance.connect();
  try {
    return await fn(connection, scratchDir);
  } finally {
    connection.closeSync();
    instance.closeSync();
    await rm(scratchDir, { recursive: true, force: true });
  }
}

/** A SQL string literal. */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** A quoted SQL identifier. */
export function sqlIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Runs a query and returns its rows as plain JSON-compatible objects. */
export async function queryRows<T = Record<string, unknown>>(
  connection: DuckDBConnection,
  sql: string,
): Promise<T[]> {
  const reader = await connection.runAndReadAll(sql);
  return reader.getRowObjectsJson() as T[];
}
