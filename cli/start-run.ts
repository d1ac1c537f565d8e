// Starting a run from a job spec, shared by `enrich`, `run` and the demo: checks the input exists
// before anything is started, derives the run id, starts the run workflow (or finds the one already
// started with that id), and optionally follows it to the end.
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { EnrichflowConfig } from '../config/index.js';
import { detectFormat, InputFileError } from '../storage/plan-input.js';
import { jobNameOf, toRunInput, type JobSpec } from '../jobs/job-spec.js';
import { computeRunKey, runIdOf } from '../jobs/run-key.js';
import { storeResolverFor } from '../workers/worker.js';
import type { EnrichRunWorkflowInput } from '../workflows/enrich-run.js';
import type { RunSummary } from '../pipeline/run-types.js';
import { renderSnapshot, snapshotRun } from './progress.js';
import { enrichRunWorkflow } from '../workflows/index.js';

export interface StartedRun {
  runId: string;
  /** False when a run with the same id already existed (running or finished): no new work started. */
  started: boolean;
}

export async function startRun(client: Client, config: EnrichflowConfig, spec: JobSpec): Promise<StartedRun> {
  detectFormat(spec.input.location, spec.input.format);
  const source = storeResolverFor(config)(spec.input.location);
  const info = await source.store.head(source.prefix);
  if (!info) throw new InputFileError('NOT_FOUND', spec.input.location, 'no such file');
  const runKey = spec.run_key ?? computeRunKey(spec, info);
  const runId = runIdOf(jobNameOf(spec), runKey);
  const input: EnrichRunWorkflowInput = {
    ...toRunInput(spec, runKey),
    apiTaskQueue: config.temporal.apiTaskQueue,
  };
  try {
    await client.workflow.getHandle(runId).describe();
    return { runId, started: false };
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  try {
    await client.workflow.start(enrichRunWorkflow, {
      workflowId: runId,
      taskQueue: config.temporal.taskQueue,
      args: [input],
      // Should two starts race, the second joins the first instead of duplicating it; a finished
      // run with this id is never run again under the same id.
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      memo: {
        jobName: input.jobName,
        input: spec.input.location,
        output: spec.output,
        datasets: spec.datasets.join(','),
      },
    });
    return { runId, started: true };
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

/** Shows progress until the run closes, then returns its result (or throws its failure). */
export async function followRun(client: Client, runId: string, options: FollowOptions): Promise<RunSummary> {
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
    try {
      lines = renderSnapshot(await snapshotRun(client, runId));
    } catch {
      continue;
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
    `  matched rows: ${summary.enrichPlan.matchedRows}, unmatched: ${summary.enrichPlan.unmatchedRows}, unique business ids: ${summary.enrichPlan.uniqueIds}`,
  ];
  const skipped = (stage: string) => {
    const fresh = summary.enrichPlan.stages.find((s) => s.stage === stage)?.skippedFresh;
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
