// Runs the Temporal CLI's dev server (real server, SQLite persistence, Web UI) for local use and tests.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.js';
import { startProcess, waitUntilReady, type ManagedProcess } from './process.js';
import { resolveTool } from './tools.js';

const execFileAsync = promisify(execFile);

export interface TemporalDevServerOptions {
  /** Folder for the SQLite file and the log; created if missing. */
  dataDir: string;
  host?: string;
  /** gRPC frontend port; a free one when omitted. */
  port?: number;
  /** Web UI port; a free one when omitted; ignored when `headless`. */
  uiPort?: number;
  headless?: boolean;
  namespace?: string;
  /** How long to wait for `temporal operator cluster health` to answer SERVING; default 60 s. */
  readyTimeoutMs?: number;
  /** Keep state in memory only (benchmarks); by default it persists to a SQLite file in `dataDir`. */
  inMemory?: boolean;
  /** Extra `--dynamic-config-value KEY=VALUE` settings. */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** Extra `--sqlite-pragma NAME=VALUE` settings for the persistent store. */
  sqlitePragmas?: Record<string, string>;
}

export interface TemporalDevServer {
  /** `host:port` of the gRPC frontend, as clients and workers take it. */
  address: string;
  namespace: string;
  uiUrl: string | undefined;
  process: ManagedProcess;
  stop(graceMs?: number): Promise<void>;
}

export async function isTemporalServing(binary: string, address: string): Promise<boolean> {
  try {
    const { stdout } = await execFileAsync(binary, ['operator', 'cluster', 'health', '--address', address], {
      timeout: 5_000,
    });
    return stdout.includes('SERVING');
  } catch {
    return false;
  }
}

/**
 * Defaults that make the dev server keep up with hundreds of activities a second: SQLite in WAL mode
 * with `synchronous=normal` (crash-safe; a power cut may lose the last transactions, which is fine for
 * a local server), and one task-queue partition, since a single node gains nothing from more. Measured
 * here: 22 activities/s with the stock settings, 74/s with these (`bench/results/enrich.md`).
 */
const DEV_SQLITE_PRAGMAS = { journal_mode: 'wal', synchronous: 'normal' };
const DEV_DYNAMIC_CONFIG = {
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
};

export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const binary = resolveTool('temporal');
  const host = options.host ?? '127.0.0.1';
  const namespace = options.namespace ?? 'default';
  const port = options.port ?? (await freePort(host));
  mkdirSync(options.dataDir, { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    host,
    '--port',
    String(port),
    ...(options.inMemory ? [] : ['--db-filename', path.join(options.dataDir, 'temporal.sqlite')]),
    ...Object.entries(options.inMemory ? {} : (options.sqlitePragmas ?? DEV_SQLITE_PRAGMAS)).flatMap(
      ([name, value]) => ['--sqlite-pragma', `${name}=${value}`],
    ),
    ...Object.entries({ ...DEV_DYNAMIC_CONFIG, ...options.dynamicConfig }).flatMap(([key, value]) => [
      '--dynamic-config-value',
      `${key}=${JSON.stringify(value)}`,
    ]),
    '--namespace',
    namespace,
    '--log-level',
    'warn',
  ];
  let uiUrl: string | undefined;
  if (options.headless) {
    args.push('--headless');
  } else {
    const uiPort = options.uiPort ?? (await freePort(host));
    args.push('--ui-port', String(uiPort));
    uiUrl = `http://${host}:${uiPort}`;
  }
  const proc = startProcess({
    name: 'temporal',
    command: binary,
    args,
    logFile: path.join(options.dataDir, 'temporal.log'),
  });
  const address = `${host}:${port}`;
  await waitUntilReady(proc, () => isTemporalServing(binary, address), options.readyTimeoutMs ?? 60_000);
  return { address, namespace, uiUrl, process: proc, stop: (graceMs?: number) => proc.stop(graceMs) };
}
