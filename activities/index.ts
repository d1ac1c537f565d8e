// The enrichment activities, built over their dependencies (a Data Service client, an object-store
// resolver, a logger). They exchange object keys and counts with workflows; rows stay in the store.
import type { DuckDBConnection } from '@duckdb/node-api';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { isBulkDataset } from '../contract/datasets.js';
import type { Logger } from '../lib/logger.js';
import { describeBatch } from '../pipeline/batch-queue.js';
import type {
  BatchFailure,
  BatchOutcome,
  BatchRef,
  EnrichDataset,
  EnrichPlanSummary,
  EnrichRunInput,
  InputSpec,
  PendingBatches,
  PlanSummary,
  RunLocation,
  RunSummary,
  StageName,
  StagePlan,
  StageResult,
  TableSummary,
} from '../pipeline/run-types.js';
import type { EnrichmentCalls, MatchItem, RateLimitInfo } from './client-port.js';
import { easeOff, pacedCall } from './api-pacing.js';
import type { MemoryGate } from './attempt.js';
import { attemptNumber, cancellationSignal, disciplined, heartbeat, toActivityFailure } from './attempt.js';
import { queryRows, sqlString, withDuckDb } from '../storage/duckdb.js';
import { readLocalTable, writeParquetTable } from './parquet-tables.js';
import { rejectReasonsOf, renderRunReport } from './report.js';
import { planInput, planLines } from '../storage/plan-input.js';
import {
  BATCHES_PER_CHUNK,
  BATCH_SIZE,
  ledgerKey,
  runLayout,
  stageBatching,
} from '../pipeline/run-layout.js';
import { joinKey } from '../storage/object-store.js';
import {
  downloadAll,
  gatherLineParts,
  gatherLines,
  RunFiles,
  type StoreResolver,
} from '../storage/run-files.js';
import { datasetColumns, datasetRecordStruct } from './table-schema.js';

export { InputFileError } from '../storage/plan-input.js';

export interface ActivityDeps {
  calls: EnrichmentCalls;
  resolveStore: StoreResolver;
  logger: Logger;
  /** Scratch space for DuckDB and downloads; the OS temp folder by default. */
  workDir?: string;
  /** Plan files cached per worker process, so a chunk is fetched once for its many batches. */
  chunkCacheSize?: number;
  /** The process's limit on DuckDB activities at once (shared with the export and event activities). */
  gate?: MemoryGate;
}

interface MatchKey extends MatchItem {
  key_id: number;
}

/** Thrown when a batch reference points outside its plan file: a defect, never retried. */
export class BatchPlanError extends Error {
  override readonly name = 'BatchPlanError';
}

function slice<T>(items: T[], ref: BatchRef): T[] {
  if (ref.offset === undefined) return items;
  return items.slice(ref.offset, ref.offset + (ref.length ?? items.length));
}

/** Rows per row group of the planned rows' Parquet file: smaller groups keep the copy's memory down. */
const PLANNED_ROWS_GROUP = 16_384;

/** Size of the files a table's batch results are gathered into for its commit (`gatherLineParts`). */
const RESULT_PART_BYTES = 4 << 20;

function toJsonLines(values: unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join('\n') + (values.length ? '\n' : '');
}

export function createActivities(deps: ActivityDeps) {
  return disciplined(
    activitiesOver(deps),
    {
      planRun: 'tablePlanning',
      callBatch: 'apiCall',
      buildEnrichPlan: 'tablePlanning',
      planRetry: 'tablePlanning',
      recordFailures: 'bookkeeping',
      commitTable: 'tableCommit',
      commitRun: 'tableCommit',
    },
    ['planRun', 'buildEnrichPlan', 'commitTable', 'commitRun'],
    deps.gate,
  );
}

function activitiesOver(deps: ActivityDeps) {
  const { calls, resolveStore, logger } = deps;
  const chunkCache = new Map<string, Promise<unknown[][]>>();
  const chunkCacheSize = deps.chunkCacheSize ?? 256;

  const duck = <T>(
    fn: (
      connection: DuckDBConnection,
      scratch: string,
      reopen: () => Promise<DuckDBConnection>,
    ) => Promise<T>,
    options: { threads?: number } = {},
  ) => withDuckDb({ workDir: deps.workDir, signal: cancellationSignal(), ...options }, fn);

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

  return {
    /** Reads the input, rejects unusable rows, and writes the match plan (or, with ids given, the row table). */
    planRun: async ({ run, input }: { run: RunLocation; input: InputSpec }): Promise<PlanSummary> => {
      const files = RunFiles.open(resolveStore, run);
      const source = resolveStore(input.location);
      // One DuckDB thread: it only copies the planned rows and rejects from CSV to Parquet, and a
      // second thread doubles the memory of that copy (each holds a row group and a read buffer).
      return duck(
        async (connection, scratch) => {
          heartbeat({ step: 'reading input' });
          const planned = await planInput(connection, { store: source.store, key: source.prefix }, input, {
            tempDir: scratch,
            onProgress: (records) => heartbeat({ step: 'reading input', records }),
          });
          let match: StagePlan | undefined;
          if (!planned.idsProvided && planned.uniqueKeys > 0) {
            // The keys file's lines are the plan items, in key_id order. Plan files go first, while
            // DuckDB has not yet taken memory for the Parquet copies.
            const totalBatches = await writePlanFiles(
              files,
              planLines(planned.keysFile),
              planned.uniqueKeys,
              BATCH_SIZE,
              BATCHES_PER_CHUNK,
              runLayout.matchChunk,
            );
            match = {
              stage: 'match',
              totalBatches,
              batchesPerChunk: BATCHES_PER_CHUNK,
              totalItems: planned.uniqueKeys,
            };
          }
          const rowsFile = path.join(scratch, 'rows.parquet');
          await connection.run(
            `COPY rows TO ${sqlString(rowsFile)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${PLANNED_ROWS_GROUP})`,
          );
          await files.store.putFile(files.key(runLayout.plannedRows), rowsFile);
          // The rejects view is in row order already.
          await writeParquetTable(
            connection,
            files,
            'rejects',
            'SELECT row_number, reason, record FROM rejects',
            scratch,
          );
          const summary: PlanSummary = {
            inputRows: planned.inputRows,
            rejectedRows: planned.rejectedRows,
            uniqueKeys: planned.uniqueKeys,
            idsProvided: planned.idsProvided,
            ...(match ? { match } : {}),
          };
          await files.putJson(runLayout.planSummary, { ...summary, columns: planned.mapping });
          logger.info({ runId: run.runId, ...summary }, 'planned run');
          return summary;
        },
        { threads: 1 },
      );
    },

    /** One call to the service for one batch; its records go to the batch's result file. */
    callBatch: async ({
      run,
      stage,
      batch,
      parameters,
      idPlan,
    }: {
      run: RunLocation;
      stage: StageName;
      batch: BatchRef;
      parameters?: Record<string, unknown>;
      /** The stage's own plan files, when it has them (incremental runs). */
      idPlan?: string;
    }): Promise<BatchOutcome> => {
      const files = RunFiles.open(resolveStore, run);
      if (stage === 'match') {
        const keys = await batchItems<MatchKey>(files, runLayout.matchChunk(batch.chunk), batch);
        const items = keys.map(({ key_id: _id, ...fields }) =>
          Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null && v !== undefined)),
        );
        let response;
        try {
          response = await pacedCall('match', (options) =>
            calls.matchBusinesses({ businesses_to_match: items }, options),
          );
        } catch (error) {
          throw toActivityFailure(error, { items: items.length });
        }
        const results = keys.map((key, i) => ({
          key_id: key.key_id,
          business_id: response.body.matched_businesses[i]?.business_id ?? null,
        }));
        await files.store.put(files.key(runLayout.result(stage, batch)), toJsonLines(results));
        await easeOff(response.rateLimit);
        const matched = results.filter((r) => r.business_id !== null).length;
        return { records: matched, misses: results.length - matched, calls: attemptNumber() };
      }
      const { batchSize, batchesPerChunk } = stageBatching(stage);
      if (batch.index >= batchesPerChunk)
        throw new BatchPlanError(`batch ${describeBatch(batch)} is out of range`);
      const ids = await batchItems<string>(files, runLayout.idChunk(batchSize, batch.chunk, idPlan), batch);
      let lines: { business_id: string; data: unknown }[];
      let rateLimit: RateLimitInfo | undefined;
      try {
        if (stage === 'company_hierarchies') {
          const [businessId] = ids;
          if (!businessId) throw new BatchPlanError(`batch ${describeBatch(batch)} is empty`);
          const response = await pacedCall(stage, (options) =>
            calls.enrichHierarchy(
              { business_id: businessId, ...(parameters ? { parameters } : {}) },
              options,
            ),
          );
          lines = response.body.data ? [{ business_id: businessId, data: response.body.data }] : [];
          rateLimit = response.rateLimit;
        } else if (isBulkDataset(stage)) {
          const response = await pacedCall(stage, (options) =>
            calls.bulkEnrich(stage, { business_ids: ids, ...(parameters ? { parameters } : {}) }, options),
          );
          lines = response.body.data;
          rateLimit = response.rateLimit;
        } else {
          throw new BatchPlanError(`unknown stage ${String(stage)}`);
        }
      } catch (error) {
        if (error instanceof BatchPlanError) throw error;
        throw toActivityFailure(error, { items: ids.length });
      }
      // Misses are written too (data null): the table leaves them out, the freshness ledger counts them
      // as asked for.
      const found = new Set(lines.map((line) => line.business_id));
      const misses = ids.filter((id) => !found.has(id)).map((id) => ({ business_id: id, data: null }));
      await files.store.put(files.key(runLayout.result(stage, batch)), toJsonLines([...lines, ...misses]));
      await easeOff(rateLimit);
      return { records: lines.length, misses: misses.length, calls: attemptNumber() };
    },

    /** Joins match results to the input rows (the `matches` table) and plans the id batches of each dataset. */
    buildEnrichPlan: async ({
      run,
      datasets,
      idsProvided,
      append = false,
      maxAgeMs,
      asOf,
    }: {
      run: RunLocation;
      datasets: EnrichDataset[];
      idsProvided: boolean;
      /** Incremental: leave out, per dataset, ids the output's ledger saw less than this long before `asOf`. */
      maxAgeMs?: number;
      /** The run's start, epoch ms: freshness is judged against it (the same on every attempt). */
      asOf?: number;
      /**
       * Keep the existing id plan and add batches only for ids it lacks (after a retry matched more
       * rows); the added batches are returned per stage.
       */
      append?: boolean;
    }): Promise<EnrichPlanSummary & { appended: PendingBatches[] }> => {
      const files = RunFiles.open(resolveStore, run);
      return duck(async (connection, scratch) => {
        const rowsFile = path.join(scratch, 'rows.parquet');
        await files.store.downloadToFile(files.key(runLayout.plannedRows), rowsFile);
        await connection.run(`CREATE TABLE rows AS SELECT * FROM read_parquet(${sqlString(rowsFile)})`);
        const inputColumns = (await queryRows<{ column_name: string }>(connection, 'DESCRIBE rows'))
          .map((c) => c.column_name)
          .filter((c) => c.startsWith('input_'))
          .map((c) => `r."${c.replaceAll('"', '""')}"`);
        const inputs = inputColumns.length ? `${inputColumns.join(', ')}, ` : '';
        if (idsProvided) {
          await connection.run(
            `CREATE TABLE matched AS SELECT r.row_number, ${inputs}r.business_id, 'provided' AS match_status FROM rows r`,
          );
        } else {
          const resultKeys = await files.list(runLayout.resultsPrefix('match'));
          const local = await gatherLines(files, resultKeys, path.join(scratch, 'match-results.jsonl'), (n) =>
            heartbeat({ gathered: n }),
          );
          const source = local
            ? `read_json(${sqlString(local)}, format = 'newline_delimited', columns = {key_id: 'BIGINT', business_id: 'VARCHAR'})`
            : `(SELECT NULL::BIGINT AS key_id, NULL::VARCHAR AS business_id WHERE false)`;
          await connection.run(`CREATE TABLE results AS SELECT DISTINCT key_id, business_id FROM ${source}`);
          await connection.run(
            `CREATE TABLE matched AS SELECT r.row_number, ${inputs}m.business_id,
               CASE WHEN m.key_id IS NULL THEN 'match_failed' WHEN m.business_id IS NULL THEN 'unmatched' ELSE 'matched' END AS match_status
             FROM rows r LEFT JOIN results m ON m.key_id = r.key_id`,
          );
        }
        await writeParquetTable(
          connection,
          files,
          'matches',
          'SELECT * FROM matched ORDER BY row_number',
          scratch,
        );
        await connection.run(
          `CREATE TABLE ids AS SELECT business_id FROM matched WHERE business_id IS NOT NULL
             GROUP BY business_id ORDER BY min(row_number)`,
        );
        const [counts] = await queryRows<{ matched: number; unmatched: number; ids: number }>(
          connection,
          `SELECT count(*) FILTER (WHERE business_id IS NOT NULL) AS matched, count(*) FILTER (WHERE business_id IS NULL) AS unmatched,
                  (SELECT count(*) FROM ids) AS ids FROM matched`,
        );
        const uniqueIds = Number(counts?.ids ?? 0);
        const stages: StagePlan[] = [];
        const appended: PendingBatches[] = [];
        const written = new Map<string, { totalBatches: number; added: BatchRef[] }>();
        const output = resolveStore(run.output);
        for (const dataset of datasets) {
          const { batchSize, batchesPerChunk } = stageBatching(dataset);
          // An incremental run plans each dataset apart: its ids minus those its ledger finds fresh.
          let idTable = 'ids';
          let idPlan: string | undefined;
          let items = uniqueIds;
          if (maxAgeMs !== undefined) {
            idPlan = `ids-${batchSize}-${dataset}`;
            idTable = `ids_${datasets.indexOf(dataset)}`;
            const ledger = joinKey(output.prefix, ledgerKey(dataset));
            const local = path.join(scratch, `ledger-${dataset}.parquet`);
            const fresh = (await output.store.exists(ledger))
              ? (await output.store.downloadToFile(ledger, local),
                `SELECT business_id FROM read_parquet(${sqlString(local)})
                   WHERE checked_at >= to_timestamp(${((asOf ?? Date.now()) - maxAgeMs) / 1000})`)
              : 'SELECT NULL::VARCHAR AS business_id WHERE false';
            await connection.run(
              `CREATE TABLE ${idTable} AS SELECT business_id FROM ids
                 WHERE business_id NOT IN (${fresh}) ORDER BY rowid`,
            );
            const [kept] = await queryRows<{ n: number }>(connection, `SELECT count(*) AS n FROM ${idTable}`);
            items = Number(kept?.n ?? 0);
          }
          const planPrefix = runLayout.idPlanPrefix(batchSize, idPlan);
          let plan = written.get(planPrefix);
          if (!plan) {
            plan = append
              ? await appendIdChunks(connection, files, batchSize, batchesPerChunk, scratch, idTable, idPlan)
              : {
                  totalBatches: await writeChunks(
                    connection,
                    files,
                    `SELECT business_id FROM ${idTable} ORDER BY rowid`,
                    items,
                    batchSize,
                    batchesPerChunk,
                    (chunk) => runLayout.idChunk(batchSize, chunk, idPlan),
                    (row) => row.business_id,
                  ),
                  added: [],
                };
            written.set(planPrefix, plan);
          }
          stages.push({
            stage: dataset,
            totalBatches: plan.totalBatches,
            batchesPerChunk,
            totalItems: items,
            ...(idPlan ? { idPlan, skippedFresh: uniqueIds - items } : {}),
          });
          if (plan.added.length) appended.push({ stage: dataset, batches: plan.added });
        }
        return {
          matchedRows: Number(counts?.matched ?? 0),
          unmatchedRows: Number(counts?.unmatched ?? 0),
          uniqueIds,
          stages,
          appended,
        };
      });
    },

    /**
     * Gathers the failed batches recorded for a run and moves their records aside (under
     * `_work/failures-retried/<retryId>/`), so the batches that fail again are the only ones recorded.
     */
    planRetry: async ({ run, retryId }: { run: RunLocation; retryId: string }): Promise<PendingBatches[]> => {
      const files = RunFiles.open(resolveStore, run);
      const byStage = new Map<StageName, BatchRef[]>();
      for (const key of await files.list(runLayout.failuresPrefix)) {
        const record = await files.getJson<{ stage: StageName; failures: BatchFailure[] }>(key);
        const refs = byStage.get(record.stage) ?? [];
        refs.push(...record.failures.map((f) => f.batch));
        byStage.set(record.stage, refs);
        await files.store.put(
          files.key(`_work/failures-retried/${retryId}/${key.slice(runLayout.failuresPrefix.length)}`),
          JSON.stringify(record),
        );
        await files.store.delete(files.key(key));
      }
      return [...byStage.entries()].map(([stage, batches]) => ({ stage, batches }));
    },

    /** Appends failed batches to the run's failure records; returns the key written. */
    recordFailures: async ({
      run,
      stage,
      sequence,
      generation,
      failures,
    }: {
      run: RunLocation;
      stage: StageName;
      sequence: number;
      generation: number;
      failures: BatchFailure[];
    }): Promise<string> => {
      const files = RunFiles.open(resolveStore, run);
      const key = runLayout.failures(stage, generation, sequence);
      await files.putJson(key, { stage, failures });
      return key;
    },

    /** Merges a dataset's batch results into its Parquet table, typed from the contract. */
    commitTable: async ({
      run,
      dataset,
    }: {
      run: RunLocation;
      dataset: EnrichDataset;
    }): Promise<TableSummary> => {
      const output = resolveStore(run.output);
      const ledger = joinKey(output.prefix, ledgerKey(dataset));
      const files = RunFiles.open(resolveStore, run);
      // Any rewrite of a table invalidates a previous commit of this run.
      await files.store.delete(files.key(runLayout.success));
      return duck(
        async (connection, scratch, reopen) => {
          const keys = await files.list(runLayout.resultsPrefix(dataset));
          // In files of ~4 MB: DuckDB's JSON reader needs less memory for them than for one large file.
          const parts = await gatherLineParts(
            files,
            keys,
            path.join(scratch, 'results'),
            RESULT_PART_BYTES,
            (gathered) => heartbeat({ dataset, gathered }),
          );
          const local = parts.length ? `[${parts.map(sqlString).join(', ')}]` : undefined;
          const columns = datasetColumns(dataset).slice(1);
          const struct = datasetRecordStruct(dataset);
          const source = local
            ? `read_json(${local}, format = 'newline_delimited', columns = {business_id: 'VARCHAR', data: ${sqlString(struct)}})`
            : `(SELECT NULL::VARCHAR AS business_id, NULL::${struct} AS data WHERE false)`;
          const projection = columns.map((c) => `data."${c.name}" AS "${c.name}"`).join(', ');
          heartbeat({ dataset, files: keys.length });
          // Streamed rather than held, in file order (sorting wide records costs more memory than a
          // warehouse gains), in row groups of 4,096 rows (the writer holds a group in memory: 100k
          // firmographics rows take +52 MB at 4,096, +90 MB at 16,384, at the same speed). Batches
          // never overlap, so an id comes once; should results ever overlap, the table is written again
          // with one row per id (checked on the written file's id column, which is cheap to read).
          await connection.run('SET preserve_insertion_order = false');
          const write = (dedupe: boolean) =>
            writeParquetTable(
              connection,
              files,
              dataset,
              `SELECT business_id${projection ? ', ' + projection : ''} FROM ${source} WHERE data IS NOT NULL
               ${dedupe ? 'QUALIFY row_number() OVER (PARTITION BY business_id) = 1' : ''}`,
              scratch,
              { rowGroupRows: 4_096 },
            );
          let table = await write(false);
          const [ids] = await queryRows<{ n: number; d: number }>(
            connection,
            `SELECT count(*) AS n, count(DISTINCT business_id) AS d FROM ${readLocalTable(scratch, dataset)}`,
          );
          if (Number(ids?.n ?? 0) !== Number(ids?.d ?? 0)) {
            logger.warn(
              { dataset, rows: ids?.n, ids: ids?.d },
              'overlapping batch results: writing one row per id',
            );
            table = await write(true);
          }
          // The freshness ledger: this run's ids replace their earlier rows, in one object written whole.
          const previous = path.join(scratch, 'ledger-before.parquet');
          const hasPrevious = await output.store.exists(ledger);
          if (hasPrevious) await output.store.downloadToFile(ledger, previous);
          const next = path.join(scratch, 'ledger.parquet');
          // Found = in the table just written; the results are read again for their ids only, with the
          // same columns as the write (naming only the id column made the scan of the parts 5 x slower
          // and +120 MB), by a new instance: the write's freed memory goes back with the old one
          // instead of adding to this.
          const written = readLocalTable(scratch, dataset);
          const fresh = await reopen();
          await fresh.run('SET preserve_insertion_order = false');
          await fresh.run(
            `COPY (
             WITH checked AS (
               SELECT business_id, business_id IN (SELECT business_id FROM ${written}) AS found
               FROM (SELECT DISTINCT business_id FROM ${source})
             )
             SELECT business_id, found, now()::TIMESTAMPTZ AS checked_at, ${sqlString(run.runId)} AS run_id FROM checked
             ${
               hasPrevious
                 ? `UNION ALL SELECT business_id, found, checked_at, run_id FROM read_parquet(${sqlString(previous)})
                    WHERE business_id NOT IN (SELECT business_id FROM checked)`
                 : ''
             }
             ORDER BY business_id
           ) TO ${sqlString(next)} (FORMAT parquet, COMPRESSION zstd)`,
          );
          await output.store.putFile(ledger, next);
          return table;
        },
        // One thread: the JSON reader's buffers are per thread, and a second one barely speeds this up
        // (100k firmographics: 1.0 s and +150 MB with one, 1.4 s and +200 MB with two).
        { threads: 1 },
      );
    },

    /** Writes the failures table, `manifest.json`, and finally `_SUCCESS`. */
    commitRun: async (input: {
      run: RunLocation;
      request: EnrichRunInput;
      retries?: string[];
      jobName: string;
      plan: PlanSummary;
      enrichPlan: EnrichPlanSummary;
      stages: StageResult[];
      datasetTables: TableSummary[];
      startedAt: string;
    }): Promise<RunSummary> => {
      const { run } = input;
      const files = RunFiles.open(resolveStore, run);
      const failuresTable = await duck(async (connection, scratch) => {
        const rows: unknown[] = [];
        {
          for (const key of await files.list(runLayout.failuresPrefix)) {
            const record = await files.getJson<{ stage: StageName; failures: BatchFailure[] }>(key);
            for (const failure of record.failures) {
              const items = await failedItems(
                files,
                record.stage,
                failure.batch,
                input.enrichPlan.stages.find((s) => s.stage === record.stage)?.idPlan,
              );
              rows.push({
                stage: record.stage,
                batch: describeBatch(failure.batch),
                error_type: failure.errorType,
                message: failure.message,
                attempts: failure.attempts,
                items,
              });
            }
          }
        }
        const jsonl = path.join(scratch, 'failures.jsonl');
        await writeFile(jsonl, toJsonLines(rows));
        const source = rows.length
          ? `read_json(${sqlString(jsonl)}, format = 'newline_delimited', columns = {stage: 'VARCHAR', batch: 'VARCHAR', error_type: 'VARCHAR', message: 'VARCHAR', attempts: 'INTEGER', items: 'VARCHAR[]'})`
          : `(SELECT NULL::VARCHAR AS stage, NULL::VARCHAR AS batch, NULL::VARCHAR AS error_type, NULL::VARCHAR AS message, NULL::INTEGER AS attempts, NULL::VARCHAR[] AS items WHERE false)`;
        return writeParquetTable(
          connection,
          files,
          'failures',
          `SELECT * FROM ${source} ORDER BY stage, batch`,
          scratch,
        );
      });
      const matches = await files.getJson<TableSummary>('_work/tables/matches.json');
      const rejects = await files.getJson<TableSummary>('_work/tables/rejects.json');
      const tables = [...input.datasetTables, matches, rejects, failuresTable];
      const finishedAt = new Date().toISOString();
      const failedBatches = failuresTable.rows;
      const unstartedBatches = input.stages.reduce((sum, s) => sum + (s.unstarted?.batches ?? 0), 0);
      const status: RunSummary['status'] =
        unstartedBatches > 0
          ? 'stopped_at_budget'
          : failedBatches > 0
            ? 'completed_with_failures'
            : 'completed';
      const manifest = {
        manifest_version: 1,
        run_id: run.runId,
        job_name: input.jobName,
        status,
        datasets: input.request.datasets,
        input: input.request.input.location,
        retries: input.retries ?? [],
        started_at: input.startedAt,
        finished_at: finishedAt,
        location: files.url,
        counts: {
          input_rows: input.plan.inputRows,
          rejected_rows: input.plan.rejectedRows,
          unique_match_keys: input.plan.idsProvided ? 0 : input.plan.uniqueKeys,
          matched_rows: input.enrichPlan.matchedRows,
          unmatched_rows: input.enrichPlan.unmatchedRows,
          unique_business_ids: input.enrichPlan.uniqueIds,
          failed_batches: failedBatches,
          unstarted_batches: unstartedBatches,
          calls: input.stages.reduce((sum, s) => sum + s.calls, 0),
        },
        ...(input.request.maxCalls !== undefined ? { max_calls: input.request.maxCalls } : {}),
        stages: input.stages.map((s) => ({
          stage: s.stage,
          batches: s.totalBatches,
          done_batches: s.doneBatches,
          failed_batches: s.failedBatches,
          unstarted_batches: s.unstarted?.batches ?? 0,
          skipped_fresh: input.enrichPlan.stages.find((p) => p.stage === s.stage)?.skippedFresh ?? 0,
          records: s.records,
          misses: s.misses,
          calls: s.calls,
          started_at: new Date(s.startedAt).toISOString(),
          finished_at: new Date(s.updatedAt).toISOString(),
          seconds: Math.round((s.updatedAt - s.startedAt) / 100) / 10,
        })),
        tables: tables.map((t) => ({ name: t.table, rows: t.rows, files: t.files, columns: t.columns })),
      };
      const summary: RunSummary = {
        runId: run.runId,
        request: input.request,
        ...(input.retries?.length ? { retries: input.retries } : {}),
        jobName: input.jobName,
        status,
        outputPrefix: files.url,
        manifestKey: runLayout.manifest,
        plan: input.plan,
        enrichPlan: input.enrichPlan,
        stages: input.stages,
        tables,
        failedBatches,
        startedAt: input.startedAt,
        finishedAt,
      };
      await files.putJson(runLayout.runSummary, summary);
      await files.putJson(runLayout.manifest, manifest);
      // The analyst's view of the same facts, next to the manifest.
      const rejectReasons = await duck((connection, scratch) =>
        rejectReasonsOf(connection, files, rejects, scratch),
      );
      await files.store.put(files.key(runLayout.report), renderRunReport(manifest, { rejectReasons }), {
        contentType: 'text/markdown; charset=utf-8',
      });
      // A run stopped at budget is incomplete: no `_SUCCESS` until a resume finishes it.
      if (status === 'stopped_at_budget') await files.store.delete(files.key(runLayout.success));
      else await files.putJson(runLayout.success, { run_id: run.runId, finished_at: finishedAt });
      logger.info({ runId: run.runId, status, failedBatches, unstartedBatches }, 'committed run');
      return summary;
    },
  };

  /** Adds plan files for ids of `ids` that the existing plan files of this batch size lack. */
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
      ? `SELECT unnest(flatten(json_transform(json, '[["VARCHAR"]]'))) AS business_id FROM read_json_objects([${local.map(sqlString).join(', ')}], format = 'unstructured')`
      : `SELECT NULL::VARCHAR AS business_id WHERE false`;
    await connection.run(`CREATE OR REPLACE TABLE known_ids AS ${known}`);
    const [old] = await queryRows<{ n: number }>(connection, 'SELECT count(*) AS n FROM known_ids');
    await connection.run(
      `CREATE OR REPLACE TABLE new_ids AS SELECT business_id FROM ${idTable} WHERE business_id NOT IN (SELECT business_id FROM known_ids) ORDER BY rowid`,
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
        'SELECT business_id FROM new_ids ORDER BY rowid',
        newCount,
        batchSize,
        batchesPerChunk,
        (chunk) => runLayout.idChunk(batchSize, firstChunk + chunk, idPlan),
        (row) => row.business_id,
      );
      for (let b = 0; b < batches; b += 1) {
        added.push({ chunk: firstChunk + Math.floor(b / batchesPerChunk), index: b % batchesPerChunk });
      }
    }
    return { totalBatches: oldBatches + added.length, added };
  }

  /** The ids (or match keys, as JSON) of a failed batch, for the failures table. */
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
    const { batchSize } = stageBatching(stage);
    return batchItems<string>(files, runLayout.idChunk(batchSize, ref.chunk, idPlan), ref);
  }
}

export type PipelineActivities = ReturnType<typeof createActivities>;
