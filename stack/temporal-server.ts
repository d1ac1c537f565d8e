// The Temporal server itself (not the CLI's dev server) on PostgreSQL, as docker-compose.yml deploys it:
// the same configuration file (deploy/temporal/server.yaml), the same schema job
// (deploy/temporal/setup-postgres.sh) and the same namespace job (deploy/temporal/create-namespace.sh),
// with the server and schema tool that `install-tools.sh --cluster` builds. Every role listens on a
// free loopback port; `restart()` stops the process and starts it again on the same ports and data.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import net from 'node:net';
import { startProcess, waitUntilReady, type ManagedProcess } from './process.js';
import { isTemporalServing } from './temporal.js';
import { resolveClusterTool, resolveTool } from './tools.js';

const execFileAsync = promisify(execFile);
const DEPLOY = fileURLToPath(new URL('../deploy/temporal/', import.meta.url));

export interface TemporalServerOptions {
  /** Folder for the logs; created if missing. */
  dataDir: string;
  postgres: { host: string; port: number; user: string; password: string };
  namespace?: string;
  /** Retention of the namespace created, as create-namespace.sh takes it; default 1d. */
  retention?: string;
  readyTimeoutMs?: number;
}

export interface TemporalServer {
  /** `host:port` of the gRPC frontend, as clients and workers take it. */
  address: string;
  namespace: string;
  /** Where the server serves Prometheus metrics. */
  metricsUrl: string;
  process(): ManagedProcess;
  /** Milliseconds the schema job, the first start (until SERVING) and the namespace job took. */
  timings: { schemaMs: number; startMs: number; namespaceMs: number };
  /** Stops the server and starts it again with the same ports and databases; resolves when it serves. */
  restart(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * A free port below 32768: the server stores its roles' membership ports in a PostgreSQL `smallint`,
 * so the kernel's ephemeral ports (32768 and up) make it fail at start.
 */
async function freeLowPort(host: string, taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (taken.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, host, () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port below 32768');
}

/** Runs one of deploy/temporal's job scripts with the tool folders first on PATH. */
async function runJob(script: string, env: Record<string, string>, toolDirs: string[]): Promise<string> {
  const { stdout, stderr } = await execFileAsync('sh', [path.join(DEPLOY, script)], {
    env: { ...process.env, ...env, PATH: [...toolDirs, process.env.PATH ?? ''].join(path.delimiter) },
    timeout: 180_000,
  });
  return stdout + stderr;
}

export async function startTemporalServer(options: TemporalServerOptions): Promise<TemporalServer> {
  const server = resolveClusterTool('temporal-server');
  const sqlTool = resolveClusterTool('temporal-sql-tool');
  const cli = resolveTool('temporal');
  const host = '127.0.0.1';
  const namespace = options.namespace ?? 'enrichflow';
  mkdirSync(options.dataDir, { recursive: true });
  const { postgres } = options;

  let t = Date.now();
  await runJob(
    'setup-postgres.sh',
    {
      POSTGRES_SEEDS: postgres.host,
      DB_PORT: String(postgres.port),
      POSTGRES_USER: postgres.user,
      SQL_PASSWORD: postgres.password,
    },
    [path.dirname(sqlTool)],
  );
  const schemaMs = Date.now() - t;

  const ports: Record<string, number> = {};
  for (const name of [
    'FRONTEND_GRPC_PORT',
    'FRONTEND_MEMBERSHIP_PORT',
    'FRONTEND_HTTP_PORT',
    'MATCHING_GRPC_PORT',
    'MATCHING_MEMBERSHIP_PORT',
    'HISTORY_GRPC_PORT',
    'HISTORY_MEMBERSHIP_PORT',
    'WORKER_GRPC_PORT',
    'WORKER_MEMBERSHIP_PORT',
    'METRICS_PORT',
  ]) {
    ports[name] = await freeLowPort(host, new Set(Object.values(ports)));
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    POSTGRES_SEEDS: postgres.host,
    DB_PORT: String(postgres.port),
    POSTGRES_USER: postgres.user,
    POSTGRES_PWD: postgres.password,
    BIND_ON_IP: host,
    PROMETHEUS_ENDPOINT: `${host}:${ports.METRICS_PORT}`,
    DYNAMIC_CONFIG_FILE_PATH: path.join(DEPLOY, 'dynamicconfig.yaml'),
    // As docker-compose.yml: the configuration file and "no authorizer" through the environment.
    TEMPORAL_SERVER_CONFIG_FILE_PATH: path.join(DEPLOY, 'server.yaml'),
    TEMPORAL_ALLOW_NO_AUTH: 'true',
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
  };
  const address = `${host}:${ports.FRONTEND_GRPC_PORT}`;
  let proc: ManagedProcess;
  let starts = 0;
  const start = async (): Promise<number> => {
    const started = Date.now();
    starts += 1;
    proc = startProcess({
      name: 'temporal-server',
      command: server,
      args: ['start'],
      env,
      logFile: path.join(options.dataDir, `temporal-server-${starts}.log`),
    });
    await waitUntilReady(proc, () => isTemporalServing(cli, address), options.readyTimeoutMs ?? 120_000);
    return Date.now() - started;
  };
  const startMs = await start();
  t = Date.now();
  await runJob(
    'create-namespace.sh',
    { TEMPORAL_ADDRESS: address, NAMESPACE: namespace, RETENTION: options.retention ?? '1d' },
    [path.dirname(cli)],
  );
  const namespaceMs = Date.now() - t;
  return {
    address,
    namespace,
    metricsUrl: `http://${host}:${ports.METRICS_PORT}/metrics`,
    process: () => proc,
    timings: { schemaMs, startMs, namespaceMs },
    restart: async () => {
      await proc.stop(30_000);
      return start();
    },
    stop: () => proc.stop(30_000),
  };
}
