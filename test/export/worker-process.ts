// A worker in a process of its own, for the test that kills one with SIGKILL mid-export: configured
// from the environment, running the workflow bundle the test built (WORKFLOW_BUNDLE), and saying
// "ready" on stdout once it polls.
import { NativeConnection } from '@temporalio/worker';
import { appendFileSync } from 'node:fs';
import { DataServiceClient } from '../../client/index.js';
import { loadConfig } from '../../config/index.js';
import { silentLogger } from '../../lib/logger.js';
import { createEnrichflowWorkers } from '../../workers/worker.js';

const codePath = process.env.WORKFLOW_BUNDLE;
if (!codePath) throw new Error('WORKFLOW_BUNDLE is not set');
const config = loadConfig();
const connection = await NativeConnection.connect({ address: config.temporal.address });
const calls = new DataServiceClient({
  baseUrl: config.dataService.baseUrl,
  apiKey: config.dataService.apiKey ?? '',
  headersTimeoutMs: config.dataService.timeoutMs,
  bodyTimeoutMs: config.dataService.timeoutMs,
});
const workers = await createEnrichflowWorkers({
  config,
  connection,
  calls,
  logger: silentLogger,
  workflowBundle: { codePath },
});
// For the benchmark: where the worker's memory goes (V8 heap, buffers, the rest native), once a second.
const memoryLog = process.env.WORKER_MEMORY_LOG;
if (memoryLog) {
  const started = Date.now();
  const mb = (n: number) => Math.round(n / 1048576);
  setInterval(() => {
    const m = process.memoryUsage();
    appendFileSync(
      memoryLog,
      `${JSON.stringify({ s: Math.round((Date.now() - started) / 1000), rss: mb(m.rss), heapTotal: mb(m.heapTotal), heapUsed: mb(m.heapUsed), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers) })}\n`,
    );
  }, 1000).unref();
}
const running = workers.run();
process.stdout.write('ready\n');
await running;
