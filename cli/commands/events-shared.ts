// What the enrollments, webhooks and events commands share: a Data Service client from the
// configuration (with a per-command tenant), bounded retries of rate-limited or failed calls, and the
// business ids a command takes from arguments, a run's `matches` table, or a Parquet location.
import { WorkflowNotFoundError } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataServiceClient, DataServiceError, RateLimitedError } from '../../client/index.js';
import { loadConfig, type EnrichflowConfig } from '../../config/index.js';
import { BusinessIdSourceError, readBusinessIds } from '../../storage/business-ids.js';
import { EnrollmentInputError, normaliseBusinessIds } from '../../events/enrollment-plan.js';
import { TimeBoundError } from '../../pipeline/time-bounds.js';
import { storeResolverFor } from '../../workers/worker.js';
import { connectClient } from '../../workers/temporal-connection.js';
import type { RunSummary } from '../../pipeline/run-types.js';
import { UsageError } from '../errors.js';

export interface ServiceFlags {
  tenant?: string;
}

/** The configuration with the API key required, and a client of the service for `tenant` (flag, else config). */
export function serviceClient(flags: ServiceFlags): {
  config: EnrichflowConfig;
  client: DataServiceClient;
  tenant: string | null;
} {
  const config = loadConfig({ require: ['ENRICHFLOW_API_KEY'] });
  const tenant = flags.tenant ?? config.dataService.tenant;
  const client = new DataServiceClient({
    baseUrl: config.dataService.baseUrl,
    apiKey: config.dataService.apiKey ?? '',
    ...(tenant ? { tenant } : {}),
    headersTimeoutMs: config.dataService.timeoutMs,
    bodyTimeoutMs: config.dataService.timeoutMs,
  });
  return { config, client, tenant: tenant ?? null };
}

/** Runs a call, waiting out 429s (their Retry-After) and retrying 5xx/timeouts a few times with backoff. */
export async function withRetries<T>(what: string, call: () => Promise<T>, attempts = 6): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof DataServiceError) || !error.retryable || attempt >= attempts) throw error;
      const waitMs =
        error instanceof RateLimitedError && error.retryAfterMs !== undefined
          ? error.retryAfterMs
          : Math.min(30_000, 500 * 2 ** attempt);
      process.stderr.write(`${what}: ${error.message}; retrying in ${Math.ceil(waitMs / 1000)} s\n`);
      await sleep(waitMs);
    }
  }
}

/** Turns input problems of the events modules into usage errors (message only, exit code 2). */
export function asUsageError(error: unknown): unknown {
  if (
    error instanceof EnrollmentInputError ||
    error instanceof TimeBoundError ||
    error instanceof BusinessIdSourceError ||
    (error instanceof Error &&
      (error.name === 'InvalidLocationError' || error.name === 'WebhookSecretFileError'))
  ) {
    return new UsageError(error.message);
  }
  if (
    error instanceof DataServiceError &&
    (error.name === 'ValidationError' || error.name === 'NotFoundError')
  ) {
    return new UsageError(`the Data Service refused the request: ${error.message}`);
  }
  return error;
}

export interface IdSourceFlags {
  businessIds?: string[];
  fromRun?: string;
  fromParquet?: string;
}

/** Comma- or space-separated ids; repeatable flag. */
export const collectIds = (value: string, previous: string[] = []) => [
  ...previous,
  ...value.split(/[\s,]+/).filter(Boolean),
];

/** Where a finished run keeps its `matches` table. */
export async function matchesLocationOfRun(config: EnrichflowConfig, runId: string): Promise<string> {
  const temporal = await connectClient(config.temporal);
  try {
    const handle = temporal.workflow.getHandle(runId);
    const description = await handle.describe();
    if (description.status.name !== 'COMPLETED')
      throw new UsageError(
        `run ${runId} is ${description.status.name.toLowerCase()}; it has no matches table yet`,
      );
    const summary = (await handle.result()) as Partial<RunSummary>;
    if (!summary.outputPrefix || !summary.tables?.some((t) => t.table === 'matches'))
      throw new UsageError(`run ${runId} has no matches table (is it an enrichment run?)`);
    return `${summary.outputPrefix}matches/`;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError)
      throw new UsageError(`no run with id "${runId}" (see: enrichflow runs list)`);
    throw error;
  } finally {
    await temporal.connection.close();
  }
}

/** Checks that exactly one id source is given. */
export function oneIdSource(flags: IdSourceFlags, required: boolean): void {
  const given = [flags.businessIds?.length ? 1 : 0, flags.fromRun ? 1 : 0, flags.fromParquet ? 1 : 0].reduce(
    (a, b) => a + b,
    0,
  );
  if (given > 1)
    throw new UsageError('give business ids with only one of --business-ids, --from-run, --from-parquet');
  if (required && given === 0)
    throw new UsageError(
      'give business ids with --business-ids, --from-run <run id> or --from-parquet <location>',
    );
}

/** The ids themselves, read here (enrollment commands). */
export async function resolveBusinessIds(config: EnrichflowConfig, flags: IdSourceFlags): Promise<string[]> {
  oneIdSource(flags, true);
  let raw: string[];
  if (flags.businessIds?.length) raw = flags.businessIds;
  else {
    const location = flags.fromRun
      ? await matchesLocationOfRun(config, flags.fromRun)
      : (flags.fromParquet as string);
    raw = await readBusinessIds(storeResolverFor(config), location, {
      ...(config.workDir ? { workDir: config.workDir } : {}),
    });
  }
  const ids = normaliseBusinessIds(raw);
  if (ids.length === 0) throw new UsageError('no business ids to use (the source holds none)');
  return ids;
}
