// A short-lived DuckDB session for activities that reshape tables (planning, joining match results,
// writing Parquet): storage's memory-capped instance plus a scratch folder for downloads and output
// files, both removed afterwards.
import type { DuckDBConnection } from '@duckdb/node-api';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDuckDB } from '../storage/duckdb.js';

export { sqlIdentifier as sqlIdent, sqlString } from '../storage/duckdb.js';

export interface DuckDbSessionOptions {
  /** Parent of the scratch folder; the OS temp folder by default. */
  workDir?: string;
  /** DuckDB `memory_limit`; default 256MB, so a worker's peak stays well under its budget. */
  memoryLimit?: string;
  /** DuckDB worker threads; default 2. Each thread has its own reader buffers: one uses less memory. */
  threads?: number;
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
  const scratchDir = await mkdtemp(path.join(options.workDir ?? tmpdir(), 'enrichflow-'));
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
    let session = await open();
    try {
      return await fn(session.connection, scratchDir, async () => {
        await session.close();
        session = await open();
        return session.connection;
      });
    } finally {
      await session.close();
    }
  } finally {
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
