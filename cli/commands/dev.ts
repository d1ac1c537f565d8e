// `enrichflow dev`: runs the local stack in the foreground until Ctrl-C, and prints how to use it.
import type { Command } from 'commander';
import path from 'node:path';
import { loadConfig } from '../../config/index.js';
import { createLogger } from '../../lib/logger.js';
import { startLocalStack } from '../../stack/local-stack.js';
import { SERVER_GRACE_MS, stopInOrder, watchShutdownSignals, type StopStep } from '../shutdown.js';
import { localAddOns } from '../local-addons.js';

export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description(
      'Run the local stack (Temporal dev server + Web UI, S3 server, sandbox, worker) until Ctrl-C',
    )
    .option('--data-dir <dir>', 'folder for all local state (default: ENRICHFLOW_DATA_DIR or .data)')
    .option('--free-ports', 'use free ports instead of the defaults (7233, 8233, 7070, 8787)', false)
    .option('--headless', 'do not start the Temporal Web UI', false)
    .option('--no-sandbox', 'do not start the sandbox Data Service')
    .option('--no-worker', 'do not start a worker')
    .action(
      async (opts: {
        dataDir?: string;
        freePorts: boolean;
        headless: boolean;
        sandbox: boolean;
        worker: boolean;
      }) => {
        const config = loadConfig();
        const logger = createLogger({ name: 'dev', level: config.logLevel });
        const dataDir = path.resolve(opts.dataDir ?? config.dataDir);
        // Watched from the start: Ctrl-C while the servers start stops what has started.
        const shutdown = watchShutdownSignals();
        const stopSteps: StopStep[] = [];
        try {
          const stack = await startLocalStack({
            dataDir,
            freePorts: opts.freePorts,
            headless: opts.headless,
            logger,
          });
          stopSteps.unshift({
            name: 'Temporal and S3 servers',
            stop: () => stack.stop(SERVER_GRACE_MS),
            withinMs: SERVER_GRACE_MS + 2_000,
          });
          if (shutdown.signal) return;
          const addOns = await localAddOns.start({
            stack,
            dataDir,
            freePorts: opts.freePorts,
            sandbox: opts.sandbox,
            worker: opts.worker,
            logger,
          });
          stopSteps.unshift(...addOns.stopSteps);
          if (shutdown.signal) return;
          const env = addOns.env;
          const lines = [
            'enrichflow local stack is running.',
            `  Temporal:     ${stack.temporal.address} (namespace ${stack.temporal.namespace})`,
            stack.temporal.uiUrl
              ? `  Temporal UI:  ${stack.temporal.uiUrl}`
              : '  Temporal UI:  off (--headless)',
            `  S3:           ${stack.s3.endpoint} (bucket ${stack.s3.bucket})`,
            ...addOns.describe,
            '',
            'In another terminal, point enrichflow at it with:',
            ...Object.entries(env).map(([k, v]) => `  export ${k}=${v}`),
            '',
            'Press Ctrl-C to stop.',
          ];
          process.stdout.write(`${lines.join('\n')}\n`);
          await shutdown.received;
        } finally {
          const started = Date.now();
          await stopInOrder(stopSteps, logger);
          shutdown.dispose();
          if (stopSteps.length > 0)
            process.stdout.write(`enrichflow local stack stopped (${Date.now() - started} ms).\n`);
          // Stopped on a signal: everything this command started has stopped, so exit 0 now rather
          // than wait on handles nobody needs (a start-up failure goes on to be reported instead).
          if (shutdown.signal) process.exit(0);
        }
      },
    );
}
