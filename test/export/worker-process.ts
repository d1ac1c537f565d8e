// A worker in a process of its own, for the test that kills one with SIGKILL mid-export: configured
// from the environment, running the workflow bundle the test built (WORKFLOW_BUNDLE), and saying
// "ready" on stdout once it polls.
import { NativeConnection } from '@temporalio/worker';
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
const running = workers.run();
process.stdout.write('ready\n');
await running;
