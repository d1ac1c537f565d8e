// `enrichflow enrich` (a job from flags) and `enrichflow run job.yaml` (a job from a spec file).
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../config/index.js';
import { readJobSpecFile, validateJobSpec, type JobSpec } from '../../jobs/job-spec.js';
import { connectClient } from '../../workers/temporal-connection.js';
import { formatDryRun, planDryRun } from '../dry-run.js';
import { UsageError } from '../errors.js';
import { exitOnInterrupt, followAndReport, startRun } from '../start-run.js';

interface RunFlags {
  wait: boolean;
  json: boolean;
  dryRun?: boolean;
  prices?: string;
}

interface EnrichFlags extends RunFlags {
  input: string;
  datasets: string;
  output: string;
  jobName?: string;
  parameters?: string;
  map?: string;
  entity?: string;
  format?: string;
  delimiter?: string;
  runKey?: string;
  window?: number;
  maxCalls?: number;
  maxAge?: string;
  successMarker?: string;
}

async function launch(spec: JobSpec, flags: RunFlags): Promise<void> {
  const config = loadConfig();
  if (flags.dryRun) {
    // The plan only: no Temporal connection, no call to the Data Service.
    const plan = await planDryRun(spec, { config, ...(flags.prices ? { pricesFile: flags.prices } : {}) });
    process.stdout.write(flags.json ? `${JSON.stringify(plan, null, 2)}\n` : `${formatDryRun(plan)}\n`);
    return;
  }
  if (flags.prices) throw new UsageError('--prices only applies with --dry-run');
  const client = await connectClient(config.temporal);
  // Ctrl-C from here on exits 130 (a run already started goes on), not with Node's default.
  let known: string | undefined;
  const dispose = flags.wait ? exitOnInterrupt(process.stderr, () => known) : () => undefined;
  try {
    const { runId, started, restartedAfter } = await startRun(client, config, spec);
    known = runId;
    process.stderr.write(
      restartedAfter
        ? `run ${runId} had ${restartedAfter === 'cancelled' || restartedAfter === 'terminated' ? 'been ' : ''}${restartedAfter.replace('_', ' ')}; started it again (a new attempt under the same run id)\n`
        : started
          ? `started run ${runId}\n`
          : `run ${runId} already exists (same job and input); showing it instead of starting it again\n`,
    );
    if (!flags.wait) {
      process.stdout.write(flags.json ? `${JSON.stringify({ runId })}\n` : `${runId}\n`);
      return;
    }
    await followAndReport(client, runId, { json: flags.json, progress: process.stderr, config });
  } finally {
    dispose();
    await client.connection.close();
  }
}

function parseColumnMap(text: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const [field, column] = pair.split('=').map((s) => s.trim());
    if (!field || !column)
      throw new UsageError(
        `--map: expected field=column pairs such as name=Company,domain=Website; got "${pair}"`,
      );
    map[field] = column;
  }
  return map;
}

function readParameters(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--parameters ${file}: cannot read it as JSON (${(error as Error).message})`);
  }
}

const DRY_RUN_FLAG = '--dry-run';
const DRY_RUN_HELP =
  'print the plan (rows, rejects, unique keys, calls and estimated credits per dataset) and stop; calls neither the service nor Temporal';
const PRICES_FLAG = '--prices <file>';
const PRICES_HELP =
  'with --dry-run: YAML/JSON price table, credits per returned record per dataset (default: ENRICHFLOW_PRICE_TABLE, else 1 per record, match free)';

export function registerEnrichCommands(program: Command): void {
  program
    .command('enrich')
    .description('Enrich the companies (or people) of an input file into Parquet tables, one per dataset')
    .requiredOption(
      '--input <location>',
      'input file: s3://bucket/key, a local path or file:// URL (.csv, .jsonl, .parquet)',
    )
    .requiredOption(
      '--datasets <list>',
      "comma-separated datasets, e.g. firmographics,technographics,company_hierarchies. For people: profiles, contacts_information, prospect_network_posts (their posts), plus any company dataset for their employers (business_network_posts for the employers' posts; a bare network_posts is refused there as ambiguous)",
    )
    .requiredOption('--output <location>', 'output prefix: s3://bucket/prefix/ or a local folder')
    .option('--job-name <name>', 'job name (default: the input file name); part of the run id')
    .option(
      '--parameters <file>',
      'JSON file of per-dataset parameters, e.g. {"financial_indicators":{"date":"…"}}',
    )
    .option(
      '--map <pairs>',
      'explicit columns, e.g. name=Company,domain=Website, or for people email=Mail,phone_number=Mobile,full_name=Name,company_name=Employer,network=Profile,prospect_id=Id,business_id=EmployerId (default: recognised by name)',
    )
    .option(
      '--entity <entity>',
      'businesses or prospects (default: recognised from the columns: email, phone, full name, prospect_id mean people)',
    )
    .option('--format <format>', 'csv, jsonl or parquet (default: from the file extension)')
    .option('--delimiter <char>', 'CSV delimiter (default: detected)')
    .option('--run-key <key>', 'run key (default: a hash of the job and the input file); same key, same run')
    .option('--window <n>', 'batch calls in flight per dataset', (v) => Number(v))
    .option(
      '--max-calls <n>',
      'call budget: no new batch starts past it; the run ends "stopped at budget" and `runs retry` resumes it',
      (v) => Number(v),
    )
    .option(
      '--max-age <age>',
      'incremental: skip ids enriched into this output less than this long ago (30d, 12h, 90m)',
    )
    .option(
      '--success-marker <when>',
      'complete (default): _SUCCESS only for a complete run; always: also for a run completed with failures or stopped at budget (its body states the status)',
    )
    .option(DRY_RUN_FLAG, DRY_RUN_HELP)
    .option(PRICES_FLAG, PRICES_HELP)
    .option('--no-wait', 'print the run id and return instead of following the run')
    .option('--json', 'print the summary as JSON', false)
    .action(async (opts: EnrichFlags) => {
      const raw = {
        ...(opts.jobName ? { job_name: opts.jobName } : {}),
        input: {
          location: opts.input,
          ...(opts.format ? { format: opts.format } : {}),
          ...(opts.delimiter ? { delimiter: opts.delimiter } : {}),
          ...(opts.map ? { columns: parseColumnMap(opts.map) } : {}),
          ...(opts.entity ? { entity: opts.entity } : {}),
        },
        datasets: opts.datasets
          .split(',')
          .map((d) => d.trim())
          .filter(Boolean),
        output: opts.output,
        ...(opts.parameters ? { parameters: readParameters(opts.parameters) } : {}),
        ...(opts.runKey ? { run_key: opts.runKey } : {}),
        ...(opts.window !== undefined ? { window_size: opts.window } : {}),
        ...(opts.maxCalls !== undefined ? { max_calls: opts.maxCalls } : {}),
        ...(opts.maxAge !== undefined ? { max_age: opts.maxAge } : {}),
        ...(opts.successMarker !== undefined ? { success_marker: opts.successMarker } : {}),
      };
      await launch(validateJobSpec(raw, 'the command line'), opts);
    });

  program
    .command('run')
    .description('Run the job described by a job spec file (YAML or JSON), as schedules do')
    .argument('<job-file>', 'job spec file')
    .option(DRY_RUN_FLAG, DRY_RUN_HELP)
    .option(PRICES_FLAG, PRICES_HELP)
    .option('--no-wait', 'print the run id and return instead of following the run')
    .option('--json', 'print the summary as JSON', false)
    .action(async (file: string, opts: RunFlags) => {
      await launch(readJobSpecFile(file), opts);
    });
}
