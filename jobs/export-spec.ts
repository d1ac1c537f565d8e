// A search export as the CLI takes it (`enrichflow prospects|businesses --filters …`): checked in full
// before anything is started — filters against the contract, the exclude file line by line, options
// against their limits — and turned into the workflow input, with a run key that makes starting the
// same export twice find the first run.
import { createHash } from 'node:crypto';
import { MAX_FETCH_SIZE, MAX_PROSPECT_PAGE_SIZE } from '../contract/limits.js';
import type { ObjectInfo } from '../storage/object-store.js';
import type { ExportRunInput, ExportTarget } from '../pipeline/export-types.js';
import type { ApiRetryPolicy } from '../pipeline/run-types.js';
import { splitFields, validateExportFilters, type SearchFilters } from '../pipeline/export-filters.js';
import { JobSpecError } from './job-spec.js';
export { parseIdList } from '../pipeline/id-list.js';
import { runIdOf } from './run-key.js';

export interface ExportSpec {
  target: ExportTarget;
  filters: SearchFilters;
  output: string;
  size?: number;
  exclude?: string;
  withPosts?: boolean;
  dryRun?: boolean;
  jobName?: string;
  runKey?: string;
  offsetCap?: number;
  cursor?: boolean;
  splitBy?: string[];
  windowSize?: number;
  maxProbes?: number;
  apiRetry?: ApiRetryPolicy;
  callTimeoutMs?: number;
}

const JOB_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** A filters file: the filter object itself, or `{"filters": {…}}`. */
export function parseFiltersText(target: ExportTarget, text: string, source: string): SearchFilters {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new JobSpecError(`${source}: not valid JSON (${(error as Error).message})`);
  }
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const keys = Object.keys(parsed);
    if (keys.length === 1 && keys[0] === 'filters') parsed = (parsed as { filters: unknown }).filters;
  }
  return validateExportFilters(target, parsed, source);
}

/** Checks the filters and options of an export; throws `JobSpecError` listing every problem. */
export function validateExportSpec(spec: ExportSpec): ExportSpec {
  validateExportFilters(spec.target, spec.filters, 'filters');
  const problems: string[] = [];
  const positive = (name: string, value: number | undefined, max = Number.MAX_SAFE_INTEGER) => {
    if (value !== undefined && (!Number.isInteger(value) || value < 1 || value > max))
      problems.push(`${name}: must be an integer from 1 to ${max}, got ${value}`);
  };
  positive('--size', spec.size);
  positive('--window', spec.windowSize, 512);
  positive('--max-probes', spec.maxProbes, 100_000);
  if (
    spec.offsetCap !== undefined &&
    (!Number.isInteger(spec.offsetCap) ||
      spec.offsetCap < MAX_PROSPECT_PAGE_SIZE ||
      spec.offsetCap > MAX_FETCH_SIZE)
  ) {
    problems.push(
      `--offset-cap: must be an integer from ${MAX_PROSPECT_PAGE_SIZE} to ${MAX_FETCH_SIZE}, got ${spec.offsetCap}`,
    );
  }
  if (spec.withPosts && spec.target !== 'prospects') problems.push('--with-posts: only for prospect exports');
  if (spec.jobName !== undefined && !JOB_NAME.test(spec.jobName))
    problems.push(`--job-name: "${spec.jobName}" must be lower case letters, digits, '.', '_' or '-'`);
  if (spec.runKey !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(spec.runKey))
    problems.push(`--run-key: "${spec.runKey}" must be 1–64 letters, digits, '.', '_' or '-'`);
  const known = splitFields(spec.target);
  for (const field of spec.splitBy ?? []) {
    if (!known.includes(field))
      problems.push(
        `--split-by: "${field}" cannot split a ${spec.target} search; use any of ${known.join(', ')}`,
      );
  }
  if (!spec.output) problems.push('--output: required');
  if (problems.length > 0)
    throw new JobSpecError(`invalid ${spec.target} export:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  return spec;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

/**
 * Everything that decides an export's output, hashed: the search, its options, and the exclude file's
 * identity. The same export started twice gets the same run key, and so finds the first run.
 */
export function exportRunKey(spec: ExportSpec, exclude?: ObjectInfo): string {
  const identity = {
    target: spec.target,
    filters: spec.filters,
    output: spec.output,
    size: spec.size,
    exclude: spec.exclude
      ? { location: spec.exclude, size: exclude?.size, modified: exclude?.lastModified.toISOString() }
      : undefined,
    withPosts: spec.withPosts ?? false,
    offsetCap: spec.offsetCap,
    cursor: spec.cursor ?? true,
    splitBy: spec.splitBy,
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(identity)))
    .digest('hex')
    .slice(0, 12);
}

export function exportJobName(spec: ExportSpec): string {
  return spec.jobName ?? spec.target;
}

/** The workflow input of an export, for the run key chosen for it. */
export function toExportInput(spec: ExportSpec, runKey: string): ExportRunInput {
  const jobName = exportJobName(spec);
  return {
    runId: runIdOf(jobName, runKey),
    jobName,
    runKey,
    target: spec.target,
    filters: spec.filters,
    output: spec.output,
    ...(spec.size !== undefined ? { size: spec.size } : {}),
    ...(spec.exclude ? { exclude: spec.exclude } : {}),
    ...(spec.withPosts ? { withPosts: true } : {}),
    ...(spec.dryRun ? { dryRun: true } : {}),
    ...(spec.offsetCap !== undefined ? { offsetCap: spec.offsetCap } : {}),
    ...(spec.cursor === false ? { cursor: false } : {}),
    ...(spec.splitBy ? { splitBy: spec.splitBy } : {}),
    ...(spec.windowSize !== undefined ? { windowSize: spec.windowSize } : {}),
    ...(spec.maxProbes !== undefined ? { maxProbes: spec.maxProbes } : {}),
    ...(spec.apiRetry ? { apiRetry: spec.apiRetry } : {}),
    ...(spec.callTimeoutMs !== undefined ? { callTimeoutMs: spec.callTimeoutMs } : {}),
  };
}
