// A job spec: what to enrich, from where, to where. The same shape comes from `enrichflow enrich`
// flags or a YAML/JSON file (`enrichflow run job.yaml`), which schedules also use. Validated once,
// with every problem named by its field.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parse as parseYaml } from 'yaml';
import { BULK_DATASETS } from '../contract/datasets.js';
import {
  EMPLOYER_POSTS_ALIAS,
  isPeopleDataset,
  PEOPLE_DATASETS,
  type EnrichDataset,
  type EnrichRunInput,
} from '../pipeline/run-types.js';

export const ENRICH_DATASETS: readonly EnrichDataset[] = [
  ...BULK_DATASETS,
  'company_hierarchies',
  ...PEOPLE_DATASETS,
];

export { JobSpecError } from '../pipeline/errors.js';
import { JobSpecError } from '../pipeline/errors.js';

const JOB_NAME = '^[a-z0-9][a-z0-9._-]{0,62}$';
const MAX_AGE = '^[0-9]+(s|m|h|d)$';

/** `30d` → milliseconds; the units are seconds, minutes, hours and days. */
export function parseMaxAge(text: string): number {
  const match = /^([0-9]+)(s|m|h|d)$/.exec(text.trim());
  if (!match) throw new RangeError(`max age "${text}": expected a number and a unit, e.g. 30d, 12h, 90m`);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

export const JobSpecSchema = Type.Object(
  {
    job_name: Type.Optional(Type.String({ pattern: JOB_NAME })),
    input: Type.Object(
      {
        location: Type.String({ minLength: 1 }),
        format: Type.Optional(
          Type.Union([Type.Literal('csv'), Type.Literal('jsonl'), Type.Literal('parquet')]),
        ),
        delimiter: Type.Optional(Type.String({ minLength: 1, maxLength: 1 })),
        /** Companies or people; recognised from the columns when omitted. */
        entity: Type.Optional(Type.Union([Type.Literal('businesses'), Type.Literal('prospects')])),
        columns: Type.Optional(
          Type.Object(
            {
              name: Type.Optional(Type.String({ minLength: 1 })),
              domain: Type.Optional(Type.String({ minLength: 1 })),
              url: Type.Optional(Type.String({ minLength: 1 })),
              network_url: Type.Optional(Type.String({ minLength: 1 })),
              business_id: Type.Optional(Type.String({ minLength: 1 })),
              full_name: Type.Optional(Type.String({ minLength: 1 })),
              company_name: Type.Optional(Type.String({ minLength: 1 })),
              email: Type.Optional(Type.String({ minLength: 1 })),
              phone_number: Type.Optional(Type.String({ minLength: 1 })),
              network: Type.Optional(Type.String({ minLength: 1 })),
              prospect_id: Type.Optional(Type.String({ minLength: 1 })),
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    datasets: Type.Array(Type.String(), { minItems: 1 }),
    output: Type.String({ minLength: 1 }),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()))),
    run_key: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' })),
    window_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 256 })),
    /** Stop starting batches once this many calls were made; the run ends "stopped at budget", resumable. */
    max_calls: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Incremental: enrich only ids new to the output's freshness ledger or older than this (`30d`, `12h`). */
    max_age: Type.Optional(Type.String({ pattern: MAX_AGE })),
    /**
     * When `_SUCCESS` is written: `complete` (default) only for a run that completed; `always` also for
     * one completed with failures or stopped at budget, for teams that load partial runs (its body
     * states the status either way).
     */
    success_marker: Type.Optional(Type.Union([Type.Literal('complete'), Type.Literal('always')])),
    api_retry: Type.Optional(
      Type.Object(
        {
          maximum_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
          initial_interval_ms: Type.Optional(Type.Integer({ minimum: 1 })),
          maximum_interval_ms: Type.Optional(Type.Integer({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type JobSpec = Static<typeof JobSpecSchema>;

function fieldName(instancePath: string): string {
  return instancePath.replace(/^\//, '').replaceAll('/', '.') || '(top level)';
}

/** Checks a parsed spec; `source` names the file or "flags" in messages. */
export function validateJobSpec(value: unknown, source: string): JobSpec {
  const problems: string[] = [];
  for (const error of Value.Errors(JobSpecSchema, value)) {
    const where = fieldName(error.instancePath);
    const extra = (error.params as { additionalProperties?: string[] } | undefined)?.additionalProperties;
    problems.push(
      extra
        ? `${where}: unknown field ${extra.map((e) => `"${e}"`).join(', ')}`
        : `${where}: ${error.message}`,
    );
  }
  if (problems.length === 0) {
    const spec = value as JobSpec;
    const people = spec.input.entity === 'prospects' || spec.datasets.some((d) => isPeopleDataset(d));
    spec.datasets.forEach((dataset, i) => {
      if (dataset === 'network_posts' && people) {
        problems.push(
          `datasets[${i}]: "network_posts" is ambiguous in a list of people: say prospect_network_posts for the people's own posts, or ${EMPLOYER_POSTS_ALIAS} for their employers' posts`,
        );
      } else if (dataset === EMPLOYER_POSTS_ALIAS && !people) {
        problems.push(
          `datasets[${i}]: "${EMPLOYER_POSTS_ALIAS}" names the employers' posts of a list of people; for a company list say network_posts`,
        );
      } else if (
        !(ENRICH_DATASETS as readonly string[]).includes(dataset) &&
        dataset !== EMPLOYER_POSTS_ALIAS
      ) {
        problems.push(
          `datasets[${i}]: "${dataset}" is not a dataset; expected one of ${ENRICH_DATASETS.join(', ')} (${EMPLOYER_POSTS_ALIAS} for the employers' posts in a list of people)`,
        );
      }
    });
    const peopleDatasets = spec.datasets.filter(isPeopleDataset);
    if (peopleDatasets.length > 0 && spec.input.entity === 'businesses')
      problems.push(`datasets: ${peopleDatasets.join(', ')} enrich people, but input.entity is businesses`);
    if (new Set(spec.datasets).size !== spec.datasets.length)
      problems.push('datasets: a dataset is listed twice');
    for (const name of Object.keys(spec.parameters ?? {})) {
      if (!spec.datasets.includes(name)) problems.push(`parameters.${name}: not one of the job's datasets`);
    }
  }
  if (problems.length > 0) {
    throw new JobSpecError(
      `${source} is not a valid job spec:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  }
  return value as JobSpec;
}

export function readJobSpecFile(file: string): JobSpec {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new JobSpecError(`${file}: cannot read the job spec (${(error as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new JobSpecError(
      `${file}: not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`,
    );
  }
  const spec = validateJobSpec(parsed, file);
  // Relative local paths in a spec file are relative to the file, so specs can live beside their data.
  const base = path.dirname(path.resolve(file));
  const resolveLocal = (location: string) =>
    /^[a-z][a-z0-9+.-]*:/i.test(location) || path.isAbsolute(location) ? location : path.join(base, location);
  return {
    ...spec,
    input: { ...spec.input, location: resolveLocal(spec.input.location) },
    output: resolveLocal(spec.output),
  };
}

/** The job name of a spec: given, or taken from the input file's name. */
export function jobNameOf(spec: JobSpec): string {
  if (spec.job_name) return spec.job_name;
  const base = path.basename(spec.input.location).replace(/\.[^.]*$/, '');
  const name = base
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 63);
  return name || 'enrich';
}

/** The dataset a name in a spec stands for: the employers' posts alias is the business dataset. */
function datasetOfName(name: string): EnrichDataset {
  return (name === EMPLOYER_POSTS_ALIAS ? 'network_posts' : name) as EnrichDataset;
}

/** The workflow input of a spec, given the run key chosen for it. */
export function toRunInput(spec: JobSpec, runKey: string): EnrichRunInput {
  return {
    jobName: jobNameOf(spec),
    runKey,
    input: {
      location: spec.input.location,
      ...(spec.input.format ? { format: spec.input.format } : {}),
      ...(spec.input.delimiter ? { delimiter: spec.input.delimiter } : {}),
      ...(spec.input.columns ? { columns: spec.input.columns } : {}),
      ...(spec.input.entity ? { entity: spec.input.entity } : {}),
    },
    output: spec.output,
    datasets: spec.datasets.map(datasetOfName),
    ...(spec.parameters
      ? {
          parameters: Object.fromEntries(
            Object.entries(spec.parameters).map(([name, value]) => [datasetOfName(name), value]),
          ),
        }
      : {}),
    ...(spec.window_size ? { windowSize: spec.window_size } : {}),
    ...(spec.max_calls ? { maxCalls: spec.max_calls } : {}),
    ...(spec.max_age ? { maxAgeMs: parseMaxAge(spec.max_age) } : {}),
    ...(spec.success_marker === 'always' ? { successMarker: 'always' as const } : {}),
    ...(spec.api_retry
      ? {
          apiRetry: {
            ...(spec.api_retry.maximum_attempts ? { maximumAttempts: spec.api_retry.maximum_attempts } : {}),
            ...(spec.api_retry.initial_interval_ms
              ? { initialIntervalMs: spec.api_retry.initial_interval_ms }
              : {}),
            ...(spec.api_retry.maximum_interval_ms
              ? { maximumIntervalMs: spec.api_retry.maximum_interval_ms }
              : {}),
          },
        }
      : {}),
  };
}
