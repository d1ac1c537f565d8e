// The plan files of a run: batches of match keys or ids in chunk files, written in one streamed pass
// and read back (cached per worker process) by the batch, retry and commit activities.
import type { DuckDBConnection } from '@duckdb/node-api';
import path from 'node:path';
import pLimit from 'p-limit';
import type { Logger } from '../lib/logger.js';
import { describeBatch } from '../pipeline/batch-queue.js';
import type { BatchRef, StageName } from '../pipeline/run-types.js';
import type {
  EnrichmentCalls,
  MatchItem,
  ProspectEnrichmentCalls,
  ProspectMatchItem,
} from './client-port.js';
import type { MemoryGate } from './attempt.js';
import { cancellationSignal, heartbeat } from './attempt.js';
import { queryRows, sqlString, withDuckDb } from '../storage/duckdb.js';
import { runLayout, stageBatching } from '../pipeline/run-layout.js';
import { downloadAll, type RunFiles, type StoreResolver } from '../storage/run-files.js';

export interface ActivityDeps {
  /** The Data Service: company calls, and the prospect calls of people runs. */
  calls: EnrichmentCalls & ProspectEnrichmentCalls;
  resolveStore: StoreResolver;
  logger: Logger;
  /** Scratch space for DuckDB and downloads; the OS temp folder by default. */
  workDir?: string;
  /** Plan files cached per worker process, so a chunk is fetched once for its many batches. */
  chunkCacheSize?: number;
  /** The process's limit on DuckDB activities at once (shared with the export and event activities). */
  gate?: MemoryGate;
}

export interface MatchKey extends MatchItem {
  key_id: number;
}

/** A people match key of a plan file (emails, phones and names: never in history, logs or failures). */
export interface ProspectMatchKey extends ProspectMatchItem {
  key_id: number;
}

/** Thrown when a batch reference points outside its plan file: a defect, never retried. */
export class BatchPlanError extends Error {
  override readonly name = 'BatchPlanError';
}

export function slice<T>(items: T[], ref: BatchRef): T[] {
  if (ref.offset === undefined) return items;
  return items.slice(ref.offset, ref.offset + (ref.length ?? items.length));
}

/** Rows per row group of the planned rows' Parquet file: smaller groups keep the copy's memory down. */
export const PLANNED_ROWS_GROUP = 16_384;

/** Size of the files a table's batch results are gathered into for its commit (`gatherLineParts`). */
export const RESULT_PART_BYTES = 4 << 20;

export function toJsonLines(values: unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join('\n') + (values.length ? '\n' : '');
}

/** A DuckDB session for an activity: scratch under the worker's work folder, interrupted on cancellation. */
export function duckFor(deps: ActivityDeps) {
  return <T>(
    fn: (
      connection: DuckDBConnection,
      scratch: string,
      reopen: () => Promise<DuckDBConnection>,
    ) => Promise<T>,
    options: { threads?: number } = {},
  ) => withDuckDb({ workDir: deps.workDir, signal: cancellationSignal(), ...options }, fn);
}

export type RunPlans = ReturnType<typeof createRunPlans>;

export function createRunPlans(deps: ActivityDeps) {
  const chunkCache = new Map<string, Promise<unknown[][]>>();
  const chunkCacheSize = deps.chunkCacheSize ?? 256;
  function readChunk<T>(files: RunFiles, key: string): Promise<T[][]> {
    const cacheKey = `${files.store.url}|${files.key(key)}`;
    let cached = chunkCache.get(cacheKey);
    if (!cached) {
      cached = files.getJson<unknown[][]>(key);
      cached.catch(() => chunkCache.delete(cacheKey));
      chunkCache.set(cacheKey, cached);
      if (chunkCache.size > chunkCacheSize) {
        const oldest = chunkCache.keys().next().value;
        if (oldest !== undefined) chunkCache.delete(oldest);
      }
    }
    return cached as Promise<T[][]>;
  }

  async function batchItems<T>(files: RunFiles, chunkKey: string, ref: BatchRef): Promise<T[]> {
    const chunk = await readChunk<T>(files, chunkKey);
    const batch = chunk[ref.index];
    if (!batch) throw new BatchPlanError(`batch ${describeBatch(ref)} is not in ${chunkKey}`);
    return slice(batch, ref);
  }

  /**
   * Writes items, given as JSON texts in order (a group at a time), as plan files of `perChunk` batches
   * of `batchSize`; the files read as `JSON.stringify(batches)` of the items would.
   */
  async function writePlanFiles(
    files: RunFiles,
    groups: AsyncIterable<string[]>,
    total: number,
    batchSize: number,
    perChunk: number,
    keyFor: (chunk: number) => string,
  ): Promise<number> {
    const limit = pLimit(8);
    const uploads = new Set<Promise<void>>();
    let chunk = 0;
    let batch: string[] = [];
    let batches: string[] = [];
    const flush = async () => {
      const body = `[${batches.join(',')}]`;
      batches = [];
      const key = files.key(keyFor(chunk));
      const upload = limit(() => files.store.put(key, body, { contentType: 'application/json' }));
      uploads.add(upload);
      void upload.finally(() => uploads.delete(upload)).catch(() => undefined);
      if (chunk % 50 === 0) heartbeat({ chunk });
      chunk += 1;
      // Back-pressure: a few files in memory at most, whatever the size of the plan.
      if (uploads.size >= 16) await Promise.race(uploads);
    };
    for await (const items of groups) {
      for (const item of items) {
        batch.push(item);
        if (batch.length === batchSize) {
          batches.push(`[${batch.join(',')}]`);
          batch = [];
          if (batches.length === perChunk) await flush();
        }
      }
    }
    if (batch.length > 0) batches.push(`[${batch.join(',')}]`);
    if (batches.length > 0) await flush();
    await Promise.all(uploads);
    const perFile = batchSize * perChunk;
    if (chunk * perFile < total || (chunk - 1) * perFile >= total) {
      throw new BatchPlanError(`plan files hold a different number of items than the ${total} planned`);
    }
    return Math.ceil(total / batchSize);
  }

  /** Writes `<table>`-shaped batches of items as plan files of `perChunk` batches each. */
  function writeChunks(
    connection: DuckDBConnection,
    files: RunFiles,
    sql: string,
    total: number,
    batchSize: number,
    perChunk: number,
    keyFor: (chunk: number) => string,
    toItem: (row: Record<string, unknown>) => unknown = (row) => row,
  ): Promise<number> {
    // One streamed pass over the query (not a sorted query per file): rows go out as files fill.
    async function* items() {
      const result = await connection.stream(sql);
      for await (const rows of result.yieldRowObjectJson())
        yield rows.map((row) => JSON.stringify(toItem(row)));
    }
    return writePlanFiles(files, items(), total, batchSize, perChunk, keyFor);
  }

  /**
   * Adds plan files for ids of `ids` (its column `id`: business or prospect ids) that the existing
   * plan files of this batch size lack.
   */
  async function appendIdChunks(
    connection: DuckDBConnection,
    files: RunFiles,
    batchSize: number,
    batchesPerChunk: number,
    scratch: string,
    idTable = 'ids',
    idPlan?: string,
  ): Promise<{ totalBatches: number; added: BatchRef[] }> {
    const planPrefix = runLayout.idPlanPrefix(batchSize, idPlan);
    const existing = await files.list(planPrefix);
    // Heartbeats as it goes (downloadAll reports every 200 objects): a large plan is thousands of them.
    const local = await downloadAll(files, existing, path.join(scratch, planPrefix), (downloaded) =>
      heartbeat({ downloaded }),
    );
    const known = local.length
      ? `SELECT unnest(flatten(json_transform(json, '[["VARCHAR"]]'))) AS id FROM read_json_objects([${local.map(sqlString).join(', ')}], format = 'unstructured')`
      : `SELECT NULL::VARCHAR AS id WHERE false`;
    await connection.run(`CREATE OR REPLACE TABLE known_ids AS ${known}`);
    const [old] = await queryRows<{ n: number }>(connection, 'SELECT count(*) AS n FROM known_ids');
    await connection.run(
      `CREATE OR REPLACE TABLE new_ids AS SELECT id FROM ${idTable} WHERE id NOT IN (SELECT id FROM known_ids) ORDER BY rowid`,
    );
    const [fresh] = await queryRows<{ n: number }>(connection, 'SELECT count(*) AS n FROM new_ids');
    const oldBatches = Math.ceil(Number(old?.n ?? 0) / batchSize);
    const newCount = Number(fresh?.n ?? 0);
    const firstChunk = existing.length;
    const added: BatchRef[] = [];
    if (newCount > 0) {
      const batches = await writeChunks(
        connection,
        files,
        'SELECT id FROM new_ids ORDER BY rowid',
        newCount,
        batchSize,
        batchesPerChunk,
        (chunk) => runLayout.idChunk(batchSize, firstChunk + chunk, idPlan),
        (row) => row.id,
      );
      for (let b = 0; b < batches; b += 1) {
        added.push({ chunk: firstChunk + Math.floor(b / batchesPerChunk), index: b % batchesPerChunk });
      }
    }
    return { totalBatches: oldBatches + added.length, added };
  }

  /**
   * The ids (or match keys, as JSON) of a failed batch, for the failures table. A people match batch
   * gives its key ids only: its keys are emails, phones and names.
   */
  async function failedItems(
    files: RunFiles,
    stage: StageName,
    ref: BatchRef,
    idPlan?: string,
  ): Promise<string[]> {
    if (stage === 'match') {
      const keys = await batchItems<MatchKey>(files, runLayout.matchChunk(ref.chunk), ref);
      return keys.map((k) => JSON.stringify(k));
    }
    if (stage === 'prospect_match') {
      const keys = await batchItems<ProspectMatchKey>(files, runLayout.matchChunk(ref.chunk), ref);
      return keys.map((k) => `key_id ${k.key_id}`);
    }
    const { batchSize } = stageBatching(stage);
    return batchItems<string>(files, runLayout.idChunk(batchSize, ref.chunk, idPlan), ref);
  }
  return { readChunk, batchItems, writePlanFiles, writeChunks, appendIdChunks, failedItems };
}
