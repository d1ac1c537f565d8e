// The worker process's composition root: builds the Data Service client, the object-store resolver
// and the activities from the configuration, and runs two Temporal workers — one for workflows and
// table work, one for calls to the service on the API task queue, whose task-queue rate limit is the
// one rate budget shared by every worker of the deployment.
import {
  Worker,
  type NativeConnection,
  type WorkerOptions,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EnrichflowConfig } from '../config/index.js';
import type { Logger } from '../lib/logger.js';
import { openObjectStore } from '../storage/open-store.js';
import type { ObjectStore } from '../storage/object-store.js';
import type { S3ConnectionOptions } from '../storage/s3-store.js';
import { createActivities } from '../activities/index.js';
import { createExportActivities, type ExportCalls } from '../activities/export.js';
import { createEventActivities, type EventCalls } from '../activities/events.js';
import type { EnrichmentCalls, ProspectEnrichmentCalls } from '../activities/client-port.js';
import type { StoreResolver } from '../storage/run-files.js';
import { countRowsWritten } from '../activities/metrics.js';
import { MemoryGate } from '../activities/attempt.js';
import { HEARTBEAT_EVERY_MS } from '../pipeline/attempts.js';
import type { Tracing } from './tracing.js';

/** The workflows entry, as TypeScript source (tests, tsx) or compiled JavaScript (dist). */
export function workflowsPath(): string {
  for (const name of ['../workflows/index.ts', '../workflows/index.js']) {
    const candidate = fileURLToPath(new URL(name, import.meta.url));
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('cannot find workflows/index (run npm run build)');
}

/**
 * Where the worker gets its workflow code: the bundle `npm run build` wrote next to the compiled code
 * (no bundler at start: faster, and ~100 MB less memory per worker), else bundled from the sources.
 * A traced worker takes the bundle built with the tracing interceptors (workflow-bundle-traced.js).
 */
export function workflowSource(
  traced = false,
): { workflowBundle: { codePath: string } } | { workflowsPath: string } {
  const name = traced ? '../workflow-bundle-traced.js' : '../workflow-bundle.js';
  const prebuilt = fileURLToPath(new URL(name, import.meta.url));
  if (import.meta.url.endsWith('.js') && existsSync(prebuilt))
    return { workflowBundle: { codePath: prebuilt } };
  return { workflowsPath: workflowsPath() };
}

export function storeResolverFor(config: EnrichflowConfig): StoreResolver {
  const s3: S3ConnectionOptions = {
    region: config.s3.region,
    forcePathStyle: config.s3.forcePathStyle,
    ...(config.s3.endpoint ? { endpoint: config.s3.endpoint } : {}),
    ...(config.s3.accessKeyId && config.s3.secretAccessKey
      ? { accessKeyId: config.s3.accessKeyId, secretAccessKey: config.s3.secretAccessKey }
      : {}),
  };
  // One store (one S3 client and connection pool) per bucket or folder, and one parse per location:
  // every activity of a run resolves the same output location.
  const stores = new Map<string, ObjectStore>();
  const opened = new Map<string, { store: ObjectStore; prefix: string }>();
  return (location) => {
    const known = opened.get(location);
    if (known) return known;
    const fresh = openObjectStore(location, { s3 });
    const store = stores.get(fresh.store.url) ?? fresh.store;
    stores.set(store.url, store);
    const result = { store, prefix: fresh.prefix };
    if (opened.size > 1_000) opened.clear();
    opened.set(location, result);
    return result;
  };
}

/**
 * Heartbeats go to the server at the discipline's cadence instead of the SDK's default (80 % of the
 * heartbeat timeout): a cancellation arrives in a heartbeat's answer, so this is how soon it is seen.
 */
const HEARTBEAT_THROTTLE = {
  maxHeartbeatThrottleInterval: HEARTBEAT_EVERY_MS,
  defaultHeartbeatThrottleInterval: HEARTBEAT_EVERY_MS,
};

/**
 * The API task queue's dispatch rate for a budget of `perMinute` calls. The server keeps the rate as a
 * token bucket that also lets about one second's worth through at once, so a minute can see 61 seconds'
 * worth; dispatching at a 61st of the budget per second keeps every sliding minute within the budget
 * (a service that counts per minute answers nothing 429).
 */
export function dispatchRatePerSecond(perMinute: number): number {
  return perMinute / 61;
}

/** Activity slots of the main task queue (table work and bookkeeping). */
const MAIN_QUEUE_SLOTS = 8;

export interface EnrichflowWorkerOptions {
  config: EnrichflowConfig;
  connection: NativeConnection;
  calls: EnrichmentCalls & ProspectEnrichmentCalls;
  logger: Logger;
  /** A pre-built bundle (tests build it once); otherwise workflows are bundled at start. */
  workflowBundle?: WorkflowBundleOption;
  resolveStore?: StoreResolver;
  /** Traces workflows, activities and object-store transfers (workers/tracing.ts); a given
   * `workflowBundle` must then have been built with its workflow interceptors. */
  tracing?: Tracing;
}

export interface EnrichflowWorkers {
  /** Runs both workers until shutdown; rejects if either fails. */
  run(): Promise<void>;
  /** Starts a graceful shutdown: no new tasks, running activities finish or are cancelled. */
  shutdown(): void;
}

/** The resolver's stores with a span per transfer when tracing (loaded only then). */
async function tracedStores(resolve: StoreResolver, tracing: Tracing | undefined): Promise<StoreResolver> {
  if (!tracing) return resolve;
  const { traceStores } = await import('./tracing.js');
  return traceStores(resolve, tracing.tracer);
}

/**
 * Worker options of a traced worker: activity interceptors, the sink that exports workflow spans, and
 * (when workflows are bundled at start rather than prebuilt) the workflow interceptors to bundle.
 */
async function tracingOptions(
  tracing: Tracing | undefined,
  bundleInterceptors: boolean,
): Promise<Pick<WorkerOptions, 'interceptors' | 'sinks'>> {
  if (!tracing) return {};
  const { activityInterceptors, workflowSpanSinks, WORKFLOW_INTERCEPTORS_MODULE } =
    await import('./tracing.js');
  return {
    interceptors: {
      ...activityInterceptors(),
      ...(bundleInterceptors ? { workflowModules: [WORKFLOW_INTERCEPTORS_MODULE] } : {}),
    },
    sinks: workflowSpanSinks(tracing),
  };
}

export async function createEnrichflowWorkers(options: EnrichflowWorkerOptions): Promise<EnrichflowWorkers> {
  const { config, connection, logger, tracing } = options;
  const resolveStore = await tracedStores(options.resolveStore ?? storeResolverFor(config), tracing);
  // DuckDB activities (planning, commits) pass one at a time: tens of MB each for 100,000 rows, and one
  // at a time keeps a worker's peak under 400 MB (bench/results/enrich.md). The gate, not the task
  // slots, is the limit, so a hung one that is cancelled or stalls gives its permit back at once, and
  // one that waits 15 s without progress (a store that does not answer) lends it to the other runs.
  const gate = new MemoryGate(1);
  const activities = createActivities({
    gate,
    calls: options.calls,
    resolveStore,
    logger,
    workDir: config.workDir,
  });
  const { callBatch, ...tableActivities } = activities;
  // Rows written per table, for the metrics endpoint (a no-op when metrics are off).
  tableActivities.commitRun = countRowsWritten(tableActivities.commitRun);
  // Search exports: their calls to the service go on the API queue too, under the same rate budget.
  const { probeCount, measureStats, fetchPage, fetchCursorPage, fetchPosts, ...exportTableActivities } =
    createExportActivities({
      calls: options.calls as Partial<ExportCalls>,
      resolveStore,
      logger,
      gate,
      ...(config.workDir ? { workDir: config.workDir } : {}),
    });
  // Events: window commits and pull planning/commit here; pull calls on the API queue (same budget).
  const { fetchEventsBatch, ...eventTableActivities } = createEventActivities({
    resolveStore,
    logger,
    gate,
    ...(typeof (options.calls as Partial<EventCalls>).fetchEvents === 'function'
      ? { calls: options.calls as unknown as EventCalls }
      : {}),
    ...(config.workDir ? { workDir: config.workDir } : {}),
  });
  const workflows = options.workflowBundle
    ? { workflowBundle: options.workflowBundle }
    : workflowSource(tracing !== undefined);
  const main = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    ...workflows,
    ...(await tracingOptions(tracing, 'workflowsPath' in workflows)),
    activities: { ...tableActivities, ...exportTableActivities, ...eventTableActivities },
    // Several slots: one run's bookkeeping, or a hung activity waiting to be abandoned, never holds up
    // another run. Memory is bounded by the gate above, not by the slots.
    maxConcurrentActivityTaskExecutions: MAIN_QUEUE_SLOTS,
    ...HEARTBEAT_THROTTLE,
  });
  const api = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.apiTaskQueue,
    ...(await tracingOptions(tracing, false)),
    activities: {
      callBatch,
      probeCount,
      measureStats,
      fetchPage,
      fetchCursorPage,
      fetchPosts,
      fetchEventsBatch,
    },
    maxConcurrentActivityTaskExecutions: config.worker.maxConcurrentActivities,
    ...HEARTBEAT_THROTTLE,
    // Enforced by the server for the whole task queue: the deployment's one rate budget.
    maxTaskQueueActivitiesPerSecond: dispatchRatePerSecond(config.dataService.ratePerMinute),
  });
  logger.info(
    {
      taskQueue: config.temporal.taskQueue,
      apiTaskQueue: config.temporal.apiTaskQueue,
      callsPerMinute: config.dataService.ratePerMinute,
    },
    'workers created',
  );
  return {
    run: async () => {
      await Promise.all([main.run(), api.run()]);
    },
    shutdown: () => {
      main.shutdown();
      api.shutdown();
    },
  };
}
