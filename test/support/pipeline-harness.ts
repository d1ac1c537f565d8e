// Everything an end-to-end pipeline test needs: the real sandbox over HTTP, the suite's Temporal dev
// server and S3 server, an in-process worker on task queues of its own, and readers for the output.
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { queryRows, sqlString, withDuckDb } from '../../storage/duckdb.js';
import { DataServiceClient } from '../../client/index.js';
import { loadConfig, type EnrichflowConfig } from '../../config/index.js';
import { silentLogger } from '../../lib/logger.js';
import { startSandbox, type RunningSandbox } from '../../sandbox/serve.js';
import {
  createEnrichflowWorkers,
  storeResolverFor,
  workflowsPath,
  type EnrichflowWorkers,
} from '../../workers/worker.js';

export const API_KEY = 'e2e-key';
export const ADMIN_KEY = 'e2e-admin';

let bundle: Promise<WorkflowBundle> | undefined;
/** The workflow bundle, built once per test file. */
export function workflowBundle(): Promise<WorkflowBundle> {
  bundle ??= bundleWorkflowCode({
    workflowsPath: workflowsPath(),
    logger: { ...console, trace() {}, debug() {}, info() {} },
  });
  return bundle;
}

export async function startTestSandbox(
  options: { rateLimitPerMinute?: number } = {},
): Promise<RunningSandbox> {
  // The default seed and size: the world samples/companies.csv was drawn from.
  return startSandbox({
    dataDir: mkdtempSync(path.join(tmpdir(), 'enrichflow-e2e-sandbox-')),
    port: 0,
    apiKeys: [{ name: 'e2e', key: API_KEY }],
    adminKey: ADMIN_KEY,
    rateLimitPerMinute: options.rateLimitPerMinute ?? 0,
    events: false,
  });
}

export function testConfig(sandboxUrl: string, overrides: Record<string, string> = {}): EnrichflowConfig {
  const s3 = inject('s3');
  const queue = `e2e-${Math.random().toString(36).slice(2, 8)}`;
  return loadConfig({
    env: {
      ENRICHFLOW_TEMPORAL_ADDRESS: inject('temporalAddress'),
      ENRICHFLOW_TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      ENRICHFLOW_TASK_QUEUE: queue,
      ENRICHFLOW_API_TASK_QUEUE: `${queue}-api`,
      ENRICHFLOW_API_BASE_URL: sandboxUrl,
      ENRICHFLOW_API_KEY: API_KEY,
      ENRICHFLOW_API_RATE_PER_MINUTE: '60000',
      ENRICHFLOW_API_TIMEOUT_MS: '3000',
      ENRICHFLOW_S3_ENDPOINT: s3.endpoint,
      ENRICHFLOW_S3_REGION: s3.region,
      ENRICHFLOW_S3_FORCE_PATH_STYLE: 'true',
      ENRICHFLOW_S3_ACCESS_KEY_ID: s3.accessKeyId,
      ENRICHFLOW_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      ...overrides,
    },
  });
}

export interface TestWorker {
  workers: EnrichflowWorkers;
  running: Promise<void>;
  stop(): Promise<void>;
}

export async function startTestWorker(config: EnrichflowConfig): Promise<TestWorker> {
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const calls = new DataServiceClient({
    baseUrl: config.dataService.baseUrl,
    apiKey: config.dataService.apiKey ?? '',
    headersTimeoutMs: config.dataService.timeoutMs,
    bodyTimeoutMs: config.dataService.timeoutMs,
  });
  const workers = await createEnrichflowWorkers({
    config,
    connection,
    calls,
    logger: silentLogger,
    workflowBundle: await workflowBundle(),
  });
  const running = workers.run();
  return {
    workers,
    running,
    stop: async () => {
      workers.shutdown();
      await running;
      await calls.close();
      await connection.close();
    },
  };
}

export async function temporalClient(): Promise<Client> {
  const connection = await Connection.connect({ address: inject('temporalAddress') });
  return new Client({ connection, namespace: inject('temporalNamespace') });
}

/** A fresh prefix in the test bucket, as an `s3://` location. */
export function s3Location(name: string): string {
  return `s3://${inject('s3').bucket}/${name}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}/`;
}

export async function uploadFile(
  config: EnrichflowConfig,
  location: string,
  localFile: string,
): Promise<void> {
  const { store, prefix } = storeResolverFor(config)(location);
  await store.put(prefix, await readFile(localFile));
}

/**
 * Reads a committed table of a run (all its parts) with DuckDB, as an analyst's warehouse load would;
 * a `table` ending in `.parquet` is one file (a ledger: `_ledger/profiles.parquet` under the output).
 */
export async function readTable<T = Record<string, unknown>>(
  config: EnrichflowConfig,
  runPrefix: string,
  table: string,
  sql = 'SELECT * FROM t',
): Promise<{ rows: T[]; types: Record<string, string> }> {
  const { store, prefix } = storeResolverFor(config)(runPrefix);
  const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-read-'));
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  const keys: string[] = [];
  if (table.endsWith('.parquet')) {
    if (await store.exists(`${prefix}${table}`)) keys.push(`${prefix}${table}`);
  } else {
    for await (const info of store.list(`${prefix}${table}/`)) keys.push(info.key);
  }
  for (const key of keys) {
    const local = path.join(dir, path.basename(key));
    await store.downloadToFile(key, local);
    files.push(local);
  }
  if (files.length === 0) throw new Error(`no files for table ${table} under ${runPrefix}`);
  return withDuckDb({}, async (connection) => {
    await connection.run(`CREATE VIEW t AS SELECT * FROM read_parquet([${files.map(sqlString).join(', ')}])`);
    const described = await queryRows<{ column_name: string; column_type: string }>(connection, 'DESCRIBE t');
    return {
      rows: await queryRows<T>(connection, sql),
      types: Object.fromEntries(described.map((c) => [c.column_name, c.column_type])),
    };
  });
}

/** The distinct business ids a run's `matches` table holds (its matched rows' ids). */
export async function matchedIds(config: EnrichflowConfig, runPrefix: string): Promise<string[]> {
  const { rows } = await readTable<{ business_id: string }>(
    config,
    runPrefix,
    'matches',
    'SELECT DISTINCT business_id FROM t WHERE business_id IS NOT NULL',
  );
  return rows.map((r) => r.business_id);
}

/** Whether an object (a run's `_SUCCESS`, say) exists at an `s3://` or local location. */
export async function objectExists(config: EnrichflowConfig, location: string): Promise<boolean> {
  const { store, prefix } = storeResolverFor(config)(location);
  return store.exists(prefix);
}

export async function readJson<T>(config: EnrichflowConfig, location: string): Promise<T> {
  const { store, prefix } = storeResolverFor(config)(location);
  return JSON.parse((await store.getBytes(prefix)).toString('utf8')) as T;
}

export async function setFaults(sandbox: RunningSandbox, rules: unknown[]): Promise<void> {
  const response = await fetch(`${sandbox.url}/_admin/faults`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', 'x-admin-key': ADMIN_KEY },
    body: JSON.stringify({ rules, seed: 7 }),
  });
  if (!response.ok) throw new Error(`setting faults failed: ${response.status} ${await response.text()}`);
}

/** The 300 sample companies shipped in the repository. */
export const SAMPLE_COMPANIES = fileURLToPath(new URL('../../samples/companies.csv', import.meta.url));

/**
 * What most pipeline test files share: a sandbox, a worker on it, a Temporal client, a client of the
 * service (to compare outputs with), and the sample companies uploaded to S3 as `input`.
 */
export interface PipelineStack {
  sandbox: RunningSandbox;
  config: EnrichflowConfig;
  worker: TestWorker;
  client: Client;
  service: DataServiceClient;
  input: string;
  stop(): Promise<void>;
}

export async function startPipelineStack(): Promise<PipelineStack> {
  const sandbox = await startTestSandbox();
  const config = testConfig(sandbox.url);
  const worker = await startTestWorker(config);
  const client = await temporalClient();
  const service = new DataServiceClient({ baseUrl: sandbox.url, apiKey: API_KEY });
  const input = `${s3Location('inputs')}companies.csv`;
  await uploadFile(config, input, SAMPLE_COMPANIES);
  return {
    sandbox,
    config,
    worker,
    client,
    service,
    input,
    stop: async () => {
      await worker.stop();
      await client.connection.close();
      await service.close();
      await sandbox.close();
    },
  };
}

/** The settings a CLI process needs to reach the same Temporal namespace, task queues and S3 server. */
export function cliEnv(config: EnrichflowConfig): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ENRICHFLOW_TEMPORAL_ADDRESS: config.temporal.address,
    ENRICHFLOW_TEMPORAL_NAMESPACE: config.temporal.namespace,
    ENRICHFLOW_TASK_QUEUE: config.temporal.taskQueue,
    ENRICHFLOW_API_TASK_QUEUE: config.temporal.apiTaskQueue,
    ENRICHFLOW_S3_ENDPOINT: config.s3.endpoint,
    ENRICHFLOW_S3_FORCE_PATH_STYLE: 'true',
    ENRICHFLOW_S3_ACCESS_KEY_ID: config.s3.accessKeyId,
    ENRICHFLOW_S3_SECRET_ACCESS_KEY: config.s3.secretAccessKey,
  };
}

/** Runs `enrichflow <args>` from the sources, as a user would run the command, and collects its output. */
export function runCli(
  config: EnrichflowConfig,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/enrichflow-src.ts', ...args], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: cliEnv(config),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Starts `enrichflow worker` from the sources as a process of its own (one a test can kill), on the
 * test's task queues, service and S3 server. The caller kills it.
 */
export function spawnWorkerProcess(config: EnrichflowConfig): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'bin/enrichflow-src.ts', 'worker'], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: {
      ...cliEnv(config),
      ENRICHFLOW_API_BASE_URL: config.dataService.baseUrl,
      ENRICHFLOW_API_KEY: API_KEY,
      ENRICHFLOW_API_RATE_PER_MINUTE: '60000',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Polls `check` (a failed check counts as not yet) until it holds; fails after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('condition not met in time');
}
