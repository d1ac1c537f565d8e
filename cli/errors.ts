// How the CLI reports a failure: known, user-facing errors print their message alone and exit with a
// stable code; anything else is a defect and prints its stack.

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
  'AuthError',
]);

export function exitCodeFor(error: unknown): number {
  if (error instanceof Error && USER_FACING.has(error.name)) return 2;
  return 1;
}

export function formatCliError(error: unknown): string {
  if (error instanceof Error && USER_FACING.has(error.name)) return `enrichflow: ${error.message}`;
  if (error instanceof Error) return `enrichflow: unexpected error: ${error.stack ?? error.message}`;
  return `enrichflow: unexpected error: ${String(error)}`;
}
