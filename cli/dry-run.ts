// `enrich --dry-run` / `run job.yaml --dry-run`: the plan of a run without making it. The input is read
// by the run's own planner (`planInput`: the same reader, column mapping, normalisation, rejects and
// de-duplication a run does) in a throw-away DuckDB session under the temp folder, and the calls per
// stage follow from the run's own batch sizes. Neither the Data Service nor Temporal is contacted. The
// run's preflight goes first (storage/preflight.ts), so a bad input or output fails with a run's words.
import type { EnrichflowConfig } from '../config/index.js';
import { withDuckDb } from '../storage/duckdb.js';
import { checkRunDatasets, planInput } from '../storage/plan-input.js';
import { BATCH_SIZE, stageBatching } from '../pipeline/run-layout.js';
import { jobNameOf, toRunInput, type JobSpec } from '../jobs/job-spec.js';
import { defaultPriceTable, readPriceTableFile, type PriceTable } from '../jobs/prices.js';
import { openObjectStore } from '../storage/open-store.js';
import { checkRun } from '../storage/preflight.js';
import type { S3ConnectionOptions } from '../storage/s3-store.js';
import { employerDatasets, runEntity, type StageName } from '../pipeline/run-types.js';

export interface DryRunStage {
  stage: StageName;
  /** Ids (or match keys) the stage sends: exact for match and for provided ids, else an upper bound. */
  items: number;
  /** Items per call: 50, or 1 for company_hierarchies. */
  batchSize: number;
  calls: number;
  /** True when `calls` is exact; false when it is an upper bound (ids come from matching). */
  exact: boolean;
  /** Null when no price is known for the stage's operation (the prospect operations by default). */
  creditsPerRecord: number | null;
  /** Upper bound: every item returns a record; null when the stage is unpriced. */
  maxCredits: number | null;
}

export interface DryRunPlan {
  dryRun: true;
  job: string;
  input: string;
  output: string;
  inputRows: number;
  rejectedRows: number;
  /** Distinct match keys, or distinct business (prospect) ids when the input carries them. */
  uniqueKeys: number;
  idsProvided: boolean;
  /** Present for a people list. */
  entity?: 'prospects';
  stages: DryRunStage[];
  /** Calls of every stage; exact when every stage is exact, else an upper bound. */
  maxCalls: number;
  /** Credits of the priced stages; the `unpriced` stages are not in it. */
  maxCredits: number;
  prices: { source: string };
  /** Stages with no known price, when there are any: the credits leave them out. */
  unpriced?: StageName[];
  budget?: { maxCalls: number; fits: boolean };
  maxAge?: string;
  notes: string[];
}

export interface DryRunOptions {
  config: EnrichflowConfig;
  /** `--prices <file>`; else `ENRICHFLOW_PRICE_TABLE`; else the built-in prices. */
  pricesFile?: string;
}

/** The price table a dry run uses, by precedence: the flag, the setting, the defaults. */
export function loadPrices(config: EnrichflowConfig, pricesFile?: string): PriceTable {
  const file = pricesFile ?? config.pricing.tableFile;
  return file ? readPriceTableFile(file) : defaultPriceTable();
}

function s3Options(config: EnrichflowConfig): S3ConnectionOptions {
  return {
    region: config.s3.region,
    forcePathStyle: config.s3.forcePathStyle,
    ...(config.s3.endpoint ? { endpoint: config.s3.endpoint } : {}),
    ...(config.s3.accessKeyId && config.s3.secretAccessKey
      ? { accessKeyId: config.s3.accessKeyId, secretAccessKey: config.s3.secretAccessKey }
      : {}),
  };
}

/** Credits without floating-point noise (0.1 × 120 is 12, not 12.000000000000002). */
const credits = (n: number) => Math.round(n * 1e6) / 1e6;

export async function planDryRun(spec: JobSpec, options: DryRunOptions): Promise<DryRunPlan> {
  const { config } = options;
  // Prices first: a bad price file fails before the input is read.
  const prices = loadPrices(config, options.pricesFile);
  const resolve = (location: string) => openObjectStore(location, { s3: s3Options(config) });
  // The run's own preflight, so a dry run fails with the words a run would; it leaves nothing behind.
  await checkRun({ input: toRunInput(spec, '').input, output: spec.output }, resolve, {
    removeCreatedFolders: true,
    ...(config.workDir ? { tempDir: config.workDir } : {}),
  });
  const source = resolve(spec.input.location);
  // The datasets as the run takes them (the employers' posts alias resolved).
  const datasets = toRunInput(spec, '').datasets;
  const entity = runEntity(spec.input.entity, datasets);
  const planned = await withDuckDb(
    { ...(config.workDir ? { workDir: config.workDir } : {}) },
    (connection, scratch) =>
      planInput(
        connection,
        { store: source.store, key: source.prefix },
        {
          location: spec.input.location,
          ...(spec.input.format ? { format: spec.input.format } : {}),
          ...(spec.input.delimiter ? { delimiter: spec.input.delimiter } : {}),
          ...(spec.input.columns ? { columns: spec.input.columns } : {}),
          ...(entity ? { entity } : {}),
        },
        { tempDir: scratch },
      ),
  );
  checkRunDatasets(spec.input.location, datasets, planned);
  const employers = employerDatasets(datasets, planned.entity);
  const calls = (items: number, batchSize: number) => Math.ceil(items / batchSize);
  const stages: DryRunStage[] = [];
  const priced = (items: number, price: number | null) => ({
    creditsPerRecord: price,
    maxCredits: price === null ? null : credits(items * price),
  });
  if (!planned.idsProvided) {
    const people = planned.entity === 'prospects';
    stages.push({
      stage: people ? 'prospect_match' : 'match',
      items: planned.uniqueKeys,
      batchSize: BATCH_SIZE,
      calls: calls(planned.uniqueKeys, BATCH_SIZE),
      exact: true,
      ...priced(planned.uniqueKeys, people ? prices.prospectMatch : prices.match),
    });
  }
  // Each match key resolves to at most one id, so the distinct ids are at most the distinct keys.
  // An employer dataset has at most one id per person (several people may share one).
  for (const dataset of datasets) {
    const { batchSize } = stageBatching(dataset);
    const price = prices.datasets[dataset];
    stages.push({
      stage: dataset,
      items: planned.uniqueKeys,
      batchSize,
      calls: calls(planned.uniqueKeys, batchSize),
      exact: planned.idsProvided && !employers.includes(dataset),
      ...priced(planned.uniqueKeys, price),
    });
  }
  const maxCalls = stages.reduce((sum, s) => sum + s.calls, 0);
  const maxCredits = credits(stages.reduce((sum, s) => sum + (s.maxCredits ?? 0), 0));
  const unpriced = stages.filter((s) => s.creditsPerRecord === null).map((s) => s.stage);
  const notes = [
    'Credits are an upper bound: the service bills only returned records (errors and empty results are not billed); the estimate counts every id as found.',
  ];
  if (unpriced.length > 0) {
    notes.push(
      `No price is known for ${unpriced.join(', ')}: neither the spec nor the provider's documentation gives one for these prospect operations, so the credits above leave them out. Give their prices in a price file (--prices, keys ${unpriced.join(', ')}) to include them.`,
    );
  }
  if (!planned.idsProvided) {
    notes.push(
      `Dataset calls are at most: ids come from matching, and unmatched keys or keys matching the same ${planned.entity === 'prospects' ? 'person' : 'business'} need fewer.`,
    );
  }
  if (employers.length > 0) {
    notes.push(
      `${employers.join(', ')} enrich the people's employers: at most one per person, fewer where people share an employer; their business ids come from ${planned.mapping.fields.business_id ? `the ${planned.mapping.fields.business_id} column, else ` : ''}the profiles.`,
    );
  }
  const budget =
    spec.max_calls !== undefined ? { maxCalls: spec.max_calls, fits: maxCalls <= spec.max_calls } : undefined;
  if (budget && !budget.fits) {
    notes.push(
      `The plan may need up to ${maxCalls} calls, over the budget of ${budget.maxCalls}: the run would stop at budget after ${budget.maxCalls} calls; \`enrichflow runs retry\` resumes it.`,
    );
  }
  if (spec.max_age) {
    notes.push(
      `Incremental run (max_age ${spec.max_age}): ids the output's freshness ledger saw less than ${spec.max_age} ago are skipped, so the run may call less than planned; the dry run does not read the ledger.`,
    );
  }
  return {
    dryRun: true,
    job: jobNameOf(spec),
    input: spec.input.location,
    output: spec.output,
    inputRows: planned.inputRows,
    rejectedRows: planned.rejectedRows,
    uniqueKeys: planned.uniqueKeys,
    idsProvided: planned.idsProvided,
    ...(planned.entity === 'prospects' ? { entity: 'prospects' as const } : {}),
    stages,
    maxCalls,
    maxCredits,
    prices: { source: prices.source },
    ...(unpriced.length > 0 ? { unpriced } : {}),
    ...(budget ? { budget } : {}),
    ...(spec.max_age ? { maxAge: spec.max_age } : {}),
    notes,
  };
}

const fmt = (n: number) => (Number.isInteger(n) ? n.toLocaleString('en-US') : String(n));

/** The plan as text for a terminal. */
export function formatDryRun(plan: DryRunPlan): string {
  const allExact = plan.stages.every((s) => s.exact);
  const lines = [
    `Dry run of job ${plan.job}: nothing was called, nothing was written.`,
    `  input        ${plan.input}`,
    `  output       ${plan.output}`,
    `  input rows   ${fmt(plan.inputRows)}`,
    `  rejected     ${fmt(plan.rejectedRows)}`,
    plan.idsProvided
      ? `  ${plan.entity === 'prospects' ? 'prospect' : 'business'} ids ${fmt(plan.uniqueKeys)} unique (provided in the input; no match step)`
      : `  match keys   ${fmt(plan.uniqueKeys)} unique`,
    '',
  ];
  const header = ['stage', 'ids', 'per call', 'calls', 'credits/record', 'credits (at most)'];
  const rows = plan.stages.map((s) => [
    s.stage,
    `${s.exact ? '' : '≤ '}${fmt(s.items)}`,
    fmt(s.batchSize),
    `${s.exact ? '' : '≤ '}${fmt(s.calls)}`,
    s.creditsPerRecord === null ? 'no price' : fmt(s.creditsPerRecord),
    s.maxCredits === null ? 'unknown' : fmt(s.maxCredits),
  ]);
  rows.push([
    'total',
    '',
    '',
    `${allExact ? '' : '≤ '}${fmt(plan.maxCalls)}`,
    '',
    `${fmt(plan.maxCredits)}${plan.unpriced ? ' + unpriced' : ''}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    '  ' +
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  lines.push(line(header), ...rows.map(line), '');
  lines.push(`Prices: ${plan.prices.source}.`);
  if (plan.budget) {
    lines.push(
      plan.budget.fits
        ? `Budget: max_calls ${fmt(plan.budget.maxCalls)}; the plan fits (at most ${fmt(plan.maxCalls)} calls).`
        : `Budget: max_calls ${fmt(plan.budget.maxCalls)}; the plan does NOT fit (up to ${fmt(plan.maxCalls)} calls).`,
    );
  }
  for (const note of plan.notes) lines.push(`- ${note}`);
  return lines.join('\n');
}
