// Routes the Temporal SDK's own logs (worker state changes, task failures) into our pino logger at its
// level, instead of the SDK's default console output, and, when asked, serves Prometheus metrics (the
// SDK's and enrichflow's, see activities/metrics.ts). Must run before the first worker or connection.
import { Runtime, type LogLevel, type LogMetadata, type Logger as TemporalLogger } from '@temporalio/worker';
import { ConfigError } from '../config/index.js';
import { CALL_LATENCY_BUCKETS_MS, METRICS } from '../activities/metrics.js';
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

export interface RuntimeOptions {
  /** `host:port` of the Prometheus endpoint (`/metrics`); no metrics when absent. */
  metricsAddress?: string | undefined;
}

/** Checks a `host:port` (IPv6 hosts in brackets) before the runtime tries to bind it. */
export function checkMetricsAddress(address: string): void {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(address);
  if (!match || Number(match[2]) > 65_535) {
    throw new ConfigError([
      `ENRICHFLOW_METRICS_ADDRESS: expected host:port such as 0.0.0.0:9464, got ${JSON.stringify(address)}`,
    ]);
  }
}

/**
 * Installs the Temporal runtime once per process with logs going to `logger` (SDK lines tagged
 * `temporal`) and, with `metricsAddress`, a Prometheus endpoint for the SDK's and enrichflow's metrics.
 */
export function installTemporalRuntime(logger: Logger, options: RuntimeOptions = {}): void {
  if (installed) return;
  const { metricsAddress } = options;
  if (metricsAddress) checkMetricsAddress(metricsAddress);
  try {
    Runtime.install({
      logger: forward(logger.child({ sdk: 'temporal' })),
      ...(metricsAddress
        ? {
            telemetryOptions: {
              metrics: {
                prometheus: {
                  bindAddress: metricsAddress,
                  histogramBucketOverrides: { [METRICS.callLatency]: CALL_LATENCY_BUCKETS_MS },
                },
              },
            },
          }
        : {}),
    });
  } catch (error) {
    if (!metricsAddress) throw error;
    throw new ConfigError([
      `ENRICHFLOW_METRICS_ADDRESS: cannot serve metrics on ${metricsAddress}: ${(error as Error).message}`,
    ]);
  }
  installed = true;
  if (metricsAddress)
    logger.info({ metrics: `http://${metricsAddress}/metrics` }, 'serving Prometheus metrics');
}
