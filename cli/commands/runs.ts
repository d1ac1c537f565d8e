// `enrichflow runs …`: what operators do with runs — list them, see one, follow it live, cancel it.
import {
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import type { Command } from 'commander';
import { createHash } from 'node:crypto';
import { loadConfig } from '../../config/index.js';
import { runLayout } from '../../pipeline/run-layout.js';
import { RunFiles } from '../../storage/run-files.js';
import { storeResolverFor } from '../../workers/worker.js';
import {
  QUERY_PROGRESS,
  SIGNAL_RESUME,
  type RunProgress,
  type RunSummary,
} from '../../pipeline/run-types.js';
import { connectClient } from '../../workers/temporal-connection.js';
import { UsageError } from '../errors.js';
import { renderSnapshot, snapshotRun } from '../progress.js';
import { firstFailure, followAndReport, followRun, formatSummary, RunPausedError } from '../start-run.js';
import { EXIT, exitCodeOfStatus, explainFailure, formatRunFailure, nextStep } from '../failures.js';
import { followExport, formatExportSummary, isExportSummary, retryExport } from '../export-run.js';
import { retryRunWorkflow } from '../../workflows/index.js';

/** A finished run's summary as text: an enrichment run's, or a search export's. */
function summaryText(summary: unknown): string {
  return isExportSummary(summary) ? formatExportSummary(summary) : formatSummary(summary as RunSummary);
}

async function withClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await connectClient(loadConfig().temporal);
  try {
    return await fn(client);
  } finally {
    await client.connection.close();
  }
}

async function describeRun(client: Client, runId: string) {
  try {
    return await client.workflow.getHandle(runId).describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError)
      throw new UsageError(`no run with id "${runId}" (see: enrichflow runs list)`);
    throw error;
  }
}

/** A row of `runs list --json`. */
interface ListedRun {
  runId: string;
  kind: 'enrich' | 'export';
  /** Temporal's execution status: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT, … */
  status: string;
  startTime: string;
  closeTime: string | null;
  jobName: string | null;
  datasets: string[];
  input: string | null;
  output: string | null;
}

/**
 * `runs show --json`: always `runId` and `status` (running, paused, completed, completed_with_failures,
 * stopped_at_budget, failed, cancelled, terminated, timed_out), then by status: the live progress
 * (`run`, `stages`) while running or paused; the run's whole summary once it committed; where and why
 * (`stage`, `activity`, `type`, `cause`) when it did not; and `next`, the command to type, unless it
 * completed.
 */
export type ShownRun = { runId: string; status: string; next?: string } & Record<string, unknown>;

async function showRun(
  client: Client,
  runId: string,
  description: WorkflowExecutionDescription,
): Promise<{ json: ShownRun; text: string }> {
  const handle = client.workflow.getHandle(runId);
  if (description.status.name === 'RUNNING') {
    const snapshot = await snapshotRun(client, runId);
    const paused = snapshot.run.paused;
    return {
      json: {
        runId,
        status: paused ? 'paused' : 'running',
        ...snapshot,
        ...(paused ? { next: `top up the key's credits, then: enrichflow runs resume ${runId}` } : {}),
      },
      text: renderSnapshot(snapshot).join('\n'),
    };
  }
  if (description.status.name !== 'COMPLETED') {
    const error = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    const failure = explainFailure(error);
    return {
      json: { runId, ...failure, next: nextStep(runId, failure) },
      text: formatRunFailure(runId, failure),
    };
  }
  const summary = (await handle.result()) as { status: string; runId?: string };
  const failure = isExportSummary(summary)
    ? undefined
    : await firstFailure(loadConfig(), summary as unknown as RunSummary);
  const next =
    summary.status === 'completed'
      ? undefined
      : summary.status === 'stopped_at_budget'
        ? `enrichflow runs retry ${runId} [--max-calls N]`
        : `enrichflow runs retry ${runId}`;
  return {
    json: { ...summary, runId: summary.runId ?? runId, status: summary.status, ...(next ? { next } : {}) },
    text: `${summaryText(summary)}${failure ? `\n${failure}` : ''}`,
  };
}

export function registerRunsCommands(program: Command): void {
  const runs = program.command('runs').description('List, inspect, follow, cancel and retry runs');

  runs
    .command('list')
    .description('List recent runs, newest first')
    .option('--limit <n>', 'how many', (v) => Number(v), 20)
    .option('--status <status>', 'only runs in this state (Running, Completed, Failed, Canceled, Terminated)')
    .option(
      '--json',
      'as JSON: an array of {runId, kind, status, startTime, closeTime, jobName, datasets, input, output}',
      false,
    )
    .action(async (opts: { limit: number; status?: string; json: boolean }) => {
      await withClient(async (client) => {
        const filter = opts.status ? ` AND ExecutionStatus = '${opts.status.replace(/'/g, '')}'` : '';
        const listed: ListedRun[] = [];
        for await (const wf of client.workflow.list({
          query: `WorkflowType IN ('enrichRunWorkflow', 'exportRunWorkflow')${filter}`,
        })) {
          const memo = (wf.memo ?? {}) as Record<string, string>;
          listed.push({
            runId: wf.workflowId,
            kind: wf.type === 'exportRunWorkflow' ? 'export' : 'enrich',
            status: wf.status.name,
            startTime: wf.startTime.toISOString(),
            closeTime: wf.closeTime ? wf.closeTime.toISOString() : null,
            jobName: memo.jobName ?? null,
            datasets: memo.datasets ? memo.datasets.split(',') : [],
            input: memo.input ?? null,
            output: memo.output ?? null,
          });
          if (listed.length >= opts.limit) break;
        }
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(listed, null, 2)}\n`);
          return;
        }
        if (listed.length === 0) {
          process.stdout.write('no runs yet\n');
          return;
        }
        const rows = listed.map((r) => [
          r.runId,
          r.status,
          r.startTime.replace('T', ' ').slice(0, 19),
          r.datasets.join(','),
          r.input ?? '',
        ]);
        const header = ['RUN', 'STATUS', 'STARTED (UTC)', 'DATASETS', 'INPUT'];
        const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
        for (const row of [header, ...rows]) {
          process.stdout.write(
            `${row
              .map((c, i) => c.padEnd(widths[i] ?? 0))
              .join('  ')
              .trimEnd()}\n`,
          );
        }
      });
    });

  runs
    .command('show')
    .description("Print a run's summary (or its progress while it runs, or why it did not complete)")
    .argument('<run>', 'run id')
    .option(
      '--json',
      'as JSON: always {runId, status, …}; see the README for the fields of each status',
      false,
    )
    .action(async (runId: string, opts: { json: boolean }) => {
      await withClient(async (client) => {
        const shown = await showRun(client, runId, await describeRun(client, runId));
        process.stdout.write(opts.json ? `${JSON.stringify(shown.json, null, 2)}\n` : `${shown.text}\n`);
        process.exitCode = exitCodeOfStatus(
          shown.json.status === 'running' ? 'completed' : shown.json.status,
        );
      });
    });

  runs
    .command('watch')
    .description('Follow a run live: progress per stage and dataset, rate and ETA')
    .argument('<run>', 'run id')
    .action(async (runId: string) => {
      await withClient(async (client) => {
        await describeRun(client, runId);
        try {
          const summary = await followRun(client, runId, { out: process.stdout });
          process.stdout.write(`${summaryText(summary)}\n`);
          process.exitCode = exitCodeOfStatus((summary as { status: string }).status);
        } catch (error) {
          if (error instanceof RunPausedError) {
            process.stdout.write(`${error.message}\n`);
            process.exitCode = EXIT.budgetOrPaused;
            return;
          }
          if (!(error instanceof WorkflowFailedError)) throw error;
          const failure = explainFailure(error);
          process.stdout.write(`${formatRunFailure(runId, failure)}\n`);
          process.exitCode = EXIT.runFailed;
        }
      });
    });

  registerRetryCommand(runs);
  registerResumeCommand(runs);

  runs
    .command('cancel')
    .description('Cancel a running run; batches in flight are cancelled and nothing is committed')
    .argument('<run>', 'run id')
    .action(async (runId: string) => {
      await withClient(async (client) => {
        const description = await describeRun(client, runId);
        if (description.status.name !== 'RUNNING') {
          throw new UsageError(`run ${runId} is not running (${description.status.name.toLowerCase()})`);
        }
        await client.workflow.getHandle(runId).cancel();
        process.stdout.write(`cancellation requested for ${runId}\n`);
      });
    });
}

/** `runs resume`: a run paused for credits goes on (after the key's credits were topped up). */
export function registerResumeCommand(runs: Command): void {
  runs
    .command('resume')
    .description('Resume a run paused because the service reported insufficient credits')
    .argument('<run>', 'run id (or retry id)')
    .action(async (runId: string) => {
      await withClient(async (client) => {
        const description = await describeRun(client, runId);
        if (description.status.name !== 'RUNNING') {
          throw new UsageError(`run ${runId} is not running (${description.status.name.toLowerCase()})`);
        }
        const handle = client.workflow.getHandle(runId);
        const progress = await handle.query<RunProgress>(QUERY_PROGRESS);
        if (!progress.paused) {
          process.stdout.write(`run ${runId} is not paused (${progress.stage}); nothing to resume\n`);
          return;
        }
        await handle.signal(SIGNAL_RESUME);
        process.stdout.write(
          `resume sent to ${runId} (paused at ${progress.paused.stage}: ${progress.paused.reason}); it pauses again if the service still reports no credits\n`,
        );
      });
    });
}

/** `runs retry`: re-runs the failed batches of a finished run and commits its output again. */
export function registerRetryCommand(runs: Command): void {
  runs
    .command('retry')
    .description(
      'Re-run only the failed batches of a finished run (and what a budget left unstarted), then re-commit its tables and manifest',
    )
    .argument('<run>', 'run id')
    .option('--no-wait', 'print the retry id and return instead of following it')
    .option('--max-calls <n>', 'call budget of this retry (a run stopped at budget goes on under it)', (v) =>
      Number(v),
    )
    .action(async (runId: string, opts: { wait: boolean; maxCalls?: number }) => {
      if (opts.maxCalls !== undefined && !(Number.isInteger(opts.maxCalls) && opts.maxCalls > 0)) {
        throw new UsageError('--max-calls: expected a whole number of calls above 0');
      }
      const config = loadConfig();
      await withClient(async (client) => {
        const description = await describeRun(client, runId);
        if (description.status.name === 'RUNNING')
          throw new UsageError(`run ${runId} is still running; retry it once it has finished`);
        if (description.status.name !== 'COMPLETED') {
          throw new UsageError(
            `run ${runId} ${description.status.name.toLowerCase()} before committing anything; start it again instead (enrichflow run / enrich)`,
          );
        }
        const result: unknown = await client.workflow.getHandle(runId).result();
        if (isExportSummary(result)) {
          const retry = await retryExport(client, config, result);
          if (!retry) {
            process.stdout.write(`export ${runId} has no failed pages or posts calls; nothing to retry\n`);
            return;
          }
          process.stderr.write(`retrying ${retry.failures} failed calls of ${runId} as ${retry.retryId}\n`);
          if (!opts.wait) {
            process.stdout.write(`${retry.retryId}\n`);
            return;
          }
          const summary = await followExport(client, retry.retryId, { out: process.stderr });
          process.stdout.write(`${summaryText(summary)}\n`);
          return;
        }
        const original = result as RunSummary;
        const files = RunFiles.open(storeResolverFor(config), { runId, output: original.request.output });
        const latest = (await files.store.exists(files.key(runLayout.runSummary)))
          ? await files.getJson<RunSummary>(runLayout.runSummary)
          : original;
        const failureFiles = await files.list(runLayout.failuresPrefix);
        const unstarted = latest.stages.flatMap((s) => (s.unstarted ? [[s.stage, s.unstarted]] : []));
        if (failureFiles.length === 0 && unstarted.length === 0) {
          process.stdout.write(`run ${runId} has no failed or unstarted batches; nothing to retry\n`);
          return;
        }
        // The same pending work gives the same retry id, so retrying twice does the work once.
        const pendingKey = [...failureFiles, JSON.stringify(unstarted)].join('\n');
        const retryId = `${runId}.retry-${createHash('sha256').update(pendingKey).digest('hex').slice(0, 8)}`;
        await client.workflow.start(retryRunWorkflow, {
          workflowId: retryId,
          taskQueue: config.temporal.taskQueue,
          args: [
            {
              previous: latest,
              apiTaskQueue: config.temporal.apiTaskQueue,
              ...(opts.maxCalls !== undefined ? { maxCalls: opts.maxCalls } : {}),
            },
          ],
          workflowIdConflictPolicy: 'USE_EXISTING',
          memo: { retryOf: runId },
        });
        const notStarted = latest.stages.reduce((sum, s) => sum + (s.unstarted?.batches ?? 0), 0);
        process.stderr.write(
          `retrying ${latest.failedBatches} failed${notStarted ? ` and ${notStarted} unstarted` : ''} batches of ${runId} as ${retryId}\n`,
        );
        if (!opts.wait) {
          process.stdout.write(`${retryId}\n`);
          return;
        }
        await followAndReport(client, retryId, { json: false, progress: process.stderr, config });
      });
    });
}
