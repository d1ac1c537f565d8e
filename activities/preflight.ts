// The preflight inside an activity (storage/preflight.ts): the same checks and words as the CLI's, and
// every failure of them final — no retry brings back a bucket, a permission or a missing column.
import { ApplicationFailure } from '@temporalio/activity';
import type { InputSpec } from '../pipeline/run-types.js';
import {
  checkOutput,
  checkRun,
  type CheckedLocation,
  type InputCheck,
  type LocationResolver,
} from '../storage/preflight.js';
import { cancellationSignal } from './attempt.js';

function final(error: unknown): unknown {
  if (!(error instanceof Error) || error.name === 'AbortError' || cancellationSignal().aborted) return error;
  return ApplicationFailure.create({
    type: error.name,
    message: error.message,
    nonRetryable: true,
    cause: error,
  });
}

/** The run's preflight at the start of its planning. */
export async function preflightRun(
  run: { input: InputSpec; output: string },
  resolve: LocationResolver,
  options: { tempDir?: string } = {},
): Promise<InputCheck> {
  try {
    return await checkRun(run, resolve, { ...options, signal: cancellationSignal() });
  } catch (error) {
    throw final(error);
  }
}

/** An export's output preflight at the start of its preparation. */
export async function preflightOutput(output: CheckedLocation): Promise<void> {
  try {
    await checkOutput(output, { signal: cancellationSignal() });
  } catch (error) {
    throw final(error);
  }
}
