// The run key: a short hash of everything that decides a run's output — the job spec and the input
// file's identity (size and modification time, or S3 ETag) — so starting the same run twice finds
// the first one instead of doing the work again, while a changed input file starts a new run.
import { createHash } from 'node:crypto';
import type { ObjectInfo } from '../storage/object-store.js';
import type { JobSpec } from './job-spec.js';

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

export function computeRunKey(spec: JobSpec, input: ObjectInfo): string {
  const identity = {
    input: spec.input,
    size: input.size,
    modified: input.lastModified.toISOString(),
    datasets: [...spec.datasets].sort(),
    parameters: spec.parameters ?? {},
    output: spec.output,
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(identity)))
    .digest('hex')
    .slice(0, 12);
}

export function runIdOf(jobName: string, runKey: string): string {
  return `${jobName}-${runKey}`;
}
