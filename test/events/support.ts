// Fixtures for the events end-to-end tests: the real sandbox with its events part (fast delivery
// retries, admin key) over a small generated world, the suite's Temporal and S3 with an in-process
// worker, the CLI run in-process with a given environment, and a reader of the sink's Parquet output.
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { vi } from 'vitest';
import { queryRows, sqlString, withDuckDb } from '../../storage/duckdb.js';
import { buildProgram } from '../../cli/main.js';
import type { EnrichflowConfig } from '../../config/index.js';
import { startSandbox, type RunningSandbox } from '../../sandbox/serve.js';
import { storeResolverFor } from '../../workers/worker.js';
import { API_KEY, ADMIN_KEY } from '../support/pipeline-harness.js';
import { FAST_DELIVERY } from '../sandbox-events/support.js';

export { waitFor } from '../sandbox-events/support.js';

export interface EventsSandbox {
  sandbox: RunningSandbox;
  businessIds: readonly string[];
  dir: string;
  close(): Promise<void>;
}

/** The sandbox over a small world of its own (its database is written to, so it is not shared). */
export async function startEventsSandbox(): Promise<EventsSandbox> {
  const dir = mkdtempSync(path.join(tmpdir(), 'events-e2e-sandbox-'));
  const sandbox = await startSandbox({
    dataDir: dir,
    port: 0,
    seed: 'events-e2e',
    businesses: 300,
    prospects: 50,
    apiKeys: [{ name: 'e2e', key: API_KEY }],
    adminKey: ADMIN_KEY,
    rateLimitPerMinute: 0,
    preloadDatasets: [],
    events: { deliveryOptions: FAST_DELIVERY },
  });
  return {
    sandbox,
    businessIds: sandbox.app.sandbox.store.businessIds,
    dir,
    close: async () => {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface EmittedEvent {
  event_id: string;
  event_name: string;
  event_time: string;
  business_id: string;
}

export async function emitEvents(
  sandbox: RunningSandbox,
  events: { business_id: string; event_name: string; event_time?: string }[],
): Promise<{ events: EmittedEvent[]; deliveries_queued: number }> {
  const response = await fetch(`${sandbox.url}/_admin/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-admin-key': ADMIN_KEY },
    body: JSON.stringify({ events }),
  });
  if (!response.ok) throw new Error(`emit failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as { events: EmittedEvent[]; deliveries_queued: number };
}

export async function deliveryStatuses(sandbox: RunningSandbox): Promise<Record<string, number>> {
  const response = await fetch(`${sandbox.url}/_admin/events/deliveries`, {
    headers: { 'x-admin-key': ADMIN_KEY },
  });
  const { deliveries } = (await response.json()) as { deliveries: { status: string }[] };
  const counts: Record<string, number> = {};
  for (const d of deliveries) counts[d.status] = (counts[d.status] ?? 0) + 1;
  return counts;
}

/** The environment a CLI command sees: the test configuration as the variables it came from. */
export function envOf(config: EnrichflowConfig, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ENRICHFLOW_TEMPORAL_ADDRESS: config.temporal.address,
    ENRICHFLOW_TEMPORAL_NAMESPACE: config.temporal.namespace,
    ENRICHFLOW_TASK_QUEUE: config.temporal.taskQueue,
    ENRICHFLOW_API_TASK_QUEUE: config.temporal.apiTaskQueue,
    ENRICHFLOW_API_BASE_URL: config.dataService.baseUrl,
    ENRICHFLOW_API_KEY: config.dataService.apiKey ?? '',
    ENRICHFLOW_S3_ENDPOINT: config.s3.endpoint ?? '',
    ENRICHFLOW_S3_REGION: config.s3.region,
    ENRICHFLOW_S3_FORCE_PATH_STYLE: String(config.s3.forcePathStyle),
    ENRICHFLOW_S3_ACCESS_KEY_ID: config.s3.accessKeyId ?? '',
    ENRICHFLOW_S3_SECRET_ACCESS_KEY: config.s3.secretAccessKey ?? '',
    ENRICHFLOW_WEBHOOK_SECRETS_DIR: config.events.secretsDir,
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

/** Runs `enrichflow <args>` in-process with `env`; returns what it printed. Failures throw. */
export async function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ stdout: string; stderr: string }> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    await buildProgram()
      .exitOverride()
      .parseAsync(['node', 'enrichflow', ...args]);
    return { stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

export interface SinkRow {
  event_id: string;
  event_name: string;
  event_time: string;
  entity_id: string;
  entity_type: string;
  tenant_id: string | null;
  partner_id: string;
  enrollment_key: string;
  data: string;
  received_at: string;
  tenant: string;
  window: string;
}

/** Every row of the sink's tables under `output` (all tenants and windows), with the partition values. */
export async function readSink(config: EnrichflowConfig, output: string): Promise<SinkRow[]> {
  const { store, prefix } = storeResolverFor(config)(output);
  const root = `${prefix}events/`;
  const dir = mkdtempSync(path.join(tmpdir(), 'events-sink-read-'));
  try {
    const files: string[] = [];
    for await (const info of store.list(root)) {
      const relative = info.key.slice(root.length);
      if (!relative.endsWith('.parquet') || relative.startsWith('_work/')) continue;
      const local = path.join(dir, relative);
      await mkdir(path.dirname(local), { recursive: true });
      await store.downloadToFile(info.key, local);
      files.push(local);
    }
    if (files.length === 0) return [];
    return await withDuckDb({}, (connection) =>
      queryRows<SinkRow>(
        connection,
        `SELECT * FROM read_parquet([${files.map(sqlString).join(', ')}], hive_partitioning = true, hive_types_autocast = false)
         ORDER BY event_time, event_id`,
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function readObjectJson<T>(config: EnrichflowConfig, location: string): Promise<T | undefined> {
  const { store, prefix } = storeResolverFor(config)(location);
  if (!(await store.exists(prefix))) return undefined;
  return JSON.parse((await store.getBytes(prefix)).toString('utf8')) as T;
}
