// `enrichflow sandbox serve`: runs the local Data Service (generated data, every endpoint of the spec)
// in the foreground until Ctrl-C.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { BULK_DATASETS, type BulkDataset } from '../../contract/datasets.js';
import { PROSPECT_DATASETS, type ProspectDataset } from '../../contract/prospect-datasets.js';
import { compiledValidator } from '../../contract/index.js';
import { FaultConfigSchema, type FaultConfig } from '../../sandbox/http/faults.js';
import { Option, type Command } from 'commander';
import { createLogger } from '../../lib/logger.js';
import { DEFAULT_BUSINESSES, DEFAULT_PROSPECTS, DEFAULT_SEED } from '../../sandbox/app.js';
import { DEV_API_KEY, DEV_API_KEY_NAME, parseApiKeySpec, type ApiKey } from '../../sandbox/http/access.js';
import { DEFAULT_SANDBOX_PORT, startSandbox } from '../../sandbox/serve.js';
import { UsageError } from '../errors.js';
import { waitForShutdownSignal } from '../signals.js';

interface ServeFlags {
  port: string;
  host: string;
  dataDir: string;
  seed: string;
  businesses: string;
  prospects: string;
  apiKey: string[];
  rateLimit: string;
  adminKey?: string;
  eventsPerMinute: string;
  recordCacheMb: string;
  preload: string;
  prospectRecordCacheMb: string;
  preloadProspects: string;
  faults?: string;
  strict?: boolean;
  now?: string;
}

/** `firmographics,technographics` → the datasets named, each checked against `known`. */
function parseDatasets<D extends string>(flag: string, list: string, known: readonly D[], kind: string): D[] {
  const names = list
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  for (const name of names) {
    if (!(known as readonly string[]).includes(name)) {
      throw new UsageError(`${flag}: '${name}' is not a ${kind} (one of ${known.join(', ')})`);
    }
  }
  return names as D[];
}

/** Reads and checks a fault file; the same rules the admin route `PUT /_admin/faults` accepts. */
function readFaults(file: string): FaultConfig {
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--faults ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const validator = compiledValidator(FaultConfigSchema);
  if (!validator.Check(parsed)) {
    const problems = validator.Errors(parsed).map((e) => `${e.instancePath || '/'} ${e.message}`);
    throw new UsageError(`--faults ${file}: ${problems.join('; ')}`);
  }
  return parsed as FaultConfig;
}

function count(flag: string, value: string, minimum: number): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < minimum)
    throw new UsageError(`${flag} must be an integer ≥ ${minimum}, got '${value}'`);
  return number;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** A clock reading `start` now and running at the pace of the real one. */
function runningFrom(start: number): () => number {
  const offset = start - Date.now();
  return () => Date.now() + offset;
}

export function registerSandboxCommand(program: Command): void {
  const sandbox = program.command('sandbox').description('The local Data Service sandbox');
  sandbox
    .command('serve')
    .description(
      'Serve the Data Service API locally over generated data (generated on first start, reused after)',
    )
    .option('--port <n>', 'TCP port (0 = any free port)', String(DEFAULT_SANDBOX_PORT))
    .option('--host <address>', 'interface to listen on', '127.0.0.1')
    .option('--data-dir <dir>', 'folder of the database file', path.join('.data', 'sandbox'))
    .option('--seed <seed>', 'seed of the generated data (same seed, same data)', DEFAULT_SEED)
    .option('--businesses <n>', 'businesses to generate', String(DEFAULT_BUSINESSES))
    .option('--prospects <n>', 'prospects to generate', String(DEFAULT_PROSPECTS))
    .option(
      '--api-key <key>',
      `accepted API key, 'name:key' or just 'key'; repeatable (default: ${DEV_API_KEY})`,
      collect,
      [] as string[],
    )
    .option('--rate-limit <n>', 'requests per minute per API key, sliding 60 s window (0 = off)', '200')
    .option('--admin-key <key>', 'key of the /_admin routes (faults, events), header x-admin-key')
    .addOption(
      new Option('--events-per-minute <n>', 'simulated new business events per minute (0 = off)').default(
        '0',
      ),
    )
    .addOption(new Option('--record-cache-mb <n>', 'memory for bulk-dataset records, MiB').default('192'))
    .option(
      '--preload <datasets>',
      'bulk datasets loaded into that memory at start, comma-separated (others load on first use)',
      'firmographics',
    )
    .addOption(
      new Option('--prospect-record-cache-mb <n>', 'memory for prospect bulk-dataset records, MiB').default(
        '128',
      ),
    )
    .option(
      '--preload-prospects <datasets>',
      'prospect bulk datasets loaded into that memory once the match keys are in, comma-separated (others load on first use)',
      'profiles,contacts_information',
    )
    .option('--faults <file>', 'JSON or YAML file of faults active from the start ({ rules: [...], seed })')
    .option('--strict', "accept the spec's names only: no provider aliases, no unknown keys in match items")
    .option(
      '--now <date-time>',
      'start the clock that served dates are relative to at this ISO 8601 time (default: the current time)',
    )
    .action(async (flags: ServeFlags) => {
      const logger = createLogger({ name: 'sandbox' });
      let apiKeys: ApiKey[];
      try {
        apiKeys = flags.apiKey.map((spec, i) => parseApiKeySpec(spec, i));
      } catch (error) {
        throw new UsageError(error instanceof Error ? error.message : String(error));
      }
      if (apiKeys.length === 0) {
        apiKeys = [{ name: DEV_API_KEY_NAME, key: DEV_API_KEY }];
        logger.warn(
          `no --api-key given: accepting the development key '${DEV_API_KEY}' (for local use only)`,
        );
      }
      const fixedNow = flags.now === undefined ? undefined : Date.parse(flags.now);
      if (fixedNow !== undefined && Number.isNaN(fixedNow))
        throw new UsageError(`--now must be an ISO 8601 date-time, got '${flags.now}'`);
      const started = Date.now();
      const running = await startSandbox({
        port: count('--port', flags.port, 0),
        host: flags.host,
        dataDir: path.resolve(flags.dataDir),
        seed: flags.seed,
        businesses: count('--businesses', flags.businesses, 1),
        prospects: count('--prospects', flags.prospects, 0),
        apiKeys,
        rateLimitPerMinute: count('--rate-limit', flags.rateLimit, 0),
        ...(flags.adminKey ? { adminKey: flags.adminKey } : {}),
        events: { emitRatePerMinute: count('--events-per-minute', flags.eventsPerMinute, 0) },
        recordCacheBytes: count('--record-cache-mb', flags.recordCacheMb, 0) * 1024 * 1024,
        preloadDatasets: parseDatasets<BulkDataset>(
          '--preload',
          flags.preload,
          BULK_DATASETS,
          'bulk dataset',
        ),
        prospectRecordCacheBytes:
          count('--prospect-record-cache-mb', flags.prospectRecordCacheMb, 0) * 1024 * 1024,
        preloadProspectDatasets: parseDatasets<ProspectDataset>(
          '--preload-prospects',
          flags.preloadProspects,
          PROSPECT_DATASETS,
          'prospect bulk dataset',
        ),
        ...(flags.faults ? { faults: readFaults(flags.faults) } : {}),
        ...(flags.strict ? { strict: true } : {}),
        // The clock starts at --now and runs, so the rate limit window and live events still move.
        ...(fixedNow !== undefined ? { clock: runningFrom(fixedNow) } : {}),
        logger,
      });
      logger.info(
        { url: running.url, keys: apiKeys.map((k) => k.name), startMs: Date.now() - started },
        `sandbox listening on ${running.url} (OpenAPI: ${running.url}/openapi.json)`,
      );
      process.stdout.write(`${running.url}\n`);
      await waitForShutdownSignal();
      await running.close();
    });
}
