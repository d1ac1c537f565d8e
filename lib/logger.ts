// Structured logging for every entry point: one pino root, child loggers carry run/dataset/batch
// bindings, and secrets are redacted wherever they appear in a logged object.
import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/** Paths pino censors in any logged object; keys only, values never reach the output. */
export const REDACT_PATHS = [
  'api_key',
  'apiKey',
  '*.api_key',
  '*.apiKey',
  '*.*.api_key',
  '*.*.apiKey',
  'headers.api_key',
  'req.headers.api_key',
  'req.headers.authorization',
  'secret',
  '*.secret',
  'webhook_secret',
  '*.webhook_secret',
  '*.*.webhook_secret',
  'adminKey',
  '*.adminKey',
  'secretAccessKey',
  '*.secretAccessKey',
  '*.*.secretAccessKey',
];

export interface CreateLoggerOptions {
  /** pino level; default `info`, or `LOG_LEVEL` when set. */
  level?: string;
  /** Name bound to every line (the component: `worker`, `sandbox`, `cli`). */
  name?: string;
  /** Where lines go; default standard error so that command output on stdout stays clean. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const pinoOptions: LoggerOptions = {
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: options.name ? { name: options.name } : {},
  };
  return pino(pinoOptions, options.destination ?? pino.destination(2));
}

/** A logger that drops everything, for tests and library callers that pass none. */
export const silentLogger: Logger = pino({ level: 'silent' });
