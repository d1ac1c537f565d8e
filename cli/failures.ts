// What an operator reads when a run does not complete: its id and status, the stage and batch that
// failed, the root cause in one line (the deepest ApplicationFailure under Temporal's wrappers, never
// "Activity task failed"), and the next command to type; and the exit code each outcome gives.
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  ChildWorkflowFailure,
  TerminatedFailure,
  TimeoutFailure,
  WorkflowFailedError,
} from '@temporalio/client';

/** The process exit codes, documented in the README. */
export const EXIT = {
  done: 0,
  runFailed: 1,
  usage: 2,
  budgetOrPaused: 3,
  interrupted: 130,
} as const;

/** Root causes an operator fixes in the input, the output or the job: exit code 2 like a usage error. */
const INPUT_CAUSES = new Set([
  'InputFileError',
  'OutputLocationError',
  'InvalidLocationError',
  'JobSpecError',
  'ExportSpecError',
  'LocalPathError',
  'BusinessIdSourceError',
]);

export interface RunFailure {
  status: 'failed' | 'cancelled' | 'terminated' | 'timed_out';
  /** The dataset stage (child workflow) or activity where it failed. */
  stage?: string;
  /** The activity that failed (`planRun`, `callBatch`, …) and its id. */
  activity?: string;
  /** The error class of the root cause (`OutputLocationError`, `AuthError`, …). */
  type?: string;
  /** The root cause in one line. */
  cause: string;
}

/** Walks Temporal's wrappers down to the root cause of a closed run's failure. */
export function explainFailure(error: unknown): RunFailure {
  let current: unknown = error instanceof WorkflowFailedError ? error.cause : error;
  let status: RunFailure['status'] = 'failed';
  let stage: string | undefined;
  let activity: string | undefined;
  let root: { type?: string; message: string } | undefined;
  for (let depth = 0; current instanceof Error && depth < 12; depth++) {
    if (current instanceof CancelledFailure) status = 'cancelled';
    else if (current instanceof TerminatedFailure) status = 'terminated';
    else if (current instanceof TimeoutFailure) status = 'timed_out';
    if (
      current instanceof CancelledFailure ||
      current instanceof TerminatedFailure ||
      current instanceof TimeoutFailure
    ) {
      root ??= status === 'timed_out' ? { message: current.message || 'timed out' } : undefined;
    } else if (current instanceof ChildWorkflowFailure) {
      const id = current.execution.workflowId ?? '';
      stage = id.includes('/') ? id.slice(id.indexOf('/') + 1) : id || undefined;
    } else if (current instanceof ActivityFailure) {
      activity = `${current.activityType}${current.activityId ? ` (activity ${current.activityId})` : ''}`;
    } else if (current instanceof ApplicationFailure) {
      root = { type: current.type ?? undefined, message: current.message };
    } else if (!(current instanceof WorkflowFailedError) && !root) {
      root = { type: current.name, message: current.message };
    }
    current = current.cause;
  }
  const message = (root?.message ?? (error instanceof Error ? error.message : String(error)))
    .split('\n')[0]!
    .trim();
  return {
    status,
    ...(stage ? { stage } : {}),
    ...(activity ? { activity } : {}),
    ...(root?.type ? { type: root.type } : {}),
    cause:
      !root && status === 'cancelled'
        ? 'cancelled by request'
        : !root && status === 'terminated'
          ? 'terminated'
          : message,
  };
}

/** The command to type next, for a run that ended this way. */
export function nextStep(runId: string, failure: RunFailure): string {
  if (failure.status === 'cancelled' || failure.status === 'terminated') {
    return 'start it again with the same command (enrichflow enrich … / enrichflow run <job-file>): a new attempt under the same run id';
  }
  if (failure.type === 'AuthError') {
    return 'fix ENRICHFLOW_API_KEY (or ENRICHFLOW_API_KEY_FILE) for the workers, then start it again with the same command';
  }
  if (failure.type && INPUT_CAUSES.has(failure.type)) {
    return 'fix what the message names, then start it again with the same command';
  }
  return `start it again with the same command; details: enrichflow runs show ${runId} --json`;
}

/** The report of a run that closed without a summary, a few lines for stderr. */
export function formatRunFailure(runId: string, failure: RunFailure): string {
  const where = [failure.stage ? `stage ${failure.stage}` : '', failure.activity ?? '']
    .filter(Boolean)
    .join(', ');
  return [
    `run ${runId}: ${failure.status.replace('_', ' ')}${where ? ` at ${where}` : ''}`,
    `  cause: ${failure.type && !failure.cause.startsWith(failure.type) ? `${failure.type}: ` : ''}${failure.cause}`,
    `  next: ${nextStep(runId, failure)}`,
  ].join('\n');
}

/** The exit code of a run that closed without a summary. */
export function exitCodeOfFailure(failure: RunFailure): number {
  return failure.type && INPUT_CAUSES.has(failure.type) ? EXIT.usage : EXIT.runFailed;
}

/** The exit code of a run's summary status. */
export function exitCodeOfStatus(status: string): number {
  if (status === 'completed') return EXIT.done;
  // Incomplete by a limit (a call budget, credits, an export's offset cap), not by an error.
  if (status === 'stopped_at_budget' || status === 'paused' || status === 'completed_truncated')
    return EXIT.budgetOrPaused;
  return EXIT.runFailed;
}
