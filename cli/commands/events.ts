// `enrichflow events pull`: the events of businesses (given as ids, a run's matches table or a Parquet
// table) over a time range, as a run like the others: a workflow whose calls go on the API task queue
// under the shared rate budget, and an output of `events/part-0.parquet`, `manifest.json`, `_SUCCESS`.
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Command } from 'commander';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { loadConfig, type EnrichflowConfig } from '../../config/index.js';
import { normaliseBusinessIds, parseEventTypes } from '../../events/enrollment-plan.js';
import { normaliseOutput } from '../../workers/receiver.js';
import { resolveTimeBound } from '../../pipeline/time-bounds.js';
import { runIdOf } from '../../jobs/run-key.js';
import { connectClient } from '../../workers/temporal-connection.js';
import {
  type EventsPullInput,
  type EventsPullProgress,
  type EventsPullRequest,
  type EventsPullSummary,
} from '../../pipeline/events-types.js';
import { QUERY_PROGRESS } from '../../pipeline/run-types.js';
import { UsageError } from '../errors.js';
import {
  asUsageError,
  collectIds,
  matchesLocationOfRun,
  oneIdSource,
  type IdSourceFlags,
} from './events-shared.js';
import { eventsPullWorkflow } from '../../workflows/index.js';

/** Ids passed inline through the workflow input at most; more belong in a Parquet table. */
export const MAX_INLINE_IDS = 10_000;

const JOB_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export interface PullFlags extends IdSourceFlags {
  eventTypes: string;
  since?: string;
  until?: string;
  output: string;
  jobName?: string;
  runKey?: string;
  window?: number;
}

/**
 * The pull's request from its flags: types checked, relative bounds resolved against `nowMs` rounded
 * down to the minute (so the same command within a minute is the same run, and later ones are new runs).
 * With `keepRelativeBounds` (a schedule's input), `30d` stays relative and each run resolves it at its start.
 */
export async function buildPullRequest(
  flags: PullFlags,
  config: EnrichflowConfig,
  nowMs = Date.now(),
  options: { keepRelativeBounds?: boolean } = {},
): Promise<EventsPullRequest> {
  const eventTypes = parseEventTypes(flags.eventTypes);
  oneIdSource(flags, true);
  const jobName = flags.jobName ?? 'events-pull';
  if (!JOB_NAME.test(jobName))
    throw new UsageError(`--job-name "${jobName}": lower-case letters, digits, . _ -`);
  const minute = Math.floor(nowMs / 60_000) * 60_000;
  const bound = (text: string | undefined) => {
    if (text === undefined) return undefined;
    const resolved = resolveTimeBound(text, minute);
    return options.keepRelativeBounds ? text.trim() : resolved;
  };
  const since = bound(flags.since);
  const until = bound(flags.until);
  let businessIds: string[] | undefined;
  let idsLocation: string | undefined;
  if (flags.businessIds?.length) {
    businessIds = normaliseBusinessIds(flags.businessIds);
    if (businessIds.length > MAX_INLINE_IDS)
      throw new UsageError(
        `${businessIds.length} ids on the command line; put more than ${MAX_INLINE_IDS} in a Parquet file (--from-parquet)`,
      );
  } else {
    const given = flags.fromParquet ?? '';
    // Local paths are made absolute: the worker that reads them may run elsewhere in the tree.
    idsLocation = flags.fromRun
      ? await matchesLocationOfRun(config, flags.fromRun)
      : /^[a-z][a-z0-9+.-]*:\/\//i.test(given)
        ? given
        : path.resolve(given);
  }
  const output = normaliseOutput(flags.output);
  const identity = {
    ids: businessIds ?? null,
    idsLocation: idsLocation ?? null,
    eventTypes: [...eventTypes].sort(),
    since: since ?? null,
    until: until ?? null,
    output,
  };
  const runKey =
    flags.runKey ?? createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 12);
  return {
    jobName,
    runKey,
    ...(businessIds ? { businessIds } : {}),
    ...(idsLocation ? { idsLocation } : {}),
    eventTypes,
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
    output,
    ...(flags.window ? { windowSize: flags.window } : {}),
  };
}

/** Starts the pull run (or finds the one with the same id); a failed run with that id may be started again. */
export async function startEventsPull(
  client: Client,
  config: EnrichflowConfig,
  request: EventsPullRequest,
): Promise<{ runId: string; started: boolean }> {
  const runId = runIdOf(request.jobName, request.runKey);
  const input: EventsPullInput = { ...request, apiTaskQueue: config.temporal.apiTaskQueue };
  try {
    const description = await client.workflow.getHandle(runId).describe();
    if (description.status.name === 'RUNNING' || description.status.name === 'COMPLETED')
      return { runId, started: false };
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  try {
    await client.workflow.start(eventsPullWorkflow, {
      workflowId: runId,
      taskQueue: config.temporal.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      // A failed pull can be started again and reuses its finished batches; a completed one is final.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      memo: { jobName: request.jobName, output: request.output, eventTypes: request.eventTypes.join(',') },
    });
    return { runId, started: true };
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return { runId, started: false };
    throw error;
  }
}

export function formatPullSummary(summary: EventsPullSummary): string {
  const range = `${summary.timestampFrom ?? 'the start of the history'} → ${summary.timestampTo ?? 'now'}`;
  return [
    `events pull ${summary.runId}: completed`,
    `  ${summary.plan.uniqueIds} businesses (${summary.plan.invalidIds} invalid ids left out), ${summary.plan.totalBatches} batches, ${summary.calls} calls`,
    `  events ${range}: ${summary.events}`,
    `  output: ${summary.outputPrefix}`,
    ...summary.table.files.map((f) => `    ${f.key}  ${f.rows} rows`),
    `    manifest: ${summary.outputPrefix}${summary.manifestKey}`,
  ].join('\n');
}

async function follow(client: Client, runId: string): Promise<EventsPullSummary> {
  const handle = client.workflow.getHandle(runId);
  const result = handle.result() as Promise<EventsPullSummary>;
  let done = false;
  void result.then(
    () => (done = true),
    () => (done = true),
  );
  let last = '';
  while (!done) {
    await Promise.race([result.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1_000))]);
    if (done) break;
    try {
      const p = await handle.query<EventsPullProgress>(QUERY_PROGRESS);
      const line = `${p.stage}: ${p.doneBatches}/${p.plan?.totalBatches ?? '?'} batches, ${p.events} events`;
      if (line !== last) process.stderr.write(`${line}\n`);
      last = line;
    } catch {
      // Between continue-as-new runs; the next tick shows it.
    }
  }
  return result;
}

export function registerEventsCommands(program: Command): void {
  const events = program.command('events').description('Business events: pull them as a run');
  events
    .command('pull')
    .description('Fetch the events of businesses (≤ 40 per call, on the shared rate budget) into Parquet')
    .option('--business-ids <ids>', 'business ids, comma-separated (repeatable)', collectIds)
    .option('--from-run <run>', "ids of a finished run's matches table")
    .option('--from-parquet <location>', 'ids from the business_id column of a Parquet file or folder')
    .requiredOption('--event-types <types>', 'comma-separated event types, or "all"')
    .option('--since <when>', 'start: a duration before now (30d, 12h) or a date / date-time')
    .option('--until <when>', 'end: a duration before now or a date (a date includes that whole day)')
    .requiredOption('--output <location>', 'output prefix: s3://bucket/prefix/ or a local folder')
    .option('--job-name <name>', 'job name, the first part of the run id (default events-pull)')
    .option('--run-key <key>', 'run key (default: a hash of the request); same key, same run')
    .option('--window <n>', 'calls in flight', (v) => Number(v))
    .option('--no-wait', 'print the run id and return instead of following the run')
    .option('--json', 'print the summary as JSON', false)
    .action(async (flags: PullFlags & { wait: boolean; json: boolean }) => {
      const config = loadConfig();
      let request: EventsPullRequest;
      try {
        request = await buildPullRequest(flags, config);
      } catch (error) {
        throw asUsageError(error);
      }
      const client = await connectClient(config.temporal);
      try {
        const { runId, started } = await startEventsPull(client, config, request);
        process.stderr.write(
          started ? `started events pull ${runId}\n` : `events pull ${runId} already exists; following it\n`,
        );
        if (!flags.wait) {
          process.stdout.write(flags.json ? `${JSON.stringify({ runId })}\n` : `${runId}\n`);
          return;
        }
        const summary = await follow(client, runId);
        process.stdout.write(
          flags.json ? `${JSON.stringify(summary, null, 2)}\n` : `${formatPullSummary(summary)}\n`,
        );
      } finally {
        await client.connection.close();
      }
    });
}
