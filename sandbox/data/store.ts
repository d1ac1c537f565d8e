// The sandbox's database: one DuckDB file under the data directory, generated from a seed on first use
// and reused while its meta table names the same seed, sizes and generator version. Opening it also
// builds the small in-memory indexes the hot paths need (business id → row index).
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { silentLogger, type Logger } from '../../lib/logger.js';
import { GENERATOR_VERSION, generateDatabase, type GenerationOptions } from './generate.js';

export const DATABASE_FILE = 'sandbox.duckdb';

/** Thrown when the database file cannot be used or made. */
export class SandboxDataError extends Error {
  override readonly name = 'SandboxDataError';
  readonly code = 'SANDBOX_DATA';
}

export interface OpenStoreOptions {
  dataDir: string;
  seed: string | number;
  businesses: number;
  prospects: number;
  logger?: Logger;
  /** Runs on a fresh database after the generator, before it is put in place (e.g. event history). */
  afterGenerate?: (connection: DuckDBConnection) => Promise<void>;
  /**
   * DuckDB `memory_limit` while serving; default 64MB, so the buffer pool stays small beside the heap
   * (at 32MB concurrent prospect fetches ran out of memory).
   */
  memoryLimit?: string;
  /** DuckDB worker threads; default 2. */
  threads?: number;
  /** Connections in the query pool; default 4. */
  connections?: number;
  worker?: GenerationOptions['worker'];
}

export interface StoreMeta {
  seed: string;
  businesses: number;
  prospects: number;
  generatorVersion: string;
  dataAsOf: string;
  /** Whether this open generated the file (false: an existing file was reused). */
  generated: boolean;
}

type Row = Record<string, DuckDBValue>;

/** A small pool: DuckDB runs one query at a time per connection, so concurrent requests take turns. */
class ConnectionPool {
  private readonly idle: DuckDBConnection[];
  private readonly waiting: ((connection: DuckDBConnection) => void)[] = [];

  constructor(private readonly all: DuckDBConnection[]) {
    this.idle = [...all];
  }

  async use<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const connection =
      this.idle.pop() ?? (await new Promise<DuckDBConnection>((resolve) => this.waiting.push(resolve)));
    try {
      return await work(connection);
    } finally {
      const next = this.waiting.shift();
      if (next) next(connection);
      else this.idle.push(connection);
    }
  }

  close(): void {
    for (const connection of this.all) connection.closeSync();
  }
}

async function readMeta(connection: DuckDBConnection): Promise<Record<string, string> | null> {
  try {
    const reader = await connection.runAndReadAll('SELECT key, value FROM meta');
    return Object.fromEntries(reader.getRows().map(([key, value]) => [String(key), String(value)]));
  } catch {
    return null;
  }
}

function metaMatches(meta: Record<string, string> | null, options: OpenStoreOptions): boolean {
  return (
    meta !== null &&
    meta.seed === String(options.seed) &&
    meta.businesses === String(options.businesses) &&
    meta.prospects === String(options.prospects) &&
    meta.generator_version === GENERATOR_VERSION
  );
}

function removeDatabase(path: string): void {
  rmSync(path, { force: true });
  rmSync(`${path}.wal`, { force: true });
}

export class SandboxStore {
  /** Business ids by row index (`bix`), and the reverse. */
  readonly businessIds: readonly string[];
  private readonly bixById: Map<string, number>;

  private constructor(
    readonly instance: DuckDBInstance,
    private readonly pool: ConnectionPool,
    readonly path: string,
    readonly meta: StoreMeta,
    businessIds: string[],
  ) {
    this.businessIds = businessIds;
    this.bixById = new Map(businessIds.map((id, bix) => [id, bix]));
  }

  /** Opens the database of the data directory, generating it first when it is missing or stale. */
  static async open(options: OpenStoreOptions): Promise<SandboxStore> {
    const logger = options.logger ?? silentLogger;
    mkdirSync(options.dataDir, { recursive: true });
    const path = join(options.dataDir, DATABASE_FILE);
    const config = {
      threads: String(options.threads ?? 2),
      memory_limit: options.memoryLimit ?? '64MB',
      // Memory a query freed goes back to the system once the process holds more than this.
      allocator_flush_threshold: '16MB',
    };
    let generated = false;
    if (existsSync(path)) {
      const probe = await DuckDBInstance.create(path, config);
      const connection = await probe.connect();
      const meta = await readMeta(connection);
      connection.closeSync();
      probe.closeSync();
      if (!metaMatches(meta, options)) {
        logger.info(
          {
            path,
            found: meta,
            wanted: {
              seed: String(options.seed),
              businesses: options.businesses,
              prospects: options.prospects,
            },
          },
          'sandbox data: file is for other settings; regenerating',
        );
        removeDatabase(path);
      }
    }
    if (!existsSync(path)) {
      await SandboxStore.generateFile(path, options, config, logger);
      generated = true;
    }
    const instance = await DuckDBInstance.create(path, config);
    const connections: DuckDBConnection[] = [];
    for (let i = 0; i < (options.connections ?? 4); i += 1) connections.push(await instance.connect());
    const first = connections[0] as DuckDBConnection;
    // Long IN lists (a page of prospect rows) filter the scan directly; turned into joins they read every
    // record of the table.
    await first.run("SET disabled_optimizers = 'in_clause'");
    const meta = await readMeta(first);
    if (!metaMatches(meta, options) || !meta) {
      throw new SandboxDataError(`database ${path} does not hold the requested data after generation`);
    }
    const ids =
      (await first.runAndReadAll('SELECT business_id FROM businesses ORDER BY bix')).getColumns()[0] ?? [];
    return new SandboxStore(
      instance,
      new ConnectionPool(connections),
      path,
      {
        seed: meta.seed ?? '',
        businesses: Number(meta.businesses),
        prospects: Number(meta.prospects),
        generatorVersion: meta.generator_version ?? '',
        dataAsOf: meta.data_as_of ?? '',
        generated,
      },
      ids.map(String),
    );
  }

  /** Generates into a side file and moves it in place when complete, so a crash never leaves a half file. */
  private static async generateFile(
    path: string,
    options: OpenStoreOptions,
    config: Record<string, string>,
    logger: Logger,
  ): Promise<void> {
    const partial = `${path}.partial`;
    removeDatabase(partial);
    logger.info(
      { seed: String(options.seed), businesses: options.businesses, prospects: options.prospects },
      'sandbox data: generating',
    );
    // Generation appends a lot in one transaction; it gets more memory than serving needs.
    const instance = await DuckDBInstance.create(partial, { ...config, memory_limit: '2GB' });
    const connection = await instance.connect();
    try {
      await generateDatabase(connection, {
        seed: options.seed,
        businesses: options.businesses,
        prospects: options.prospects,
        logger,
        ...(options.worker ? { worker: options.worker } : {}),
      });
      if (options.afterGenerate) await options.afterGenerate(connection);
      await connection.run('CHECKPOINT');
    } catch (error) {
      connection.closeSync();
      instance.closeSync();
      removeDatabase(partial);
      throw error;
    }
    connection.closeSync();
    instance.closeSync();
    rmSync(`${partial}.wal`, { force: true });
    renameSync(partial, path);
  }

  bixOf(businessId: string): number | undefined {
    return this.bixById.get(businessId);
  }

  /** Runs a query on a pooled connection and returns its rows as objects (JS values). */
  async query(sql: string, values?: Record<string, DuckDBValue>): Promise<Row[]> {
    return this.pool.use(async (connection) => {
      const reader = await connection.runAndReadAll(sql, values);
      return reader.getRowObjects();
    });
  }

  /** Runs work with a pooled connection (for streaming reads). */
  withConnection<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    return this.pool.use(work);
  }

  close(): void {
    this.pool.close();
    this.instance.closeSync();
  }
}
