// The events activities: committing a window of webhook deliveries into its Parquet table and manifest
// (merging the inbox batches the receiver wrote, storing each event once), and the three steps of an
// events pull run (plan id batches, fetch one batch on the API task queue, commit table + manifest).
// Rows stay in the object store; workflows get keys and counts.
import path from 'node:path';
import pLimit from 'p-limit';
import type { BusinessEventType } from '../contract/enums.js';
import { readBusinessIds } from '../storage/business-ids.js';
import { SINK_ROOT, sinkLayout, windowLabel } from '../pipeline/sink-layout.js';
import { describeBatch } from '../pipeline/batch-queue.js';
import type {
  EventWindowCommit,
  EventsPullPlan,
  EventsPullRequest,
  EventsPullSummary,
} from '../pipeline/events-types.js';
import type { BatchRef, RunLocation, TableSummary } from '../pipeline/run-types.js';
import { pacedCall } from './api-pacing.js';
import { requestsSent, cancellationSignal, disciplined, heartbeat, toActivityFailure } from './attempt.js';
import { queryRows, sqlString, withDuckDb } from '../storage/duckdb.js';
import { writeParquetTable } from './parquet-tables.js';
import { downloadAll, gatherLines, RunFiles } from '../storage/run-files.js';
import { BATCHES_PER_CHUNK, runLayout } from '../pipeline/run-layout.js';

import {
  type EventActivityDeps,
  EventCallsMissingError,
  SINK_COLUMNS,
  PULL_COLUMNS,
  EVENTS_BATCH_SIZE,
  BUSINESS_ID,
  columnsSql,
  emptySql,
  stopIfAbandoned,
  toJsonLines,
  pullResultsPrefix,
} from './events-context.js';
export {
  EVENTS_BATCH_SIZE,
  EventCallsMissingError,
  pullResultsPrefix,
  type EventActivityDeps,
  type EventCalls,
} from './events-context.js';

export function createEventActivities(deps: EventActivityDeps) {
  return disciplined(
    eventActivitiesOver(deps),
    {
      storeCarriedBatch: 'bookkeeping',
      commitEventWindow: 'eventWindow',
      planEventsPull: 'tablePlanning',
      fetchEventsBatch: 'pageFetch',
      commitEventsPull: 'tableCommit',
    },
    ['commitEventWindow', 'planEventsPull', 'commitEventsPull'],
    deps.gate,
  );
}

function eventActivitiesOver(deps: EventActivityDeps) {
  const { resolveStore, logger } = deps;
  const duck = <T>(fn: Parameters<typeof withDuckDb<T>>[1]) =>
    withDuckDb({ workDir: deps.workDir, signal: cancellationSignal() }, fn);

  return {
    /**
     * Writes deliveries the receiver carried in its signals (JSON lines, gathered by the window) as one
     * inbox batch. The name is fixed by the window, so a retry or a replay overwrites the same object.
     * Run as a local activity: its input stays out of the history (the signals hold those rows already).
     */
    storeCarriedBatch: async (
      input: { output: string; tenant: string | null; windowStart: number; batchId: string },
      lines: Uint8Array,
    ): Promise<{ key: string; bytes: number }> => {
      const { store, prefix } = resolveStore(input.output);
      const files = new RunFiles(store, prefix, SINK_ROOT, { signal: cancellationSignal() });
      const key = sinkLayout.inboxBatch(input.tenant, input.windowStart, input.batchId);
      await store.put(files.key(key), lines, { contentType: 'application/x-ndjson' });
      return { key, bytes: lines.byteLength };
    },

    /**
     * Merges a window's inbox batches into its table (one row per event id: the earliest delivery wins),
     * writes its manifest (and `_SUCCESS` once the window is complete), then deletes the merged batches.
     * Safe to retry at any point: batches are deleted only after the table that holds them is written.
     */
    commitEventWindow: async (input: {
      output: string;
      tenant: string | null;
      windowStart: number;
      windowMs: number;
      complete: boolean;
    }): Promise<EventWindowCommit> => {
      return (async () => {
        const { store, prefix } = resolveStore(input.output);
        const files = new RunFiles(store, prefix, SINK_ROOT, { signal: cancellationSignal() });
        // The window's table is written under its tenant's folder, one folder level as writeParquetTable takes.
        const tenantRoot = sinkLayout.tenantRoot(input.tenant);
        const tenantFiles = new RunFiles(store, prefix, `${SINK_ROOT}/${tenantRoot}`, {
          signal: cancellationSignal(),
        });
        const table = sinkLayout.windowTable(input.windowStart);
        const inbox = await files.list(sinkLayout.inboxPrefix(input.tenant, input.windowStart));
        const storedParts = (await tenantFiles.list(`${table}/`)).filter((key) => key.endsWith('.parquet'));
        // Read before the table is rewritten: writing it clears the window's folder, manifest included.
        const manifestKey = sinkLayout.windowManifest(input.tenant, input.windowStart);
        const before = (await files.store.exists(files.key(manifestKey)))
          ? await files.getJson<{
              deliveries_merged?: number;
              duplicates_dropped?: number;
              commits?: number;
            }>(manifestKey)
          : {};
        const { written, merged, stored } = await duck(async (connection, scratch) => {
          const lines = await gatherLines(files, inbox, path.join(scratch, 'inbox.jsonl'), (gathered) =>
            heartbeat({ gathered }),
          );
          const parts = await downloadAll(tenantFiles, storedParts, path.join(scratch, 'stored'));
          const incoming = lines
            ? `read_json(${sqlString(lines)}, format = 'newline_delimited', columns = ${columnsSql(SINK_COLUMNS)})`
            : emptySql(SINK_COLUMNS);
          const previous = parts.length
            ? `read_parquet([${parts.map(sqlString).join(', ')}])`
            : emptySql(SINK_COLUMNS);
          await connection.run(`CREATE TABLE incoming AS SELECT * FROM ${incoming}`);
          await connection.run(`CREATE TABLE stored AS SELECT * FROM ${previous}`);
          const [counts] = await queryRows<{ merged: number; stored: number }>(
            connection,
            'SELECT (SELECT count(*) FROM incoming) AS merged, (SELECT count(*) FROM stored) AS stored',
          );
          stopIfAbandoned();
          const written = await writeParquetTable(
            connection,
            tenantFiles,
            table,
            `SELECT * FROM (SELECT * FROM stored UNION ALL BY NAME SELECT * FROM incoming)
             QUALIFY row_number() OVER (PARTITION BY event_id ORDER BY received_at, partner_id, enrollment_key) = 1
             ORDER BY event_time, event_id`,
            scratch,
          );
          return { written, merged: Number(counts?.merged ?? 0), stored: Number(counts?.stored ?? 0) };
        });
        // Keys in the manifest and the result are relative to the sink root, like the manifest's own.
        const summary: TableSummary = {
          ...written,
          table: `${tenantRoot}/${table}`,
          files: written.files.map((file) => ({ ...file, key: `${tenantRoot}/${file.key}` })),
        };
        const duplicates = stored + merged - summary.rows;
        const committedAt = new Date().toISOString();
        await files.putJson(manifestKey, {
          manifest_version: 1,
          kind: 'events_window',
          tenant_id: input.tenant,
          window: windowLabel(input.windowStart),
          window_start: new Date(input.windowStart).toISOString(),
          window_end: new Date(input.windowStart + input.windowMs).toISOString(),
          complete: input.complete,
          committed_at: committedAt,
          commits: (before.commits ?? 0) + 1,
          rows: summary.rows,
          deliveries_merged: (before.deliveries_merged ?? 0) + merged,
          duplicates_dropped: (before.duplicates_dropped ?? 0) + duplicates,
          location: `${files.url}${sinkLayout.windowFolder(input.tenant, input.windowStart)}`,
          files: summary.files,
          columns: summary.columns,
        });
        if (input.complete) {
          await files.putJson(sinkLayout.windowSuccess(input.tenant, input.windowStart), {
            window: windowLabel(input.windowStart),
            committed_at: committedAt,
          });
        }
        // Only an attempt Temporal still counts on removes merged batches.
        stopIfAbandoned();
        const limit = pLimit(16);
        await Promise.all(inbox.map((key) => limit(() => files.store.delete(files.key(key)))));
        logger.info(
          {
            window: windowLabel(input.windowStart),
            tenant: input.tenant,
            rows: summary.rows,
            merged,
            duplicates,
          },
          'committed events window',
        );
        return {
          rows: summary.rows,
          merged,
          duplicates,
          complete: input.complete,
          table: summary,
          manifestKey,
          committedAt,
        };
      })();
    },

    /** Gathers the pull's business ids (inline or from Parquet) and writes them as plan files of 40-id batches. */
    planEventsPull: async (input: {
      run: RunLocation;
      businessIds?: string[];
      idsLocation?: string;
    }): Promise<EventsPullPlan> => {
      const files = RunFiles.open(resolveStore, input.run, { signal: cancellationSignal() });
      const location = input.idsLocation;
      const raw = location
        ? await readBusinessIds(resolveStore, location, { workDir: deps.workDir })
        : (input.businessIds ?? []);
      const unique = [...new Set(raw.map((id) => id.trim().toLowerCase()))];
      const ids = unique.filter((id) => BUSINESS_ID.test(id)).sort();
      const perChunk = EVENTS_BATCH_SIZE * BATCHES_PER_CHUNK;
      const limit = pLimit(8);
      const writes: Promise<void>[] = [];
      for (let offset = 0, chunk = 0; offset < ids.length; offset += perChunk, chunk += 1) {
        const slice = ids.slice(offset, offset + perChunk);
        const batches: string[][] = [];
        for (let i = 0; i < slice.length; i += EVENTS_BATCH_SIZE)
          batches.push(slice.slice(i, i + EVENTS_BATCH_SIZE));
        writes.push(limit(() => files.putJson(runLayout.idChunk(EVENTS_BATCH_SIZE, chunk), batches)));
      }
      await Promise.all(writes);
      const plan: EventsPullPlan = {
        uniqueIds: ids.length,
        invalidIds: unique.length - ids.length,
        totalBatches: Math.ceil(ids.length / EVENTS_BATCH_SIZE),
        batchesPerChunk: BATCHES_PER_CHUNK,
      };
      logger.info({ runId: input.run.runId, ...plan }, 'planned events pull');
      return plan;
    },

    /**
     * One `POST /v1/businesses/events` call for one batch of ≤ 40 ids; its events go to the batch's
     * result file. A batch whose result file exists (an earlier attempt of this run) is not fetched again.
     */
    fetchEventsBatch: async (input: {
      run: RunLocation;
      batch: BatchRef;
      eventTypes: BusinessEventType[];
      timestampFrom: string | null;
      timestampTo: string | null;
    }): Promise<{ events: number; calls: number }> => {
      const files = RunFiles.open(resolveStore, input.run, { signal: cancellationSignal() });
      const resultKey = `${pullResultsPrefix(input.eventTypes, input.timestampFrom, input.timestampTo)}${describeBatch(input.batch)}.jsonl`;
      const existing = await files.store.head(files.key(resultKey));
      if (existing) {
        const text = (await files.store.getBytes(files.key(resultKey))).toString('utf8');
        return { events: text.split('\n').filter(Boolean).length, calls: 0 };
      }
      const chunk = await files.getJson<string[][]>(runLayout.idChunk(EVENTS_BATCH_SIZE, input.batch.chunk));
      const ids = chunk[input.batch.index];
      if (!ids) throw new Error(`events pull: batch ${describeBatch(input.batch)} is not in its plan file`);
      if (!deps.calls) throw new EventCallsMissingError('this worker has no Data Service client for events');
      heartbeat();
      let response;
      try {
        const calls = deps.calls;
        response = await pacedCall('events', (options) =>
          calls.fetchEvents(
            {
              business_ids: ids,
              event_types: input.eventTypes,
              ...(input.timestampFrom ? { timestamp_from: input.timestampFrom } : {}),
              ...(input.timestampTo ? { timestamp_to: input.timestampTo } : {}),
            },
            options,
          ),
        );
      } catch (error) {
        throw toActivityFailure(error);
      }
      const rows = response.body.data.map((event) => ({
        event_id: event.event_id,
        event_name: event.event_name,
        event_time: event.event_time,
        business_id: event.business_id,
        data: event.data,
      }));
      await files.store.put(files.key(resultKey), toJsonLines(rows), { contentType: 'application/x-ndjson' });
      return { events: rows.length, calls: requestsSent() };
    },

    /** Writes the pull's `events` table (each event id once), `manifest.json`, then `_SUCCESS`. */
    commitEventsPull: async (input: {
      run: RunLocation;
      request: EventsPullRequest;
      plan: EventsPullPlan;
      timestampFrom: string | null;
      timestampTo: string | null;
      calls: number;
      startedAt: string;
    }): Promise<EventsPullSummary> => {
      const { run } = input;
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      await files.store.delete(files.key(runLayout.success));
      const resultKeys = await files.list(
        pullResultsPrefix(input.request.eventTypes, input.timestampFrom, input.timestampTo),
      );
      const table: TableSummary = await duck(async (connection, scratch) => {
        const local = await gatherLines(files, resultKeys, path.join(scratch, 'results.jsonl'), (gathered) =>
          heartbeat({ gathered }),
        );
        // An empty file (no batch found any event) reads as no rows.
        const source = local
          ? `read_json(${sqlString(local)}, format = 'newline_delimited', columns = ${columnsSql(PULL_COLUMNS)})`
          : emptySql(PULL_COLUMNS);
        heartbeat({ files: resultKeys.length });
        return writeParquetTable(
          connection,
          files,
          'events',
          `SELECT * FROM ${source} QUALIFY row_number() OVER (PARTITION BY event_id ORDER BY event_time) = 1
           ORDER BY business_id, event_time, event_id`,
          scratch,
        );
      });
      const finishedAt = new Date().toISOString();
      const summary: EventsPullSummary = {
        runId: run.runId,
        status: 'completed',
        request: input.request,
        outputPrefix: files.url,
        manifestKey: runLayout.manifest,
        plan: input.plan,
        timestampFrom: input.timestampFrom,
        timestampTo: input.timestampTo,
        events: table.rows,
        calls: input.calls,
        table,
        startedAt: input.startedAt,
        finishedAt,
      };
      await files.putJson(runLayout.runSummary, summary);
      await files.putJson(runLayout.manifest, {
        manifest_version: 1,
        kind: 'events_pull',
        run_id: run.runId,
        job_name: input.request.jobName,
        status: 'completed',
        event_types: input.request.eventTypes,
        timestamp_from: input.timestampFrom,
        timestamp_to: input.timestampTo,
        ids_source: input.request.idsLocation ?? 'inline',
        started_at: input.startedAt,
        finished_at: finishedAt,
        location: files.url,
        counts: {
          business_ids: input.plan.uniqueIds,
          invalid_ids: input.plan.invalidIds,
          batches: input.plan.totalBatches,
          calls: input.calls,
          events: table.rows,
        },
        tables: [{ name: table.table, rows: table.rows, files: table.files, columns: table.columns }],
      });
      await files.putJson(runLayout.success, { run_id: run.runId, finished_at: finishedAt });
      logger.info({ runId: run.runId, events: table.rows }, 'committed events pull');
      return summary;
    },
  };
}

export type EventActivities = ReturnType<typeof createEventActivities>;
