// `enrichflow worker`: runs a worker process until SIGTERM/SIGINT.
import type { Command } from 'commander';
import { loadConfig } from '../../config/index.js';
import { createLogger } from '../../lib/logger.js';
import { startWorker } from '../../workers/main.js';

export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description(
      'Run a worker: workflows and table work on ENRICHFLOW_TASK_QUEUE, Data Service calls on ENRICHFLOW_API_TASK_QUEUE under the shared rate budget',
    )
    .action(async () => {
      const config = loadConfig({ require: ['ENRICHFLOW_API_KEY'] });
      const logger = createLogger({ name: 'worker', level: config.logLevel });
      const worker = await startWorker(config, logger);
      await worker.done;
      logger.info('worker stopped');
    });
}
