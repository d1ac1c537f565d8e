// Starting a worker from the configuration: the entry of `enrichflow worker`, and of the worker that
// `enrichflow dev` and the demo run in-process. Shuts down gracefully: Temporal's runtime turns
// SIGINT/SIGTERM into a worker shutdown, running activities finish or are cancelled, then it returns.
import { ConfigError, type EnrichflowConfig } from '../config/index.js';
import { DataServiceClient } from '../client/index.js';
import type { Logger } from '../lib/logger.js';
import { instrumentCalls } from '../activities/metrics.js';
import { installTemporalRuntime } from './runtime.js';
import { connectWorkerConnection } from './temporal-connection.js';
import { createEnrichflowWorkers } from './worker.js';
import { tracingRequested } from './tracing-config.js';

export interface RunningWorker {
  /** Resolves when the workers have shut down (after `stop()` or a signal); rejects if one failed. */
  done: Promise<void>;
  stop(): Promise<void>;
}

export async function startWorker(config: EnrichflowConfig, logger: Logger): Promise<RunningWorker> {
  const apiKey = config.dataService.apiKey;
  if (!apiKey) throw new ConfigError(['ENRICHFLOW_API_KEY: required by the worker but not set']);
  installTemporalRuntime(logger, { metricsAddress: config.metrics.address });
  const connection = await connectWorkerConnection(config.temporal);
  const client = new DataServiceClient({
    baseUrl: config.dataService.baseUrl,
    apiKey,
    ...(config.dataService.tenant ? { tenant: config.dataService.tenant } : {}),
    headersTimeoutMs: config.dataService.timeoutMs,
    bodyTimeoutMs: config.dataService.timeoutMs,
    connections: Math.max(16, config.worker.maxConcurrentActivities),
    logger: logger.child({ component: 'client' }),
  });
  // Traced only when an OTLP endpoint is set: otherwise no OpenTelemetry code is even loaded.
  const tracing = tracingRequested() ? await import('./tracing.js') : undefined;
  const traces = await tracing?.startTracing('enrichflow-worker');
  // Calls are counted and timed for the metrics endpoint (a no-op when metrics are off), and traced.
  const calls = instrumentCalls(client);
  const workers = await createEnrichflowWorkers({
    config,
    connection,
    calls: tracing && traces ? tracing.traceCalls(calls, traces.tracer) : calls,
    logger,
    ...(traces ? { tracing: traces } : {}),
  });
  const done = workers.run().finally(async () => {
    await client.close();
    await connection.close();
    await traces?.flush();
  });
  logger.info(
    { temporal: config.temporal.address, dataService: config.dataService.baseUrl, tracing: !!traces },
    'worker running',
  );
  return {
    done,
    stop: async () => {
      workers.shutdown();
      await done;
    },
  };
}
