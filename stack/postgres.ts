// A throwaway PostgreSQL cluster for tests: `initdb` into a folder, `pg_ctl start` on a free port bound
// to loopback, `pg_ctl stop` and the folder removed at the end. PostgreSQL refuses to run as root, so
// when this process is root the cluster belongs to an unprivileged account (`nobody` by default) and
// every PostgreSQL command runs as that account through `setpriv`.
import { execFile } from 'node:child_process';
import { accessSync, chmodSync, chownSync, constants, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, isPortOpen } from './ports.js';

const execFileAsync = promisify(execFile);

/** Thrown when no PostgreSQL server binaries are found. */
export class PostgresNotFoundError extends Error {
  override readonly name = 'PostgresNotFoundError';
  readonly code = 'POSTGRES_NOT_FOUND';
}

export interface PostgresOptions {
  /**
   * Folder for the cluster, its socket and its log, removed by `destroy()`. When root, every folder above
   * it must be open to the account that runs PostgreSQL: a folder straight under the temp dir does.
   */
  dir: string;
  /** Superuser created by initdb, with `password`; default `temporal` / `temporal` (as docker-compose.yml). */
  user?: string;
  password?: string;
  port?: number;
  /** Account that owns and runs the cluster when this process is root; default `nobody`. */
  runAs?: string;
}

export interface PostgresCluster {
  host: string;
  port: number;
  user: string;
  password: string;
  /** Folder of the PostgreSQL binaries used (initdb, pg_ctl, psql). */
  binDir: string;
  /** Milliseconds initdb took, and pg_ctl start. */
  timings: { initdbMs: number; startMs: number };
  /** Runs SQL through psql as the superuser; resolves with its output. */
  psql(database: string, sql: string): Promise<string>;
  stop(): Promise<void>;
  /** Stops the cluster and removes its folder. */
  destroy(): Promise<void>;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** ENRICHFLOW_PG_BIN, else the newest /usr/lib/postgresql/<n>/bin (Debian), else the folder of initdb on PATH. */
export function postgresBinDir(env: NodeJS.ProcessEnv = process.env): string {
  const candidates: string[] = [];
  if (env.ENRICHFLOW_PG_BIN) candidates.push(env.ENRICHFLOW_PG_BIN);
  try {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => `/usr/lib/postgresql/${v}/bin`));
  } catch {
    // not Debian's layout
  }
  candidates.push(...(env.PATH ?? '').split(path.delimiter).filter(Boolean));
  const found = candidates.find((dir) =>
    ['initdb', 'pg_ctl', 'psql'].every((b) => isExecutable(path.join(dir, b))),
  );
  if (!found) {
    throw new PostgresNotFoundError(
      "PostgreSQL's server binaries (initdb, pg_ctl, psql) were not found: install them (Debian: apt-get install postgresql) or set ENRICHFLOW_PG_BIN to their folder",
    );
  }
  return found;
}

async function accountIds(name: string): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([
    execFileAsync('id', ['-u', name]).then((r) => Number(r.stdout.trim())),
    execFileAsync('id', ['-g', name]).then((r) => Number(r.stdout.trim())),
  ]);
  return { uid, gid };
}

export async function startPostgres(options: PostgresOptions): Promise<PostgresCluster> {
  const binDir = postgresBinDir();
  const user = options.user ?? 'temporal';
  const password = options.password ?? 'temporal';
  const host = '127.0.0.1';
  const port = options.port ?? (await freePort(host));
  const dataDir = path.join(options.dir, 'data');
  const socketDir = path.join(options.dir, 'socket');
  const logFile = path.join(options.dir, 'postgres.log');
  const pwFile = path.join(options.dir, 'pwfile');
  mkdirSync(socketDir, { recursive: true });
  writeFileSync(pwFile, `${password}\n`, { mode: 0o600 });

  // As root: hand the folder to the unprivileged account and run every command as it.
  const asRoot = process.getuid?.() === 0;
  let prefix: string[] = [];
  if (asRoot) {
    const account = options.runAs ?? 'nobody';
    const { uid, gid } = await accountIds(account);
    // mkdtemp makes folders 0700; the account must enter this one (so give it one under the temp dir).
    chmodSync(options.dir, 0o755);
    for (const item of [options.dir, socketDir, pwFile]) chownSync(item, uid, gid);
    prefix = ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'];
  }
  const run = (binary: string, args: string[], timeoutMs = 120_000) => {
    const command = [...prefix, path.join(binDir, binary), ...args];
    return execFileAsync(command[0]!, command.slice(1), {
      timeout: timeoutMs,
      // A locale every machine has; PostgreSQL checks it at initdb and start.
      env: { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', PGPASSWORD: password },
    });
  };

  let t = Date.now();
  await run('initdb', [
    '--pgdata',
    dataDir,
    '--username',
    user,
    '--pwfile',
    pwFile,
    '--auth-host',
    'scram-sha-256',
    '--auth-local',
    'trust',
    '--encoding',
    'UTF8',
    '--no-instructions',
  ]);
  const initdbMs = Date.now() - t;
  t = Date.now();
  const serverOptions = `-c listen_addresses=${host} -p ${port} -k ${socketDir} -c max_connections=200`;
  await run('pg_ctl', [
    'start',
    '--pgdata',
    dataDir,
    '--log',
    logFile,
    '--wait',
    '--timeout',
    '60',
    '-o',
    serverOptions,
  ]);
  if (!(await isPortOpen(port, host)))
    throw new Error(`PostgreSQL started but does not listen on ${port}; see ${logFile}`);
  const startMs = Date.now() - t;

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await run('pg_ctl', ['stop', '--pgdata', dataDir, '--mode', 'fast', '--wait', '--timeout', '60']).catch(
      () => undefined,
    );
  };
  return {
    host,
    port,
    user,
    password,
    binDir,
    timings: { initdbMs, startMs },
    psql: async (database, sql) =>
      (
        await run('psql', [
          '-h',
          host,
          '-p',
          String(port),
          '-U',
          user,
          '-d',
          database,
          '-At',
          '-v',
          'ON_ERROR_STOP=1',
          '-c',
          sql,
        ])
      ).stdout,
    stop,
    destroy: async () => {
      await stop();
      await rm(options.dir, { recursive: true, force: true });
    },
  };
}
