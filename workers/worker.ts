// The worker process's composition root: builds the Data Service client, the object-store resolver
// and the activities from the configuration, and runs two Temporal workers — one for workflows and
// table work, one for calls to the service on the API task queue, whose task-queue rate limit is the
// one rate budget shared by every worker of the deployment.
import { Worker, type NativeConnection, type WorkflowBundleOption } from '@temporalio/worker';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EnrichflowConfig } from '../config/index.js';
import type { Logger } from '../lib/logger.js';
import { openObjectStore } from '../storage/open-store.js';
import type { S3ConnectionOptions } from '../storage/s3-store.js';
import { createActivities } from '../activities/index.js';
import type { EnrichmentCalls } from '../activities/client-port.js';
import type { StoreResolver } from '../activities/run-files.js';

/** The workflows entry, as TypeScript source (tests, tsx) or compiled JavaScript (dist). */
export function workflowsPath(): string {
  for (const name of ['../workflows/index.ts', '../workflows/index.js']) {
    const candidate = fileURLToPath(new URL(name, import.meta.url));
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('cannot find workflows/index (run npm run build)');
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
  const stores = new Map<string, ReturnType<typeof openObjectStore>['store']>();
  return (location) => {
    const opened = openObjectStore(location, { s3 });
    // One store (and one S3 client with its connection pool) per bucket or folder.
    const existing = stores.get(opened.store.url);
    if (existing) return { store: existing, prefix: opened.prefix };
    stores.set(opened.store.url, opened.store);
    return { store: opened.store, prefix: opened.prefix };
  };
}

export interface EnrichflowWorkerOptions {
  config: EnrichflowConfig;
  connection: NativeConnection;
  calls: EnrichmentCalls;
  logger: Logger;
  /** A pre-built bundle (tests build it once); otherwise workflows are bundled at start. */
  workflowBundle?: WorkflowBundleOption;
  resolveStore?: StoreResolver;
}

export interface EnrichflowWorkers {
  /** Runs both workers until shutdown; rejects if either fails. */
  run(): Promise<void>;
  /** Starts a graceful shutdown: no new tasks, running activities finish or are cancelled. */
  shutdown(): void;
}

export async function createEnrichflowWorkers(options: EnrichflowWorkerOptions): Promise<EnrichflowWorkers> {
  const { config, connection, logger } = options;
  const activities = createActivities({
    calls: options.calls,
    resolveStore: options.resolveStore ?? storeResolverFor(config),
    logger,
    workDir: config.workDir,
  });
  const { callBatch, ...tableActivities } = activities;
  const main = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: workflowsPath() }),
    activities: tableActivities,
    // Planning and committing are DuckDB-heavy; two at a time per process keeps memory predictable.
    maxConcurrentActivityTaskExecutions: 2,
  });
  const api = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.apiTaskQueue,
    activities: { callBatch },
    maxConcurrentActivityTaskExecutions: config.worker.maxConcurrentActivities,
    // Enforced by the server for the whole task queue: the deployment's one rate budget.
    maxTaskQueueActivitiesPerSecond: config.dataService.ratePerMinute / 60,
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
