// How the CLI reports a failure: known, user-facing errors print their message alone and exit with a
// stable code; a run's failure prints its root cause; anything else prints its class and message, and
// its stack only with --verbose or LOG_LEVEL=debug.
import { WorkflowFailedError } from '@temporalio/client';
import { EXIT, explainFailure } from './failures.js';

/** Thrown by a command for a problem the user can fix (bad flag, unreadable file); exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'USAGE';
}

const USER_FACING = new Set([
  'UsageError',
  'ConfigError',
  'ToolNotFoundError',
  'PortInUseError',
  'StackStartError',
  'InputFileError',
  'PriceTableError',
  'JobSpecError',
  'ExportSpecError',
  'ScheduleOptionsError',
  'AuthError',
  'InvalidLocationError',
  'OutputLocationError',
  'BusinessIdSourceError',
]);

/** Temporal's client when no server answers at the address. */
function isTemporalUnreachable(error: Error): boolean {
  return (
    error.name === 'TransportError' ||
    /Failed to connect before the deadline|ECONNREFUSED.*7233|tcp connect error/i.test(error.message)
  );
}

export function exitCodeFor(error: unknown): number {
  if (error instanceof Error && USER_FACING.has(error.name)) return EXIT.usage;
  return EXIT.runFailed;
}

/** Whether stacks are wanted: `--verbose` on the command line or LOG_LEVEL=debug (or trace). */
export function verbose(argv: readonly string[] = process.argv): boolean {
  return argv.includes('--verbose') || /^(debug|trace)$/i.test(process.env.LOG_LEVEL ?? '');
}

export function formatCliError(error: unknown, options: { verbose?: boolean } = {}): string {
  const stack = options.verbose && error instanceof Error && error.stack ? `\n${error.stack}` : '';
  if (error instanceof Error && USER_FACING.has(error.name)) return `enrichflow: ${error.message}${stack}`;
  if (error instanceof WorkflowFailedError) {
    const failure = explainFailure(error);
    return `enrichflow: ${failure.type ? `${failure.type}: ` : ''}${failure.cause}${stack}`;
  }
  if (error instanceof Error && isTemporalUnreachable(error)) {
    const address = process.env.ENRICHFLOW_TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
    return `enrichflow: cannot reach Temporal at ${address} (${error.message.split('\n')[0]}); start it with \`enrichflow dev\` or set ENRICHFLOW_TEMPORAL_ADDRESS${stack}`;
  }
  if (error instanceof Error) {
    return `enrichflow: unexpected error: ${error.name}: ${error.message}${stack || '\n(run again with --verbose or LOG_LEVEL=debug for the stack)'}`;
  }
  return `enrichflow: unexpected error: ${String(error)}`;
}
