// Error classes that workflows and activities both name: the class name is the failure `type` that
// retry policies match, so it is part of the retry contract.

/** Thrown when a job spec (file or flags) is invalid; the message names each field at fault. */
export class JobSpecError extends Error {
  override readonly name = 'JobSpecError';
  readonly code = 'JOB_SPEC_INVALID';
}
