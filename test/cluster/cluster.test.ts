// The production topology, run here: PostgreSQL (a throwaway cluster), the Temporal server on it
// (built by `install-tools.sh --cluster`, configured by deploy/temporal/server.yaml, schema and
// namespace by the same scripts docker-compose.yml runs), versitygw, the sandbox, three workers and the
// webhook receiver, each a process of its own. A 20,000-row run with match and three datasets loses a
// worker to SIGKILL and sees the Temporal server restart, and still writes the same tables as the same
// run on one worker against the dev server; the three workers together stay within the rate budget.
// Schedules, a search export and webhook events run on the cluster too. Every process is traced into an
// OpenTelemetry Collector (OTLP in, file out), and the cluster run's trace is checked from its file.
//   npm run test:cluster        (needs `bash scripts/install-tools.sh --cluster` and PostgreSQL)
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Client, Connection } from '@temporalio/client';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEFAULT_SEED } from '../../sandbox/app.js';
import { generateBusinessRows } from '../../sandbox/data/businesses.js';
import { freePort } from '../../stack/ports.js';
import { startPostgres, type PostgresCluster } from '../../stack/postgres.js';
import type { ManagedProcess } from '../../stack/process.js';
import { startTemporalDevServer, type TemporalDevServer } from '../../stack/temporal.js';
import { startTemporalServer, type TemporalServer } from '../../stack/temporal-server.js';
import { startS3Server, type S3Server } from '../../stack/versitygw.js';
import { readCollectorFile, startCollector, type Collector, type OtlpSpan } from '../../stack/otelcol.js';
import {
  COMPILED,
  enrichflow,
  peakInWindow,
  readTableFacts,
  ROOT,
  startEnrichflow,
  startSandboxDoor,
  waitFor,
  type SandboxDoor,
  type TableFacts,
} from './support.js';

const BUSINESSES = 20_000;
const ROWS = 20_000;
/** The deployment's one call budget, per minute, for all workers together; the sandbox allows as much. */
const RATE_PER_MINUTE = 900;
/** API activity slots per worker (as docker-compose.yml runs them). */
const WORKER_SLOTS = 16;
const DATASETS = ['firmographics', 'technographics', 'funding_and_acquisition'];
const TABLES = [...DATASETS, 'matches'];
const WORKERS = 3;
const KEY = 'cluster-key';
const ADMIN = 'cluster-admin';
const NAMESPACE = 'enrichflow';

interface Summary {
  runId: string;
  status: string;
  outputPrefix: string;
  stages: { stage: string; calls: number; records: number; misses: number }[];
  tables: { table: string; rows: number }[];
}

const figures: Record<string, unknown> = {};
const seconds = (ms: number) => Math.round(ms / 100) / 10;

let work: string;
let pg: PostgresCluster | undefined;
let server: TemporalServer | undefined;
let s3: S3Server | undefined;
let collector: Collector | undefined;
let s3Client: S3Client;
let sandbox: ManagedProcess | undefined;
let sandboxUrl: string;
let door: SandboxDoor | undefined;
let receiver: ManagedProcess | undefined;
let receiverUrl: string;
let client: Client | undefined;
const workers: ManagedProcess[] = [];
let baseEnv: Record<string, string>;

function workerEnv(address: string): Record<string, string> {
  return {
    ...baseEnv,
    ENRICHFLOW_TEMPORAL_ADDRESS: address,
    ENRICHFLOW_API_BASE_URL: door!.url,
    ENRICHFLOW_WORKER_MAX_ACTIVITIES: String(WORKER_SLOTS),
    // As docker-compose.yml starts a worker.
    NODE_OPTIONS: '--max-old-space-size=192 --max-semi-space-size=8',
    MALLOC_ARENA_MAX: '2',
  };
}

async function admin(method: string, route: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${sandboxUrl}/_admin/${route}`, {
    method,
    headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** Until every worker process polls both task queues of `temporal`. */
async function waitForPollers(temporal: Client, count: number): Promise<void> {
  await waitFor(
    async () => {
      const [workflows, calls] = await Promise.all([
        temporal.workflowService.describeTaskQueue({
          namespace: NAMESPACE,
          taskQueue: { name: 'enrichflow' },
          taskQueueType: 1,
        }),
        temporal.workflowService.describeTaskQueue({
          namespace: NAMESPACE,
          taskQueue: { name: 'enrichflow-api' },
          taskQueueType: 2,
        }),
      ]);
      const identities = (r: typeof calls) => new Set((r.pollers ?? []).map((p) => p.identity));
      return identities(workflows).size >= count && identities(calls).size >= count;
    },
    `${count} workers polling`,
    180_000,
    500,
  );
}

function enrichArgs(output: string, runKey: string): string[] {
  return [
    'enrich',
    '--input',
    's3://enrichflow/in/companies-20k.csv',
    '--datasets',
    DATASETS.join(','),
    '--output',
    output,
    '--job-name',
    'cluster',
    '--run-key',
    runKey,
  ];
}

async function tablesOf(summary: Summary): Promise<Record<string, TableFacts>> {
  const facts: Record<string, TableFacts> = {};
  for (const table of TABLES) facts[table] = await readTableFacts(s3Client, summary.outputPrefix, table);
  return facts;
}

const enabled = process.env.ENRICHFLOW_CLUSTER_TEST === '1';

describe.skipIf(!enabled)('cluster: PostgreSQL-backed Temporal server, three workers', () => {
  let reference: { summary: Summary; tables: Record<string, TableFacts> };

  beforeAll(async () => {
    const t0 = Date.now();
    figures.cli = COMPILED ? 'compiled (dist/)' : 'TypeScript sources through tsx';
    work = mkdtempSync(path.join(tmpdir(), 'enrichflow-cluster-'));
    pg = await startPostgres({ dir: mkdtempSync(path.join(tmpdir(), 'enrichflow-cluster-pg-')) });
    figures.postgres = { initdbS: seconds(pg.timings.initdbMs), startS: seconds(pg.timings.startMs) };
    server = await startTemporalServer({
      dataDir: path.join(work, 'temporal'),
      postgres: pg,
      namespace: NAMESPACE,
    });
    figures.temporalServer = {
      schemaS: seconds(server.timings.schemaMs),
      startS: seconds(server.timings.startMs),
      namespaceS: seconds(server.timings.namespaceMs),
    };
    client = new Client({
      connection: await Connection.connect({ address: server.address }),
      namespace: NAMESPACE,
    });
    // The namespace is usable once the frontend's namespace cache has it.
    await waitFor(
      async () => {
        await client!.workflowService.listWorkflowExecutions({ namespace: NAMESPACE, pageSize: 1 });
        return true;
      },
      'the namespace in the frontend',
      60_000,
    );

    s3 = await startS3Server({ dataDir: path.join(work, 's3'), bucket: 'enrichflow' });
    s3Client = s3.client();
    collector = await startCollector({ dataDir: path.join(work, 'otelcol') });
    baseEnv = {
      // Workers, the CLI and the receiver trace into the collector (OTLP/HTTP, protobuf).
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '1000',
      ENRICHFLOW_TEMPORAL_NAMESPACE: NAMESPACE,
      ENRICHFLOW_TASK_QUEUE: 'enrichflow',
      ENRICHFLOW_API_TASK_QUEUE: 'enrichflow-api',
      ENRICHFLOW_API_KEY: KEY,
      ENRICHFLOW_API_RATE_PER_MINUTE: String(RATE_PER_MINUTE),
      ENRICHFLOW_S3_ENDPOINT: s3.endpoint,
      ENRICHFLOW_S3_REGION: s3.region,
      ENRICHFLOW_S3_FORCE_PATH_STYLE: 'true',
      ENRICHFLOW_S3_ACCESS_KEY_ID: s3.accessKeyId,
      ENRICHFLOW_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      ENRICHFLOW_WEBHOOK_SECRETS_DIR: path.join(work, 'secrets'),
      LOG_LEVEL: 'warn',
    };

    // Input: rows drawn from the sandbox's own businesses (same seed) by name and domain, and one row in
    // fifty that matches nothing.
    const world = generateBusinessRows(DEFAULT_SEED, BUSINESSES, true).filter((b) => b.domain);
    const lines = ['name,domain'];
    for (let i = 0; i < ROWS; i += 1) {
      if (i % 50 === 49) {
        lines.push(`Nowhere Holdings ${i},nowhere-${i}.invalid`);
        continue;
      }
      const b = world[(i * 7919) % world.length]!;
      lines.push(`"${b.name.replace(/"/g, '""')}",${b.domain}`);
    }
    const sample = readFileSync(path.join(ROOT, 'samples/companies.csv'));
    await s3Client.send(
      new PutObjectCommand({
        Bucket: 'enrichflow',
        Key: 'in/companies-20k.csv',
        Body: lines.join('\n') + '\n',
      }),
    );
    await s3Client.send(
      new PutObjectCommand({ Bucket: 'enrichflow', Key: 'in/companies.csv', Body: sample }),
    );

    let t = Date.now();
    const sandboxPort = await freePort();
    sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
    sandbox = startEnrichflow(
      'sandbox',
      [
        'sandbox',
        'serve',
        '--port',
        String(sandboxPort),
        '--data-dir',
        path.join(work, 'sandbox'),
        '--businesses',
        String(BUSINESSES),
        '--prospects',
        '2000',
        '--rate-limit',
        String(RATE_PER_MINUTE),
        '--api-key',
        `cluster:${KEY}`,
        '--admin-key',
        ADMIN,
      ],
      { LOG_LEVEL: 'warn' },
      path.join(work, 'logs', 'sandbox.log'),
    );
    await waitFor(
      async () => {
        const status = (await admin('GET', 'status')) as { indexes_ready: boolean };
        return status.indexes_ready;
      },
      'the sandbox',
      300_000,
      500,
    );
    figures.sandboxStartS = seconds(Date.now() - t);
    door = await startSandboxDoor(sandboxUrl);

    // The receiver's webhook, registered once (the call goes straight to the sandbox).
    const receiverPort = await freePort();
    receiverUrl = `http://127.0.0.1:${receiverPort}`;
    const secretFile = path.join(work, 'secrets', 'cluster.json');
    mkdirSync(path.dirname(secretFile), { recursive: true });
    await enrichflow(
      [
        'webhooks',
        'register',
        '--partner-id',
        'cluster',
        '--url',
        `${receiverUrl}/webhooks/events`,
        '--secret-file',
        secretFile,
      ],
      { ...baseEnv, ENRICHFLOW_API_BASE_URL: sandboxUrl, ENRICHFLOW_TEMPORAL_ADDRESS: server.address },
    );

    t = Date.now();
    for (let i = 0; i < WORKERS; i += 1) {
      workers.push(
        startEnrichflow(
          'worker',
          ['worker'],
          workerEnv(server.address),
          path.join(work, 'logs', `worker-${i}.log`),
        ),
      );
    }
    receiver = startEnrichflow(
      'webhooks',
      [
        'webhooks',
        'serve',
        '--output',
        's3://enrichflow/events/',
        '--port',
        String(receiverPort),
        '--secrets',
        secretFile,
        '--window',
        '1m',
        '--grace',
        '1s',
        '--commit-every',
        '2s',
        '--settle',
        '1s',
        '--idle',
        '5s',
      ],
      { ...baseEnv, ENRICHFLOW_API_BASE_URL: sandboxUrl, ENRICHFLOW_TEMPORAL_ADDRESS: server.address },
      path.join(work, 'logs', 'receiver.log'),
    );
    await waitForPollers(client, WORKERS);
    await waitFor(async () => (await fetch(`${receiverUrl}/healthz`)).ok, 'the webhook receiver', 60_000);
    figures.workersReadyS = seconds(Date.now() - t);
    figures.clusterUpS = seconds(Date.now() - t0);
  }, 600_000);

  afterAll(async () => {
    const stops = [...workers, receiver, sandbox].map((p) => p?.stop(15_000) ?? Promise.resolve());
    await Promise.allSettled(stops);
    await door?.close();
    await client?.connection.close().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    await collector?.stop().catch(() => undefined);
    await s3?.stop().catch(() => undefined);
    await pg?.destroy().catch(() => undefined);
    console.log(`cluster figures: ${JSON.stringify(figures, null, 2)}`);
    if (process.env.ENRICHFLOW_CLUSTER_FIGURES) {
      writeFileSync(process.env.ENRICHFLOW_CLUSTER_FIGURES, JSON.stringify(figures, null, 2));
    }
    if (work && process.env.ENRICHFLOW_CLUSTER_KEEP !== '1') rmSync(work, { recursive: true, force: true });
  }, 180_000);

  test('reference: the run on one worker against the dev server', { timeout: 600_000 }, async () => {
    let dev: TemporalDevServer | undefined;
    let worker: ManagedProcess | undefined;
    try {
      dev = await startTemporalDevServer({
        dataDir: path.join(work, 'dev'),
        headless: true,
        namespace: NAMESPACE,
      });
      worker = startEnrichflow(
        'worker',
        ['worker'],
        workerEnv(dev.address),
        path.join(work, 'logs', 'dev-worker.log'),
      );
      const devClient = new Client({
        connection: await Connection.connect({ address: dev.address }),
        namespace: NAMESPACE,
      });
      await waitForPollers(devClient, 1);
      await devClient.connection.close();
      await admin('POST', 'rate-limit/reset');
      const before = door!.requests.length;
      const started = Date.now();
      const { stdout } = await enrichflow(
        [...enrichArgs('s3://enrichflow/reference/', 'reference'), '--json'],
        { ...baseEnv, ENRICHFLOW_TEMPORAL_ADDRESS: dev.address },
      );
      const elapsed = Date.now() - started;
      const summary = JSON.parse(stdout) as Summary;
      expect(summary.status).toBe('completed');
      const requests = door!.requests.slice(before);
      const facts = {
        runS: seconds(elapsed),
        calls: summary.stages.reduce((sum, s) => sum + s.calls, 0),
        requests: requests.length,
        status429: requests.filter((r) => r.status === 429).length,
        peakPerMinute: peakInWindow(requests, 60_000),
        tables: Object.fromEntries(summary.tables.map((t) => [t.table, t.rows])),
      };
      figures.reference = facts;
      // One worker on the dev server: the budget holds exactly (no minute over it, no 429), and the
      // run reports the calls the service received.
      expect(facts.peakPerMinute).toBeLessThanOrEqual(RATE_PER_MINUTE);
      expect(facts.status429).toBe(0);
      expect(facts.calls).toBe(requests.length);
      reference = { summary, tables: await tablesOf(summary) };
    } finally {
      await worker?.stop(15_000);
      await dev?.stop();
    }
  });

  test(
    'three workers, one SIGKILLed and the server restarted mid-run: the same tables, within the rate budget',
    { timeout: 600_000 },
    async () => {
      expect(reference, 'the reference run').toBeDefined();
      const expectedCalls = reference.summary.stages.reduce((sum, s) => sum + s.calls, 0);
      await admin('POST', 'rate-limit/reset');
      const before = door!.requests.length;
      const callsSoFar = () => door!.requests.length - before;
      const started = Date.now();
      const { stdout } = await enrichflow(
        [...enrichArgs('s3://enrichflow/cluster/', 'cluster'), '--no-wait'],
        {
          ...baseEnv,
          ENRICHFLOW_TEMPORAL_ADDRESS: server!.address,
        },
      );
      const runId = 'cluster-cluster';
      expect(stdout).toContain(runId);

      // A third of the way through the calls: one worker dies without a word.
      await waitFor(
        () => Promise.resolve(callsSoFar() >= expectedCalls / 3),
        'a third of the calls',
        300_000,
      );
      const victim = workers[0]!;
      process.kill(victim.pid, 'SIGKILL');
      await victim.exited;
      const killedAt = { s: seconds(Date.now() - started), calls: callsSoFar() };

      // Two thirds of the way: the Temporal server stops (SIGTERM) and starts again on the same databases.
      await waitFor(
        () => Promise.resolve(callsSoFar() >= (2 * expectedCalls) / 3),
        'two thirds of the calls',
        300_000,
      );
      const restartStarted = Date.now();
      const restartedAt = { s: seconds(restartStarted - started), calls: callsSoFar() };
      await server!.restart();
      const restartS = seconds(Date.now() - restartStarted);

      const handle = client!.workflow.getHandle(runId);
      await waitFor(
        async () => (await handle.describe()).status.name !== 'RUNNING',
        'the run to finish',
        420_000,
        1_000,
      );
      const summary = (await handle.result()) as Summary;
      const elapsed = Date.now() - started;
      expect(summary.status).toBe('completed');
      const requests = door!.requests.slice(before);
      const calls = summary.stages.reduce((sum, s) => sum + s.calls, 0);
      const peakPerMinute = peakInWindow(requests, 60_000);
      figures.cluster = {
        runS: seconds(elapsed),
        calls,
        requests: requests.length,
        status429: requests.filter((r) => r.status === 429).length,
        peakPerMinute,
        peakPerSecond: peakInWindow(requests, 1_000),
        killedWorkerAt: killedAt,
        serverRestartAt: restartedAt,
        serverRestartS: restartS,
        tables: Object.fromEntries(summary.tables.map((t) => [t.table, t.rows])),
      };

      // The same tables as the single-worker run: row counts, id sets, no duplicates.
      const tables = await tablesOf(summary);
      for (const table of TABLES) {
        const got = tables[table]!;
        const want = reference.tables[table]!;
        expect(got.rows, table).toBe(want.rows);
        expect(got.distinctIds, table).toBe(want.distinctIds);
        expect(got.ids, table).toEqual(want.ids);
        if (table !== 'matches') expect(got.rows, `${table}: one row per id`).toBe(got.distinctIds);
      }
      for (const stage of reference.summary.stages) {
        const mine = summary.stages.find((s) => s.stage === stage.stage)!;
        expect([mine.records, mine.misses], stage.stage).toEqual([stage.records, stage.misses]);
      }
      // Three workers and a restart later, the sandbox saw no more than the budget in any minute and
      // answered nothing 429. The budget is the API task queue's rate limit, a token bucket the server
      // keeps for all pollers together; workers dispatch at a 61st of it per second, since the bucket
      // also lets a second's worth through at once.
      expect(peakPerMinute).toBeLessThanOrEqual(RATE_PER_MINUTE);
      expect(requests.filter((r) => r.status === 429).length).toBe(0);
      // The calls the run reports are the requests the service received; a worker killed between
      // counting a request and sending it can make them differ by the requests it had in flight.
      expect(Math.abs(calls - requests.length)).toBeLessThanOrEqual(WORKER_SLOTS);
      // Visibility (on PostgreSQL) lists the run.
      const listed = await enrichflow(['runs', 'list'], {
        ...baseEnv,
        ENRICHFLOW_TEMPORAL_ADDRESS: server!.address,
      });
      expect(listed.stdout).toContain(runId);
    },
  );

  test(
    "the cluster run's trace, from the collector's file: one tree of its workflow, stages, workers' calls",
    { timeout: 120_000 },
    async () => {
      const runId = 'cluster-cluster';
      let trace: OtlpSpan[] = [];
      // Workers export every second; the root workflow's span comes once the run has completed.
      await waitFor(
        () => {
          const spans = readCollectorFile(collector!.file);
          const start = spans.find(
            (s) => s.name === 'StartWorkflow:enrichRunWorkflow' && s.attributes.temporalWorkflowId === runId,
          );
          trace = start ? spans.filter((s) => s.traceId === start.traceId) : [];
          return Promise.resolve(trace.some((s) => s.name === 'RunWorkflow:enrichRunWorkflow'));
        },
        "the run's trace in the collector's file",
        60_000,
        500,
      );
      // Started by the CLI, run by the workers: all of it carries the run id.
      expect(trace.find((s) => s.name === 'StartWorkflow:enrichRunWorkflow')?.service).toBe('enrichflow-cli');
      expect(trace.filter((s) => s.attributes['enrichflow.run_id'] !== runId).map((s) => s.name)).toEqual([]);
      const stageWorkflows = new Set(
        trace.filter((s) => s.name === 'RunWorkflow:batchStageWorkflow').map((s) => s.attributes.workflowId),
      );
      for (const stage of ['match', ...DATASETS]) expect(stageWorkflows).toContain(`${runId}/${stage}`);
      const calls = trace.filter((s) => s.name.startsWith('DataService '));
      const perStage = (stage: string) =>
        calls.filter((s) =>
          stage === 'match'
            ? s.attributes['enrichflow.operation'] === 'matchBusinesses'
            : s.attributes['enrichflow.dataset'] === stage,
        ).length;
      for (const stage of ['match', ...DATASETS]) expect(perStage(stage), stage).toBeGreaterThan(0);
      // At most one span per request the service received (the SIGKILLed worker's last second is lost).
      const requests = (figures.cluster as { requests: number }).requests;
      expect(calls.length).toBeLessThanOrEqual(requests);
      // The three workers' spans are all in it, the killed one's included.
      const instances = new Set(calls.map((s) => s.instance));
      expect(instances.size).toBe(WORKERS);
      figures.trace = {
        spans: trace.length,
        dataServiceSpans: calls.length,
        requests,
        perStage: Object.fromEntries(['match', ...DATASETS].map((stage) => [stage, perStage(stage)])),
        workerInstances: instances.size,
        collectorFileBytes: readFileSync(collector!.file).length,
      };
    },
  );

  test('a schedule triggers a run that the cluster finishes', { timeout: 300_000 }, async () => {
    const env = { ...baseEnv, ENRICHFLOW_TEMPORAL_ADDRESS: server!.address };
    const job = path.join(work, 'scheduled.yaml');
    writeFileSync(
      job,
      [
        'job_name: cluster-scheduled',
        'input:',
        '  location: s3://enrichflow/in/companies.csv',
        'datasets: [firmographics]',
        'output: s3://enrichflow/scheduled/',
        '',
      ].join('\n'),
    );
    const started = Date.now();
    await enrichflow(['schedule', 'create', job, '--id', 'cluster-daily', '--cron', '0 6 * * *'], env);
    await enrichflow(['schedule', 'trigger', 'cluster-daily'], env);
    const schedule = client!.schedule.getHandle('cluster-daily');
    const workflowId = await waitFor(
      async () => (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId,
      'the triggered run',
      60_000,
    );
    expect(workflowId).toMatch(/^cluster-daily-/);
    const summary = (await client!.workflow.getHandle(workflowId).result()) as Summary;
    expect(summary.status).toBe('completed');
    const firmographics = await readTableFacts(s3Client, summary.outputPrefix, 'firmographics');
    expect(firmographics.rows).toBeGreaterThan(200);
    expect(firmographics.rows).toBe(firmographics.distinctIds);
    await enrichflow(['schedule', 'delete', 'cluster-daily'], env);
    figures.schedule = { runS: seconds(Date.now() - started), rows: firmographics.rows };
  });

  test('a search export runs on the cluster', { timeout: 300_000 }, async () => {
    const env = { ...baseEnv, ENRICHFLOW_TEMPORAL_ADDRESS: server!.address };
    const filters = path.join(work, 'filters.json');
    writeFileSync(filters, '{}\n');
    const started = Date.now();
    const { stdout } = await enrichflow(
      [
        'businesses',
        '--filters',
        filters,
        '--output',
        's3://enrichflow/export/',
        '--size',
        '2000',
        '--job-name',
        'cluster-export',
        '--run-key',
        'e1',
        '--json',
      ],
      env,
    );
    const summary = JSON.parse(stdout) as { status: string; outputPrefix: string };
    expect(summary.status).toBe('completed');
    const exported = await readTableFacts(s3Client, summary.outputPrefix, 'businesses');
    expect(exported.rows).toBe(2000);
    expect(exported.distinctIds).toBe(2000);
    figures.export = { runS: seconds(Date.now() - started), rows: exported.rows };
  });

  test(
    'the webhook receiver lands delivered events in Parquet through the cluster',
    { timeout: 180_000 },
    async () => {
      const env = {
        ...baseEnv,
        ENRICHFLOW_API_BASE_URL: sandboxUrl,
        ENRICHFLOW_TEMPORAL_ADDRESS: server!.address,
      };
      const ids = reference.tables.firmographics!.ids.slice(0, 3);
      await enrichflow(
        [
          'enrollments',
          'create',
          '--key',
          'cluster-events',
          '--event-types',
          'new_product',
          '--business-ids',
          ids.join(','),
        ],
        env,
      );
      const emitted = (await admin('POST', 'events', {
        events: ids.map((id) => ({ business_id: id, event_name: 'new_product' })),
      })) as { events: { event_id: string }[]; deliveries_queued: number };
      expect(emitted.deliveries_queued).toBe(3);
      const facts = await waitFor(
        async () => {
          const found = await readTableFacts(s3Client, 's3://enrichflow/', 'events', 'event_id').catch(
            () => undefined,
          );
          return found && found.distinctIds >= 3 && found;
        },
        'three events in Parquet',
        120_000,
        1_000,
      );
      expect(facts.ids).toEqual(emitted.events.map((e) => e.event_id).sort());
    },
  );
});
