// `enrichflow prospects` and `enrichflow businesses`: every record behind a search's filters, past the
// service's 60,000 offset cap, into Parquet with a manifest and `_SUCCESS`.
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../config/index.js';
import { parseFiltersText, type ExportSpec } from '../../jobs/export-spec.js';
import { JobSpecError } from '../../jobs/job-spec.js';
import { storeResolverFor } from '../../workers/worker.js';
import { connectClient } from '../../workers/temporal-connection.js';
import type { ExportTarget } from '../../pipeline/export-types.js';
import { followExport, formatExportPlan, formatExportSummary, startExport } from '../export-run.js';
import { exitCodeOfStatus } from '../failures.js';

interface ExportFlags {
  filters: string;
  output: string;
  size?: number;
  exclude?: string;
  withPosts?: boolean;
  dryRun?: boolean;
  jobName?: string;
  runKey?: string;
  splitBy?: string;
  cursor: boolean;
  offsetCap?: number;
  window?: number;
  wait: boolean;
  json: boolean;
}

async function readFilters(target: ExportTarget, location: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    if (/^s3:\/\//i.test(location)) {
      const { store, prefix } = storeResolverFor(loadConfig())(location);
      text = (await store.getBytes(prefix)).toString('utf8');
    } else {
      text = readFileSync(location, 'utf8');
    }
  } catch (error) {
    throw new JobSpecError(`--filters ${location}: cannot read it (${(error as Error).message})`);
  }
  return parseFiltersText(target, text, `--filters ${location}`);
}

async function runExport(target: ExportTarget, flags: ExportFlags): Promise<void> {
  const spec: ExportSpec = {
    target,
    filters: await readFilters(target, flags.filters),
    output: flags.output,
    ...(flags.size !== undefined ? { size: flags.size } : {}),
    ...(flags.exclude ? { exclude: flags.exclude } : {}),
    ...(flags.withPosts ? { withPosts: true } : {}),
    ...(flags.dryRun ? { dryRun: true } : {}),
    ...(flags.jobName ? { jobName: flags.jobName } : {}),
    ...(flags.runKey ? { runKey: flags.runKey } : {}),
    ...(flags.splitBy
      ? {
          splitBy: flags.splitBy
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        }
      : {}),
    ...(flags.cursor === false ? { cursor: false } : {}),
    ...(flags.offsetCap !== undefined ? { offsetCap: flags.offsetCap } : {}),
    ...(flags.window !== undefined ? { windowSize: flags.window } : {}),
  };
  const config = loadConfig();
  const client = await connectClient(config.temporal);
  try {
    const { runId, workflowId, started } = await startExport(client, config, spec);
    if (spec.dryRun) process.stderr.write(`planning ${runId} (dry run)\n`);
    else
      process.stderr.write(
        started
          ? `started export ${runId}\n`
          : `export ${runId} already exists (same search and options); showing it instead of starting it again\n`,
      );
    if (!flags.wait && !spec.dryRun) {
      process.stdout.write(flags.json ? `${JSON.stringify({ runId })}\n` : `${runId}\n`);
      return;
    }
    const result = await followExport(client, workflowId, { out: process.stderr });
    if (flags.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else if (result.kind === 'export-plan') process.stdout.write(`${formatExportPlan(result)}\n`);
    else {
      process.stdout.write(`${formatExportSummary(result)}\n`);
      process.exitCode = exitCodeOfStatus(result.status);
    }
  } finally {
    await client.connection.close();
  }
}

const integer = (value: string) => Number(value);

function exportCommand(program: Command, target: ExportTarget, description: string): Command {
  return program
    .command(target)
    .description(description)
    .requiredOption('--filters <file>', 'JSON file of the search filters (local path or s3://)')
    .requiredOption('--output <location>', 'output prefix: s3://bucket/prefix/ or a local folder')
    .option('--size <n>', 'stop after this many records', integer)
    .option('--exclude <file>', 'ids to leave out, one per line (local path or s3://)')
    .option('--dry-run', 'count and slice the search, print the plan (slices, pages, calls); fetch no page')
    .option('--job-name <name>', `job name (default: ${target}); part of the run id`)
    .option('--run-key <key>', 'run key (default: a hash of the search and options); same key, same run')
    .option('--split-by <fields>', 'filters the planner may split on, in order (default: all suitable)')
    .option('--no-cursor', "do not use the service's cursor mode: slices that cannot be split are truncated")
    .option('--offset-cap <n>', "deepest offset the service's paging reaches (default 60000)", integer)
    .option('--window <n>', 'API calls in flight', integer)
    .option('--no-wait', 'print the run id and return instead of following the run')
    .option('--json', 'print the summary as JSON', false);
}

export function registerExportCommands(program: Command): void {
  exportCommand(
    program,
    'prospects',
    'Export every prospect matching filters (spec 2.7) to Parquet, past the 60,000 offset cap',
  )
    .option('--with-posts', "also fetch each exported prospect's network posts into prospect_posts")
    .action(async (flags: ExportFlags) => runExport('prospects', flags));
  exportCommand(
    program,
    'businesses',
    'Export every business matching fetch filters to Parquet, past the 60,000 offset cap',
  ).action(async (flags: ExportFlags) => runExport('businesses', flags));
}
