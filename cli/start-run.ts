// Starting a run from a job spec, shared by `enrich`, `run` and the demo: the preflight (input and
// output, storage/preflight.ts) before anything is started, derives the run id, starts the run
// workflow (or finds the one already started with that id), and optionally follows it to the end.
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
} from '@temporalio/client';
import type { EnrichflowConfig } from '../config/index.js';
import { InputFileError } from '../storage/plan-input.js';
import { checkRun } from '../storage/preflight.js';
import { jobNameOf, toRunInput, type JobSpec } from '../jobs/job-spec.js';
import { computeRunKey, runIdOf } from '../jobs/run-key.js';
import { storeResolverFor } from '../workers/worker.js';
import type { EnrichRunWorkflowInput } from '../workflows/enrich-run.js';
import type { BatchFailure, RunSummary } from '../pipeline/run-types.js';
import { describeBatch } from '../pipeline/batch-queue.js';
import { RunFiles } from '../storage/run-files.js';
import { verbose } from './errors.js';
import {
  EXIT,
  exitCodeOfFailure,
  exitCodeOfStatus,
  explainFailure,
  formatRunFailure,
  nextStep,
} from './failures.js';
import { renderSnapshot, snapshotRun, type RunSnapshot } from './progress.js';
import { enrichRunWorkflow } from '../workflows/index.js';

export interface StartedRun {
  runId: string;
  /** False when a run with the same id is running or completed: no new work started. */
  started: boolean;
  /** Set when an earlier attempt of the run had ended this way (failed, cancelled, …) and a new one started. */
  restartedAfter?: string;
}

/** Closed states a run is started again from, by the command that started it. */
const RESTARTABLE = new Set(['FAILED', 'CANCELLED', 'TERMINATED', 'TIMED_OUT']);

export async function startRun(client: Client, config: EnrichflowConfig, spec: JobSpec): Promise<StartedRun> {
  const resolve = storeResolverFor(config);
  await checkRun({ input: toRunInput(spec, '').input, output: spec.output }, resolve, {
    ...(config.workDir ? { tempDir: config.workDir } : {}),
  });
  const source = resolve(spec.input.location);
  const info = await source.store.head(source.prefix);
  if (!info) throw new InputFileError('NOT_FOUND', spec.input.location, 'no such file');
  const runKey = spec.run_key ?? computeRunKey(spec, info);
  const runId = runIdOf(jobNameOf(spec), runKey);
  const input: EnrichRunWorkflowInput = {
    ...toRunInput(spec, runKey),
    apiTaskQueue: config.temporal.apiTaskQueue,
  };
  let previous: string | undefined;
  try {
    const { status } = await client.workflow.getHandle(runId).describe();
    if (!RESTARTABLE.has(status.name)) return { runId, started: false };
    previous = status.name.toLowerCase();
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  try {
    await client.workflow.start(enrichRunWorkflow, {
      workflowId: runId,
      taskQueue: config.temporal.taskQueue,
      // A new attempt of a failed or cancelled run takes the batches its earlier attempts finished.
      args: [previous ? { ...input, reuseResults: true } : input],
      // Should two starts race, the second joins the first instead of duplicating it; a completed
      // run is never run again under its id, one that failed or was cancelled is (a new attempt).
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      memo: {
        jobName: input.jobName,
        input: spec.input.location,
        output: spec.output,
        datasets: spec.datasets.join(','),
      },
    });
    return { runId, started: true, ...(previous ? { restartedAfter: previous } : {}) };
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return { runId, started: false };
    throw error;
  }
}

export interface FollowOptions {
  /** Where progress goes; a TTY gets a live display, anything else a line every `intervalMs * 10`. */
  out: NodeJS.WriteStream;
  intervalMs?: number;
}

/** Thrown by `followRun` when the run pauses for credits: the follower stops (exit code 3); the run waits. */
export class RunPausedError extends Error {
  override readonly name = 'RunPausedError';
  constructor(
    readonly runId: string,
    readonly stage: string,
    readonly reason: string,
  ) {
    super(
      `run ${runId}: paused at ${stage}: ${reason}\n  next: top up the key's credits, then: enrichflow runs resume ${runId}`,
    );
  }
}

/**
 * Shows progress until the run closes, then returns its result (or throws its failure); throws
 * `RunPausedError` when the run pauses for credits. Ctrl-C stops following (exit code 130) and leaves
 * the run going.
 */
export async function followRun(client: Client, runId: string, options: FollowOptions): Promise<RunSummary> {
  const dispose = exitOnInterrupt(options.out, () => runId);
  try {
    return await following(client, runId, options);
  } finally {
    dispose();
  }
}

/**
 * Until disposed, Ctrl-C ends the command with exit code 130, saying that the run (named by
 * `runId()`, once known) goes on. A command that stops processes of its own on Ctrl-C (demo, dev)
 * keeps its handler alone. Returns the disposer.
 */
export function exitOnInterrupt(out: NodeJS.WritableStream, runId: () => string | undefined): () => void {
  if (process.listenerCount('SIGINT') > 0) return () => undefined;
  const onInterrupt = () => {
    const id = runId();
    out.write(
      id
        ? `\nstopped following run ${id}; it goes on (enrichflow runs watch ${id} / enrichflow runs cancel ${id})\n`
        : '\ninterrupted before a run was started\n',
    );
    process.exit(EXIT.interrupted);
  };
  process.once('SIGINT', onInterrupt);
  return () => process.removeListener('SIGINT', onInterrupt);
}

/**
 * The first recorded batch failure of a run completed with failures, as one line: its stage, batch
 * and the error the service gave (the failures table has them all).
 */
export async function firstFailure(
  config: EnrichflowConfig,
  summary: RunSummary,
): Promise<string | undefined> {
  const key = summary.stages?.flatMap((s) => s.failureFiles ?? [])[0];
  if (!key || !summary.request) return undefined;
  try {
    const files = RunFiles.open(storeResolverFor(config), {
      runId: summary.runId,
      output: summary.request.output,
    });
    const record = await files.getJson<{ stage: string; failures: BatchFailure[] }>(key);
    const first = record.failures[0];
    if (!first) return undefined;
    return `  first failure: ${record.stage} batch ${describeBatch(first.batch)}, after ${first.attempts} attempt${first.attempts === 1 ? '' : 's'}: ${first.errorType}: ${first.message.split('\n')[0]}`;
  } catch {
    return undefined;
  }
}

/** What a followed run came to, as `--json` prints it when the run has no summary. */
export interface RunOutcome {
  runId: string;
  status: string;
  stage?: string;
  activity?: string;
  type?: string;
  cause: string;
  next: string;
}

/**
 * Follows a run to its end and reports it: the summary (or, for a run that failed, was cancelled or
 * paused, its status, where, the root cause and the next command) and the exit code it calls for.
 */
export async function followAndReport(
  client: Client,
  runId: string,
  options: { json: boolean; progress: NodeJS.WriteStream; config: EnrichflowConfig },
): Promise<void> {
  try {
    const summary = await followRun(client, runId, { out: options.progress });
    const failure = options.json ? undefined : await firstFailure(options.config, summary);
    process.stdout.write(
      options.json
        ? `${JSON.stringify(summary, null, 2)}\n`
        : `${formatSummary(summary)}\n${failure ? `${failure}\n` : ''}`,
    );
    process.exitCode = exitCodeOfStatus(summary.status);
  } catch (error) {
    let outcome: RunOutcome;
    if (error instanceof RunPausedError) {
      outcome = {
        runId,
        status: 'paused',
        stage: error.stage,
        cause: error.reason,
        next: `top up the key's credits, then: enrichflow runs resume ${runId}`,
      };
      process.exitCode = EXIT.budgetOrPaused;
      process.stderr.write(`${error.message}\n`);
    } else if (error instanceof WorkflowFailedError) {
      const failure = explainFailure(error);
      outcome = { runId, ...failure, next: nextStep(runId, failure) };
      process.exitCode = exitCodeOfFailure(failure);
      process.stderr.write(`${formatRunFailure(runId, failure)}\n`);
      if (verbose()) process.stderr.write(`${error.stack ?? ''}\n`);
    } else {
      throw error;
    }
    if (options.json) process.stdout.write(`${JSON.stringify(outcome, null, 2)}\n`);
  }
}

async function following(client: Client, runId: string, options: FollowOptions): Promise<RunSummary> {
  const handle = client.workflow.getHandle(runId);
  const result = handle.result() as Promise<RunSummary>;
  let finished = false;
  const done = result.then(
    () => (finished = true),
    () => (finished = true),
  );
  const interval = options.intervalMs ?? 1_000;
  let printed = 0;
  let tick = 0;
  while (!finished) {
    await Promise.race([done, new Promise((resolve) => setTimeout(resolve, interval))]);
    if (finished) break;
    tick += 1;
    let lines: string[];
    let snapshot: RunSnapshot;
    try {
      snapshot = await snapshotRun(client, runId);
      lines = renderSnapshot(snapshot);
    } catch {
      continue;
    }
    if (snapshot.run.paused) {
      options.out.write(`${lines.join('\n')}\n`);
      throw new RunPausedError(runId, snapshot.run.paused.stage, snapshot.run.paused.reason);
    }
    if (options.out.isTTY) {
      if (printed) options.out.write(`\x1b[${printed}A\x1b[0J`);
      options.out.write(`${lines.join('\n')}\n`);
      printed = lines.length;
    } else if (tick % 10 === 1) {
      options.out.write(`${lines.join('\n')}\n`);
    }
  }
  return result;
}

export function formatSummary(summary: RunSummary): string {
  const lines = [
    `run ${summary.runId}: ${summary.status.replaceAll('_', ' ')}`,
    `  input rows: ${summary.plan.inputRows} (${summary.plan.rejectedRows} rejected)`,
    `  matched rows: ${summary.enrichPlan.matchedRows}, unmatched: ${summary.enrichPlan.unmatchedRows}, unique ${summary.plan.entity === 'prospects' ? 'prospect' : 'business'} ids: ${summary.enrichPlan.uniqueIds}`,
  ];
  const { employers } = summary.enrichPlan;
  if (employers)
    lines.push(
      `  employers: ${employers.uniqueIds} unique business ids (rows: ${employers.rowsFromInput} from their business_id, ${employers.rowsFromProfile} from the profile, ${employers.rowsWithout} unknown)`,
    );
  const skipped = (stage: string) => {
    const fresh = [...summary.enrichPlan.stages, ...(summary.enrichPlan.employers?.stages ?? [])].find(
      (s) => s.stage === stage,
    )?.skippedFresh;
    return fresh !== undefined ? `, ${fresh} ids skipped as fresh` : '';
  };
  for (const stage of summary.stages) {
    lines.push(
      `  ${stage.stage.padEnd(30)} ${stage.records} records, ${stage.misses} misses, ${stage.calls} calls, ${stage.failedBatches} failed batches${stage.unstarted ? `, ${stage.unstarted.batches} not started` : ''}${skipped(stage.stage)}`,
    );
  }
  lines.push(`  output: ${summary.outputPrefix}`);
  for (const table of summary.tables) {
    lines.push(
      `    ${table.table.padEnd(30)} ${String(table.rows).padStart(9)} rows  ${table.files.map((f) => f.key).join(', ')}`,
    );
  }
  lines.push(`    manifest: ${summary.outputPrefix}${summary.manifestKey}`);
  if (summary.status === 'stopped_at_budget') {
    const calls = summary.stages.reduce((sum, s) => sum + s.calls, 0);
    lines.push(
      `  stopped at budget after ${calls} calls (max ${summary.request.maxCalls ?? '?'}): no _SUCCESS yet; go on with: enrichflow runs retry ${summary.runId} [--max-calls N]`,
    );
  }
  if (summary.failedBatches > 0) {
    lines.push(
      `  ${summary.failedBatches} batches failed; see the failures table, and re-run them with: enrichflow runs retry ${summary.runId}`,
    );
  }
  return lines.join('\n');
}
