// The in-process services that join the local stack: the sandbox Data Service and a worker. Kept
// behind one seam so `dev` and `demo` start them the same way, pointed at the same stack.
import path from 'node:path';
import { loadConfig, type EnrichflowConfig } from '../config/index.js';
import type { Logger } from '../lib/logger.js';
import { DEV_API_KEY } from '../sandbox/http/access.js';
import { DEFAULT_SANDBOX_PORT, startSandbox, type RunningSandbox } from '../sandbox/serve.js';
import type { LocalStack } from '../stack/local-stack.js';
import { startWorker, type RunningWorker } from '../workers/main.js';
import { stopInOrder, type StopStep } from './shutdown.js';

export interface AddOnOptions {
  stack: LocalStack;
  dataDir: string;
  freePorts: boolean;
  sandbox: boolean;
  worker: boolean;
  logger: Logger;
  /** Sandbox rate limit, requests per minute per key; default 200 (the service's documented limit). */
  sandboxRateLimit?: number;
}

export interface RunningAddOns {
  /** Environment that points enrichflow at the stack and the sandbox. */
  env: Record<string, string>;
  /** The configuration a command in this process should use. */
  config: EnrichflowConfig;
  describe: string[];
  /** How to stop them, in order (worker, then sandbox), each bounded (cli/shutdown.ts). */
  stopSteps: StopStep[];
  stop(): Promise<void>;
}

/** The worker's drain: running activities finish or are cancelled within this, or the shutdown goes on. */
const WORKER_DRAIN_MS = 4_000;

/**
 * Stops a worker whether or not its shutdown already began: Temporal's runtime starts one itself on
 * SIGINT/SIGTERM, after which a second `shutdown()` throws IllegalStateError; then the drain under way
 * is waited for instead.
 */
async function stopWorker(worker: RunningWorker): Promise<void> {
  try {
    await worker.stop();
  } catch (error) {
    if ((error as Error).name !== 'IllegalStateError') throw error;
    await worker.done;
  }
}

export const localAddOns = {
  async start(options: AddOnOptions): Promise<RunningAddOns> {
    const { logger } = options;
    const env: Record<string, string> = { ...options.stack.env };
    const describe: string[] = [];
    let sandbox: RunningSandbox | undefined;
    let worker: RunningWorker | undefined;
    if (options.sandbox) {
      sandbox = await startSandbox({
        dataDir: path.join(options.dataDir, 'sandbox'),
        port: options.freePorts ? 0 : DEFAULT_SANDBOX_PORT,
        rateLimitPerMinute: options.sandboxRateLimit ?? 200,
        logger: logger.child({ component: 'sandbox' }),
      });
      env.ENRICHFLOW_API_BASE_URL = sandbox.url;
      // The sandbox's development key, unless the user brought their own (for a real service).
      env.ENRICHFLOW_API_KEY = process.env.ENRICHFLOW_API_KEY ?? DEV_API_KEY;
      describe.push(`  Sandbox:      ${sandbox.url} (Data Service; development key "${DEV_API_KEY}")`);
    }
    const config = loadConfig({ env: { ...process.env, ...env } });
    try {
      if (options.worker) {
        worker = await startWorker(config, logger.child({ component: 'worker' }));
        describe.push(
          `  Worker:       task queues ${config.temporal.taskQueue} and ${config.temporal.apiTaskQueue} (${config.dataService.ratePerMinute} calls/min)`,
        );
      }
    } catch (error) {
      await sandbox?.close();
      throw error;
    }
    const stopSteps: StopStep[] = [
      ...(worker ? [{ name: 'worker', stop: () => stopWorker(worker), withinMs: WORKER_DRAIN_MS }] : []),
      ...(sandbox ? [{ name: 'sandbox', stop: () => sandbox.close(), withinMs: 1_000 }] : []),
    ];
    return {
      env,
      config,
      describe,
      stopSteps,
      stop: () => stopInOrder(stopSteps, logger),
    };
  },
};
