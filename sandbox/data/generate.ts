// Fills a DuckDB database with the world of one seed: businesses, their hierarchy and bulk-dataset
// records, prospects with their posts and contact information, then the meta table that says which seed and sizes it holds.
// Two producers (worker threads for large worlds) generate batches while the main thread only appends,
// in index order, so the file's row order is the stable order of fetches.
import { Worker } from 'node:worker_threads';
import type { DuckDBConnection } from '@duckdb/node-api';
import { BULK_DATASETS, type BulkDataset } from '../../contract/datasets.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import {
  appendBusinessBatch,
  BUSINESS_TABLE_COLUMNS,
  businessBatches,
  type BusinessAppenders,
  type BusinessBatch,
} from './business-batches.js';
import { DATA_AS_OF, generateBusinessRows } from './businesses.js';
import type { GenerationRole, GenerationWorkerData, GenerationWorkerMessage } from './generation-worker.js';
import { TITLES } from './people.js';
import { REGION_LIST } from './places.js';
import {
  appendProspectBatch,
  PROSPECT_COLUMNS,
  type ProspectAppenders,
  PROSPECT_TABLE_COLUMNS,
  prospectBatches,
  type ProspectBatch,
} from './prospect-batches.js';

/** Bumped whenever generated content changes, so files made by an older generator are rebuilt. */
export const GENERATOR_VERSION = '7';

export interface GenerationOptions {
  seed: string | number;
  businesses: number;
  prospects: number;
  logger?: Logger;
  /** Generate in worker threads: `auto` (default) does for 100,000 prospects or more. */
  worker?: 'auto' | 'always' | 'never';
}

const PROSPECT_BATCH_SIZE = 10_000;
const BUSINESS_BATCH_SIZE = 5_000;
/**
 * Appenders buffer rows until flushed; each flush writes compressed row groups. Flushing every small
 * batch costs about twice the CPU, never flushing holds the world in memory (and spills): these
 * intervals (in prospects and in businesses) keep both in check.
 */
const PROSPECT_FLUSH_ROWS = 100_000;
const BUSINESS_FLUSH_ROWS = 40_000;

/** Batches from a worker thread running `role`, with credit-based flow control. */
function fromWorker<T>(data: GenerationWorkerData): AsyncIterable<T> {
  const here = import.meta.url;
  // Compiled code starts the worker file directly; from TypeScript sources (tsx, vitest) a small
  // bootstrap registers the tsx loader in the worker first.
  const worker = here.endsWith('.ts')
    ? new Worker(
        `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL('./generation-worker.ts', here).href)}); });`,
        { eval: true, workerData: data },
      )
    : new Worker(new URL('./generation-worker.js', here), { workerData: data });
  const queue: GenerationWorkerMessage[] = [];
  const state: { failure: Error | null; wake: (() => void) | null } = { failure: null, wake: null };
  worker.on('message', (message: GenerationWorkerMessage) => {
    queue.push(message);
    state.wake?.();
  });
  worker.on('error', (error) => {
    state.failure = error;
    state.wake?.();
  });
  worker.on('exit', (code) => {
    if (code !== 0) state.failure ??= new Error(`generation worker (${data.role}) exited with code ${code}`);
    state.wake?.();
  });
  return (async function* batches() {
    try {
      for (;;) {
        const message = queue.shift();
        if (!message) {
          if (state.failure) throw state.failure;
          await new Promise<void>((resolve) => (state.wake = resolve));
          continue;
        }
        if (message.type === 'error')
          throw new Error(`generation worker (${data.role}) failed: ${message.message}`);
        if (message.type === 'done') return;
        worker.postMessage('more');
        yield message.batch as T;
      }
    } finally {
      await worker.terminate();
    }
  })();
}

function source<T>(
  role: GenerationRole,
  options: GenerationOptions,
  batchSize: number,
  inline: () => Iterable<T>,
): AsyncIterable<T> | Iterable<T> {
  const useWorker =
    options.worker === 'always' || (options.worker !== 'never' && options.prospects >= 100_000);
  if (!useWorker) return { [Symbol.iterator]: () => inline()[Symbol.iterator]() };
  return fromWorker<T>({
    role,
    seed: options.seed,
    businesses: options.businesses,
    prospects: options.prospects,
    batchSize,
    inFlight: 4,
  });
}

export interface GenerationSummary {
  businesses: number;
  prospects: number;
  datasetRows: Record<BulkDataset, number>;
  hierarchies: number;
  prospectPosts: number;
  prospectContacts: number;
  millis: number;
}

export function datasetTable(dataset: BulkDataset): string {
  return `dataset_${dataset}`;
}

const SCHEMA_SQL = [
  `CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)`,
  `CREATE TABLE businesses (${BUSINESS_TABLE_COLUMNS.map(([name, type]) => `${name} ${type}`).join(', ')})`,
  ...BULK_DATASETS.map(
    (dataset) =>
      `CREATE TABLE ${datasetTable(dataset)} (bix INTEGER NOT NULL, business_id VARCHAR NOT NULL, json VARCHAR NOT NULL)`,
  ),
  `CREATE TABLE hierarchies (bix INTEGER NOT NULL, business_id VARCHAR NOT NULL, json VARCHAR NOT NULL)`,
  `CREATE TABLE prospects (${PROSPECT_TABLE_COLUMNS.map(([name, type]) => `${name} ${type}`).join(', ')})`,
  `CREATE TABLE prospect_titles (title_id SMALLINT NOT NULL, title VARCHAR NOT NULL, family VARCHAR NOT NULL,
    levels VARCHAR[] NOT NULL, departments VARCHAR[] NOT NULL)`,
  `CREATE TABLE regions (region_id SMALLINT NOT NULL, country_code VARCHAR NOT NULL, country_name VARCHAR NOT NULL,
    region_iso VARCHAR NOT NULL, region_name VARCHAR NOT NULL)`,
  `CREATE TABLE prospect_posts (pix INTEGER NOT NULL, prospect_id VARCHAR NOT NULL, json VARCHAR NOT NULL)`,
  `CREATE TABLE prospect_contacts (pix INTEGER NOT NULL, prospect_id VARCHAR NOT NULL, json VARCHAR NOT NULL)`,
];

/** The catalogues behind prospects' numeric columns, so the table reads in SQL too. */
async function writeDimensions(connection: DuckDBConnection): Promise<void> {
  for (const [id, title] of TITLES.entries()) {
    await connection.run(
      "INSERT INTO prospect_titles VALUES ($id, $title, $family, string_split($levels, '|'), string_split($departments, '|'))",
      {
        id,
        title: title.title,
        family: title.family,
        levels: [title.level, ...(title.alsoLevels ?? [])].join('|'),
        departments: [title.department, ...(title.alsoDepartments ?? [])].join('|'),
      },
    );
  }
  for (const entry of REGION_LIST) {
    await connection.run('INSERT INTO regions VALUES ($id, $cc, $country, $iso, $region)', {
      id: entry.id,
      cc: entry.country.code,
      country: entry.country.name,
      iso: entry.iso,
      region: entry.region.name,
    });
  }
}

/** Creates the tables and fills them. The connection's database must be empty. */
export async function generateDatabase(
  connection: DuckDBConnection,
  options: GenerationOptions,
): Promise<GenerationSummary> {
  const logger = options.logger ?? silentLogger;
  const started = Date.now();
  // Both producers start first thing, so their generation overlaps with each other and with appending.
  const businessSource = source<BusinessBatch>('businesses', options, BUSINESS_BATCH_SIZE, () =>
    businessBatches(options.seed, options.businesses, BUSINESS_BATCH_SIZE),
  );
  const prospectSource = source<ProspectBatch>('prospects', options, PROSPECT_BATCH_SIZE, () =>
    prospectBatches(
      options.seed,
      generateBusinessRows(options.seed, options.businesses, true),
      options.prospects,
      PROSPECT_BATCH_SIZE,
    ),
  );
  for (const sql of SCHEMA_SQL) await connection.run(sql);
  await writeDimensions(connection);

  const datasetRows = Object.fromEntries(BULK_DATASETS.map((dataset) => [dataset, 0])) as Record<
    BulkDataset,
    number
  >;
  let hierarchies = 0;
  let businesses = 0;
  const appendBusinesses = async () => {
    const appenders: BusinessAppenders = {
      businesses: await connection.createAppender('businesses'),
      hierarchies: await connection.createAppender('hierarchies'),
      datasets: Object.fromEntries(
        await Promise.all(
          BULK_DATASETS.map(async (dataset) => [
            dataset,
            await connection.createAppender(datasetTable(dataset)),
          ]),
        ),
      ) as BusinessAppenders['datasets'],
    };
    for await (const batch of businessSource as AsyncIterable<BusinessBatch>) {
      const added = appendBusinessBatch(appenders, batch);
      hierarchies += added.hierarchies;
      for (const dataset of BULK_DATASETS) datasetRows[dataset] += added.datasets[dataset];
      businesses += batch.businesses.length / BUSINESS_TABLE_COLUMNS.length;
      if (businesses % BUSINESS_FLUSH_ROWS < BUSINESS_BATCH_SIZE) {
        appenders.businesses.flushSync();
        appenders.hierarchies.flushSync();
        for (const appender of Object.values(appenders.datasets)) appender.flushSync();
      }
    }
    appenders.businesses.closeSync();
    appenders.hierarchies.closeSync();
    for (const appender of Object.values(appenders.datasets)) appender.closeSync();
    logger.info(
      { businesses, datasetRows, hierarchies, ms: Date.now() - started },
      'sandbox data: businesses generated',
    );
  };

  let prospectPosts = 0;
  let prospectContacts = 0;
  const appendProspects = async () => {
    const appenders: ProspectAppenders = {
      prospects: await connection.createAppender('prospects'),
      posts: await connection.createAppender('prospect_posts'),
      contacts: await connection.createAppender('prospect_contacts'),
    };
    const all = [appenders.prospects, appenders.posts, appenders.contacts];
    let appended = 0;
    for await (const batch of prospectSource as AsyncIterable<ProspectBatch>) {
      const added = appendProspectBatch(appenders, batch);
      prospectPosts += added.posts;
      prospectContacts += added.contacts;
      appended += batch.prospects.length / PROSPECT_COLUMNS;
      if (appended % PROSPECT_FLUSH_ROWS < PROSPECT_BATCH_SIZE) {
        for (const appender of all) appender.flushSync();
        logger.info({ prospects: appended, ms: Date.now() - started }, 'sandbox data: prospects');
      }
    }
    for (const appender of all) appender.closeSync();
  };
  // One JS thread appends both streams, taking whichever batch arrives next.
  await Promise.all([appendBusinesses(), appendProspects()]);
  // A fetch reads the page's records by key: with this index DuckDB looks the rows up (an index scan
  // for IN lists up to `index_scan_max_count` keys) instead of scanning the row groups they span.
  await connection.run('CREATE UNIQUE INDEX prospects_pix ON prospects (pix)');

  const meta: Record<string, string> = {
    seed: String(options.seed),
    businesses: String(options.businesses),
    prospects: String(options.prospects),
    generator_version: GENERATOR_VERSION,
    data_as_of: DATA_AS_OF,
  };
  for (const [name, value] of Object.entries(meta)) {
    await connection.run('INSERT INTO meta VALUES ($name, $value)', { name, value });
  }
  const millis = Date.now() - started;
  logger.info(
    { millis, prospects: options.prospects, prospectPosts, prospectContacts },
    'sandbox data: generation finished',
  );
  return {
    businesses,
    prospects: options.prospects,
    datasetRows,
    hierarchies,
    prospectPosts,
    prospectContacts,
    millis,
  };
}
