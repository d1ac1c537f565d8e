// `enrichflow runs …`: what operators do with runs — list them, see one, follow it live, cancel it.
import { WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
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
import { followRun, formatSummary } from '../start-run.js';
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

function failureText(error: unknown): string {
  if (error instanceof WorkflowFailedError) {
    const cause = error.cause;
    return cause?.message ? `${cause.message}` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

export function registerRunsCommands(program: Command): void {
  const runs = program.command('runs').description('List, inspect, follow, cancel and retry runs');

  runs
    .command('list')
    .description('List recent runs, newest first')
    .option('--limit <n>', 'how many', (v) => Number(v), 20)
    .option('--status <status>', 'only runs in this state (Running, Completed, Failed, Canceled, Terminated)')
    .action(async (opts: { limit: number; status?: string }) => {
      await withClient(async (client) => {
        const filter = opts.status ? ` AND ExecutionStatus = '${opts.status.replace(/'/g, '')}'` : '';
        const rows: string[][] = [];
        for await (const wf of client.workflow.list({
          query: `WorkflowType IN ('enrichRunWorkflow', 'exportRunWorkflow')${filter}`,
        })) {
          const memo = (wf.memo ?? {}) as Record<string, string>;
          rows.push([
            wf.workflowId,
            wf.status.name,
            wf.startTime.toISOString().replace('T', ' ').slice(0, 19),
            memo.datasets ?? '',
            memo.input ?? '',
          ]);
          if (rows.length >= opts.limit) break;
        }
        if (rows.length === 0) {
          process.stdout.write('no runs yet\n');
          return;
        }
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
    .description("Print a run's summary (or its progress while it runs)")
    .argument('<run>', 'run id')
    .option('--json', 'as JSON', false)
    .action(async (runId: string, opts: { json: boolean }) => {
      await withClient(async (client) => {
        const description = await describeRun(client, runId);
        const handle = client.workflow.getHandle(runId);
        if (description.status.name === 'RUNNING') {
          const snapshot = await snapshotRun(client, runId);
          process.stdout.write(
            opts.json ? `${JSON.stringify(snapshot, null, 2)}\n` : `${renderSnapshot(snapshot).join('\n')}\n`,
          );
          return;
        }
        if (description.status.name !== 'COMPLETED') {
          let reason = '';
          try {
            await handle.result();
          } catch (error) {
            reason = failureText(error);
          }
          process.stdout.write(
            `run ${runId}: ${description.status.name.toLowerCase()}${reason ? `: ${reason}` : ''}\n`,
          );
          process.exitCode = 1;
          return;
        }
        const summary: unknown = await handle.result();
        process.stdout.write(
          opts.json ? `${JSON.stringify(summary, null, 2)}\n` : `${summaryText(summary)}\n`,
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
        } catch (error) {
          process.stdout.write(`run ${runId} did not complete: ${failureText(error)}\n`);
          process.exitCode = 1;
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
        const summary = await followRun(client, retryId, { out: process.stderr });
        process.stdout.write(`${formatSummary(summary)}\n`);
      });
    });
}
