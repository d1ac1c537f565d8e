// Starting a search export from the CLI: everything is checked before a workflow starts (filters,
// options, the exclude file), the run id comes from the export's run key, a failed or cancelled run
// started again resumes from its saved plan; and the summaries and plans an operator reads.
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { exportLayout } from '../pipeline/export-layout.js';
import { RunFiles } from '../storage/run-files.js';
import type { EnrichflowConfig } from '../config/index.js';
import {
  exportRunKey,
  parseIdList,
  toExportInput,
  validateExportSpec,
  type ExportSpec,
} from '../jobs/export-spec.js';
import { JobSpecError } from '../jobs/job-spec.js';
import { storeResolverFor } from '../workers/worker.js';
import { checkOutput } from '../storage/preflight.js';
import type {
  ExportPlan,
  ExportPlanResult,
  ExportRunWorkflowInput,
  ExportSummary,
} from '../pipeline/export-types.js';
import { followRun, type FollowOptions } from './start-run.js';
import { exportRunWorkflow } from '../workflows/index.js';

export interface StartedExport {
  runId: string;
  /** The workflow to follow: the run itself, or a dry run's own planning workflow. */
  workflowId: string;
  /** False when the run already exists (running or completed): nothing new was started. */
  started: boolean;
}

/** States in which a run with this id is finished for good or still going: starting it again does nothing. */
const LIVE_OR_DONE = new Set(['RUNNING', 'COMPLETED', 'CONTINUED_AS_NEW']);

function isRemote(location: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(location);
}

/** Checks an export and starts its run workflow (or finds the run already started with its id). */
export async function startExport(
  client: Client,
  config: EnrichflowConfig,
  raw: ExportSpec,
): Promise<StartedExport> {
  const spec = validateExportSpec({
    ...raw,
    ...(raw.exclude && !isRemote(raw.exclude) ? { exclude: path.resolve(raw.exclude) } : {}),
    ...(!isRemote(raw.output) ? { output: path.resolve(raw.output) } : {}),
  });
  // The output's preflight (storage/preflight.ts): nothing starts when the run could not write there.
  await checkOutput(
    { ...storeResolverFor(config)(spec.output), location: spec.output },
    { removeCreatedFolders: Boolean(spec.dryRun) },
  );
  let excludeInfo;
  if (spec.exclude) {
    const { store, prefix } = storeResolverFor(config)(spec.exclude);
    excludeInfo = await store.head(prefix);
    if (!excludeInfo) throw new JobSpecError(`--exclude ${spec.exclude}: no such file`);
    parseIdList((await store.getBytes(prefix)).toString('utf8'), spec.target, `--exclude ${spec.exclude}`);
  }
  const runKey = spec.runKey ?? exportRunKey(spec, excludeInfo);
  const request = toExportInput(spec, runKey);
  const input: ExportRunWorkflowInput = { ...request, apiTaskQueue: config.temporal.apiTaskQueue };
  const memo = {
    jobName: request.jobName,
    input: `${spec.target} where ${Object.keys(spec.filters).join(', ') || '(no filters)'}`,
    output: spec.output,
    datasets: spec.withPosts ? `${spec.target},prospect_posts` : spec.target,
  };
  if (spec.dryRun) {
    const workflowId = `${request.runId}.plan-${Date.now().toString(36)}`;
    await client.workflow.start(exportRunWorkflow, {
      workflowId,
      taskQueue: config.temporal.taskQueue,
      args: [input],
      memo: { ...memo, dryRun: 'true' },
    });
    return { runId: request.runId, workflowId, started: true };
  }
  try {
    const description = await client.workflow.getHandle(request.runId).describe();
    if (LIVE_OR_DONE.has(description.status.name))
      return { runId: request.runId, workflowId: request.runId, started: false };
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  try {
    await client.workflow.start(exportRunWorkflow, {
      workflowId: request.runId,
      taskQueue: config.temporal.taskQueue,
      args: [input],
      // A run that failed or was cancelled may be started again: it resumes from its saved plan.
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      memo,
    });
    return { runId: request.runId, workflowId: request.runId, started: true };
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError)
      return { runId: request.runId, workflowId: request.runId, started: false };
    throw error;
  }
}

/** Shows progress until the export closes, then returns its result (or throws its failure). */
export async function followExport(
  client: Client,
  workflowId: string,
  options: FollowOptions,
): Promise<ExportSummary | ExportPlanResult> {
  return (await followRun(client, workflowId, options)) as unknown as ExportSummary | ExportPlanResult;
}

export function isExportSummary(value: unknown): value is ExportSummary {
  return (value as { kind?: unknown } | null)?.kind === 'export';
}

const number = (n: number) => n.toLocaleString('en-US');

function searchLine(plan: ExportPlan): string {
  const total = plan.total.exact ? number(plan.total.n) : `at least ${number(plan.total.n)}`;
  const check = plan.total.exact
    ? plan.sliceSum === plan.total.n
      ? 'equals'
      : 'DOES NOT EQUAL'
    : 'cannot be checked against';
  const slices = plan.slices.length === 1 ? '1 slice' : `${plan.slices.length} slices`;
  const line = `  search: ${total} records; ${slices} (cap ${number(plan.cap)}), whose sum ${number(plan.sliceSum)} ${check} the count; ${plan.probes} count calls`;
  return plan.plannedRecords < plan.sliceSum
    ? `${line}\n  fetching ${number(plan.plannedRecords)} of them (size, or the cap of truncated slices)`
    : line;
}

export function formatExportSummary(summary: ExportSummary): string {
  const { counts, plan } = summary;
  const lines = [
    `export ${summary.runId}: ${summary.status.replaceAll('_', ' ')}`,
    searchLine(plan),
    `  fetched ${number(counts.fetched)} records, ${number(counts.duplicates)} duplicates, ${number(counts.excluded)} excluded → ${number(counts.written)} rows`,
    `  calls: ${number(counts.calls)}`,
  ];
  if (summary.posts) {
    lines.push(
      `  posts: ${number(summary.posts.records)} records, ${number(summary.posts.misses)} prospects without posts, ${summary.posts.failed} failed`,
    );
  }
  lines.push(`  output: ${summary.outputPrefix}`);
  for (const table of summary.tables) {
    lines.push(
      `    ${table.table.padEnd(16)} ${String(table.rows).padStart(9)} rows  ${table.files.map((f) => f.key).join(', ')}`,
    );
  }
  lines.push(`    manifest: ${summary.outputPrefix}${summary.manifestKey}`);
  for (const warning of summary.warnings) lines.push(`  !! ${warning}`);
  return lines.join('\n');
}

export function formatExportPlan(result: ExportPlanResult): string {
  const { plan, calls } = result;
  const lines = [
    `plan of ${result.runId} (dry run: no page fetched, nothing written)`,
    searchLine(plan),
    `  to fetch: ${number(plan.plannedRecords)} records in ${number(plan.plannedPages)} pages of ${plan.pageSize}`,
    `  calls: ${number(calls.probes)} count calls (made) + ${number(calls.pages)} pages${calls.posts ? ` + ${number(calls.posts)} posts` : ''} = ${number(calls.probes + calls.pages + calls.posts)}`,
    `  ${'slice'.padStart(5)}  ${'records'.padStart(9)}  ${'method'.padEnd(9)}  ${'pages'.padStart(6)}  filters added`,
  ];
  for (const slice of plan.slices) {
    lines.push(
      `  ${String(slice.index).padStart(5)}  ${number(slice.count).padStart(9)}  ${slice.method.padEnd(9)}  ${String(slice.pages).padStart(6)}  ${slice.description}`,
    );
  }
  for (const slice of plan.slices.filter((s) => s.method === 'truncated')) {
    lines.push(
      `  !! TRUNCATED: slice ${slice.index} holds ${number(slice.count)} records; no filter splits it under the cap, so ${number(slice.count - plan.cap)} would be missing (cursor mode is off)`,
    );
  }
  return lines.join('\n');
}

/**
 * Retries a finished export that has failed pages or posts calls: the same run again, under a retry id,
 * in the same folder. It reuses the saved plan, skips the finished slices and every page or posts
 * record already written, fetches what is missing, and commits the tables and manifest again.
 */
export async function retryExport(
  client: Client,
  config: EnrichflowConfig,
  original: ExportSummary,
): Promise<{ retryId: string; failures: number } | undefined> {
  const files = RunFiles.open(storeResolverFor(config), {
    runId: original.runId,
    output: original.request.output,
  });
  const latest = (await files.store.exists(files.key(exportLayout.summary)))
    ? await files.getJson<ExportSummary>(exportLayout.summary)
    : original;
  const failures = latest.counts.failedPages + (latest.posts?.failed ?? 0);
  if (failures === 0) return undefined;
  // The same latest commit gives the same retry id, so retrying twice does the work once.
  const retryId = `${original.runId}.retry-${createHash('sha256').update(latest.finishedAt).digest('hex').slice(0, 8)}`;
  const input: ExportRunWorkflowInput = { ...latest.request, apiTaskQueue: config.temporal.apiTaskQueue };
  await client.workflow.start(exportRunWorkflow, {
    workflowId: retryId,
    taskQueue: config.temporal.taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    memo: { retryOf: original.runId },
  });
  return { retryId, failures };
}
