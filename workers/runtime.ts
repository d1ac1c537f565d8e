// Routes the Temporal SDK's own logs (worker state changes, task failures) into our pino logger at its
// level, instead of the SDK's default console output. Must run before the first worker or connection.
import { Runtime, type LogLevel, type LogMetadata, type Logger as TemporalLogger } from '@temporalio/worker';
import type { Logger } from '../lib/logger.js';

let installed = false;

function forward(logger: Logger): TemporalLogger {
  const write = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const fields = meta ?? {};
    // The API-queue worker runs activities only, by design; the SDK warns about that on every start.
    if (message.startsWith('No workflows registered')) return logger.debug(fields, message);
    switch (level) {
      case 'TRACE':
        return logger.trace(fields, message);
      case 'DEBUG':
        return logger.debug(fields, message);
      case 'INFO':
        return logger.info(fields, message);
      case 'WARN':
        return logger.warn(fields, message);
      default:
        return logger.error(fields, message);
    }
  };
  return {
    log: write,
    trace: (message, meta) => write('TRACE', message, meta),
    debug: (message, meta) => write('DEBUG', message, meta),
    info: (message, meta) => write('INFO', message, meta),
    warn: (message, meta) => write('WARN', message, meta),
    error: (message, meta) => write('ERROR', message, meta),
  };
}

/** Installs the Temporal runtime once per process with logs going to `logger` (SDK lines tagged `temporal`). */
export function installTemporalRuntime(logger: Logger): void {
  if (installed) return;
  installed = true;
  Runtime.install({ logger: forward(logger.child({ sdk: 'temporal' })) });
}
