// Benchmark and fault drills of the webhook receiver (`enrichflow webhooks serve`, run as its own
// process) on a real Temporal dev server, S3 server (versitygw), worker and sandbox:
//   1. load: signed deliveries at a fixed rate from a separate load process (autocannon; every request
//      signed there, at send time), for the node:http and the fastify server; then as fast as it goes;
//   2. kill: the receiver is SIGKILLed mid-stream while the sandbox delivers 1,000 events; its outbox
//      retries, the receiver restarts, and the output must hold each event once;
//   3. mixed: 1,000 deliveries, 5% badly signed and 10% duplicates: each good event once, each bad refused.
// Run: npx tsx bench/receiver.ts [--rate 500] [--duration 20] [--connections 32] [--skip kill,mixed]
// Prints the figures and writes bench/results/receiver.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { NativeConnection, Runtime, DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { queryRows, sqlString, withDuckDb } from '../storage/duckdb.js';
import { DataServiceClient } from '../client/index.js';
import { loadConfig, type EnrichflowConfig } from '../config/index.js';
import { signDeliveryBody } from '../events/signature.js';
import { defaultSecretFile, saveWebhookSecret } from '../events/webhook-secrets.js';
import { silentLogger } from '../lib/logger.js';
import { newWebhookSecret } from '../sandbox/events/signing.js';
import { startSandbox } from '../sandbox/serve.js';
import { freePort } from '../stack/ports.js';
import { startTemporalDevServer } from '../stack/temporal.js';
import { startS3Server } from '../stack/versitygw.js';
import { createEnrichflowWorkers, storeResolverFor, workflowsPath } from '../workers/worker.js';

const HERE = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(HERE), '..');

// `--child receiver <serve flags…>` hands everything after it to `webhooks serve`, unparsed here.
const receiverChild = process.argv[2] === '--child' && process.argv[3] === 'receiver';
const { values } = parseArgs({
  args: receiverChild ? [] : process.argv.slice(2),
  options: {
    child: { type: 'string' },
    spec: { type: 'string' },
    rate: { type: 'string', default: '500' },
    duration: { type: 'string', default: '20' },
    connections: { type: 'string', default: '32' },
    skip: { type: 'string', default: '' },
    'max-in-flight': { type: 'string', default: '' },
    'inline-max-bytes': { type: 'string', default: '' },
    /** Load passes to run: node, node-autocannon, node-stored, fastify, max (all by default). */
    passes: { type: 'string', default: 'node,node-autocannon,node-stored,fastify,max' },
    /** Seconds at the rate before each load pass measures. */
    warmup: { type: 'string', default: '3' },
    /** Folder for V8 CPU profiles of the receiver processes (`--cpu-prof`), for finding where time goes. */
    'cpu-prof': { type: 'string', default: '' },
  },
});

// ---- the load process ----------------------------------------------------------------------------

interface LoadSpec {
  url: string;
  secret: string;
  tenant: string;
  partner: string;
  connections: number;
  /** Fixed rate (requests/s), or 0 for as fast as it goes. */
  rate: number;
  durationSeconds: number;
  /**
   * `paced`: an open-loop sender (our own): request i is due at start + i/rate and its latency counts
   * from that moment, so time spent waiting for a free connection is included (no coordinated
   * omission). `autocannon`: autocannon's `overallRate`, which sends each connection's share of a
   * second back to back at the start of the second.
   */
  generator?: 'paced' | 'autocannon';
  /** Seconds at the same rate before measuring (their deliveries are stored and checked too). */
  warmupSeconds?: number;
  /** Pre-built deliveries for the mixed drill (then `amount` = their number); otherwise generated. */
  mixed?: { eventId: string; good: boolean }[];
  businessIds: string[];
}

interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  latency: { p50: number; p90: number; p99: number; max: number };
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  /** Mixed drill: status per delivery index. */
  byIndex?: number[];
  /** Event ids answered 200 (load drill). */
  acceptedIds?: string[];
  /** The load process's own event-loop delay: what its latency figures may include of its own. */
  loopDelayMs: { p99: number; max: number };
  /** Paced sender: the slowest delivery of each second (by due time), for BENCH_DEBUG. */
  slowestBySecond?: number[];
}

interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}
interface AutocannonResult {
  requests: { total: number; average: number };
  duration: number;
  latency: { p50: number; p90: number; p99: number; max: number };
  statusCodeStats: Record<string, { count: number }>;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;

function deliveryBody(spec: LoadSpec, eventId: string, index: number): string {
  return JSON.stringify({
    tenant_id: spec.tenant,
    partner_id: spec.partner,
    event_id: eventId,
    event_name: 'new_product',
    entity_id: spec.businessIds[index % spec.businessIds.length],
    entity_type: 'business',
    data: { product_name: `Pulse ${index}`, category: 'software', event_time: new Date().toISOString() },
    enrollment_key: 'bench-key',
  });
}

/** Sorted-array percentile in ms. */
function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;
}

/** The open-loop sender (see `LoadSpec.generator`): deliveries due at a fixed rate, keep-alive connections. */
async function runPaced(spec: LoadSpec): Promise<LoadResult> {
  // undici clients: keep-alive connections and little work per request, so the sender keeps its pace.
  // Deliveries go round the connections (the next idle one, else the least loaded), so every connection
  // stays in use as a busy sender's would: none sits idle until the receiver's keep-alive timeout
  // closes it and a burst has to open new ones (connection set-up on this machine took seconds at times).
  const { Client } = await import('undici');
  const connections = Array.from({ length: spec.connections }, () => ({
    client: new Client(spec.url, { pipelining: 1 }),
    busy: 0,
  }));
  let turn = 0;
  const pick = () => {
    let best = connections[turn % connections.length] as (typeof connections)[number];
    for (let i = 0; i < connections.length; i += 1) {
      const candidate = connections[(turn + i) % connections.length] as (typeof connections)[number];
      if (candidate.busy === 0) {
        best = candidate;
        turn += i + 1;
        break;
      }
      if (candidate.busy < best.busy) best = candidate;
    }
    return best;
  };
  const runId = Date.now().toString(36);
  const accepted: string[] = [];
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  const slowest: number[] = [];
  const traced: Record<string, number>[] = [];
  let measuredFrom = 0;
  let errors = 0;
  let timeouts = 0;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  const send = async (index: number, dueAt: number, measured: boolean) => {
    const eventId = `load-${runId}-${index}`;
    const body = deliveryBody(spec, eventId, index);
    const timestamp = Math.floor(Date.now() / 1000);
    const connection = pick();
    const busyAtPick = connection.busy;
    const pickedAt = performance.now();
    connection.busy += 1;
    try {
      const response = await connection.client.request({
        path: '/webhooks/events',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-timestamp': String(timestamp),
          'x-signature': signDeliveryBody(spec.secret, timestamp, body),
        },
        body,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      await response.body.dump();
      const status = response.statusCode;
      if (status === 200) accepted.push(eventId);
      if (measured) {
        const took = performance.now() - dueAt;
        if (process.env.BENCH_DEBUG && took > 1000 && traced.length < 40)
          traced.push({
            at: Math.round(dueAt - measuredFrom),
            took: Math.round(took),
            lateToPick: Math.round(pickedAt - dueAt),
            conn: connections.indexOf(connection),
            busyAtPick,
          });
        const second = Math.floor((dueAt - measuredFrom) / 1000);
        slowest[second] = Math.max(slowest[second] ?? 0, Math.round(took));
        latencies.push(took);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    } catch (error) {
      if ((error as { code?: string }).code?.includes('TIMEOUT')) timeouts += 1;
      errors += 1;
    } finally {
      connection.busy -= 1;
    }
  };
  const phase = async (first: number, count: number, measured: boolean) => {
    const sent: Promise<void>[] = [];
    const start = performance.now() + 5;
    if (measured) measuredFrom = start;
    let next = 0;
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now();
        while (next < count && start + (next * 1000) / spec.rate <= now) {
          sent.push(send(first + next, start + (next * 1000) / spec.rate, measured));
          next += 1;
        }
        if (next >= count) return resolve();
        setTimeout(tick, Math.max(0, start + (next * 1000) / spec.rate - performance.now()));
      };
      tick();
    });
    await Promise.all(sent);
    return (performance.now() - start) / 1000;
  };
  const warmup = Math.round((spec.warmupSeconds ?? 0) * spec.rate);
  if (warmup > 0) await phase(0, warmup, false);
  loop.enable();
  const seconds = await phase(warmup, Math.round(spec.durationSeconds * spec.rate), true);
  await Promise.all(connections.map(({ client }) => client.close()));
  if (process.env.BENCH_DEBUG) process.stderr.write(`${JSON.stringify(traced)}\n`);
  const sorted = latencies.sort((a, b) => a - b);
  return {
    slowestBySecond: slowest,
    requests: latencies.length + errors,
    seconds,
    perSecond: Math.round(latencies.length / seconds),
    latency: {
      p50: percentile(sorted, 0.5),
      p90: percentile(sorted, 0.9),
      p99: percentile(sorted, 0.99),
      max: sorted.at(-1) ?? 0,
    },
    statuses,
    errors,
    timeouts,
    loopDelayMs: {
      p99: Math.round(loop.percentile(99) / 1e5) / 10,
      max: Math.round(loop.max / 1e5) / 10,
    },
    acceptedIds: accepted,
  };
}

async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  if (spec.generator === 'paced' && spec.rate > 0 && !spec.mixed) return runPaced(spec);
  // A warm-up at the same rate, paced, before autocannon measures.
  const warm =
    (spec.warmupSeconds ?? 0) > 0 && !spec.mixed
      ? await runPaced({
          ...spec,
          rate: spec.rate || 500,
          durationSeconds: spec.warmupSeconds ?? 0,
          warmupSeconds: 0,
        })
      : undefined;
  const measured = await runAutocannon(spec);
  if (warm) measured.acceptedIds = [...(warm.acceptedIds ?? []), ...(measured.acceptedIds ?? [])];
  return measured;
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  const wrong = newWebhookSecret();
  let next = 0;
  const byIndex: number[] = [];
  const accepted: string[] = [];
  const mixed = spec.mixed;
  const runId = Date.now().toString(36);
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    ...(mixed ? { amount: mixed.length } : { duration: spec.durationSeconds }),
    ...(spec.rate > 0 ? { overallRate: spec.rate } : {}),
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path: '/webhooks/events',
        setupRequest: (request: AutocannonRequest, context: Record<string, unknown>) => {
          const index = next++;
          const item = mixed ? mixed[index % mixed.length] : undefined;
          const eventId = item ? item.eventId : `load-${runId}-${index}`;
          const body = deliveryBody(spec, eventId, index);
          // Signed here, at send time: a valid timestamp and signature for each request.
          const timestamp = Math.floor(Date.now() / 1000);
          context.index = index;
          context.eventId = eventId;
          return {
            ...request,
            headers: {
              'content-type': 'application/json',
              'x-timestamp': String(timestamp),
              'x-signature': signDeliveryBody(item && !item.good ? wrong : spec.secret, timestamp, body),
            },
            body,
          };
        },
        onResponse: (status: number, _body: string, context: Record<string, unknown>) => {
          if (mixed) byIndex[context.index as number] = status;
          else if (status === 200) accepted.push(context.eventId as string);
        },
      },
    ],
  });
  const statuses: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = stat.count;
  return {
    requests: result.requests.total,
    seconds: result.duration,
    perSecond: Math.round(result.requests.total / result.duration),
    latency: result.latency,
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    loopDelayMs: {
      p99: Math.round(loop.percentile(99) / 1e5) / 10,
      max: Math.round(loop.max / 1e5) / 10,
    },
    ...(mixed ? { byIndex } : { acceptedIds: accepted }),
  };
}

// ---- helpers of the orchestrator -----------------------------------------------------------------

function tsxChild(args: string[], env: Record<string, string>, nodeArgs: string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeArgs, '--import', 'tsx', HERE, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function loadFromChild(spec: LoadSpec): Promise<LoadResult> {
  const child = tsxChild(['--child', 'load', '--spec', JSON.stringify(spec)], {});
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`load process failed (${code}): ${err.slice(-2000)}`);
  if (process.env.BENCH_DEBUG) console.error(err.slice(-6000));
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as LoadResult;
}

interface ReceiverProcess {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
  kill(): Promise<void>;
  health(): Promise<Record<string, unknown>>;
}

/** `webhooks serve` writing to `output` with the secrets of `secrets`, on `port` (0: any free one). */
async function startReceiverProcess(
  env: Record<string, string>,
  sink: { output: string; secrets: string; port?: number },
  args: string[],
  nodeArgs: string[] = [],
): Promise<ReceiverProcess> {
  const child = tsxChild(
    [
      '--child',
      'receiver',
      '--output',
      sink.output,
      '--port',
      String(sink.port ?? 0),
      '--secrets',
      sink.secrets,
      ...args,
    ],
    env,
    nodeArgs,
  );
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('http://'));
      if (line) resolve(line.trim());
    });
    child.on('exit', (code) => reject(new Error(`receiver exited (${code}) before listening: ${err}`)));
  });
  return {
    child,
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    health: async () => (await (await fetch(`${url}/healthz`)).json()) as Record<string, unknown>,
  };
}

/** Rows and distinct event ids of the sink under `output`, plus the manifests' duplicate counts. */
async function sinkCounts(
  config: EnrichflowConfig,
  output: string,
): Promise<{ rows: number; distinct: number; ids: Set<string>; duplicatesDropped: number; windows: number }> {
  const { store, prefix } = storeResolverFor(config)(output);
  const root = `${prefix}events/`;
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-receiver-read-'));
  try {
    const files: string[] = [];
    let duplicatesDropped = 0;
    let windows = 0;
    for await (const info of store.list(root)) {
      const relative = info.key.slice(root.length);
      if (relative.startsWith('_work/')) continue;
      if (relative.endsWith('manifest.json')) {
        const manifest = JSON.parse((await store.getBytes(info.key)).toString('utf8')) as {
          duplicates_dropped: number;
        };
        duplicatesDropped += manifest.duplicates_dropped;
        windows += 1;
      }
      if (!relative.endsWith('.parquet')) continue;
      const local = path.join(dir, relative);
      await mkdir(path.dirname(local), { recursive: true });
      await store.downloadToFile(info.key, local);
      files.push(local);
    }
    if (files.length === 0) return { rows: 0, distinct: 0, ids: new Set(), duplicatesDropped, windows };
    const rows = await withDuckDb({}, (connection) =>
      queryRows<{ event_id: string }>(
        connection,
        `SELECT event_id FROM read_parquet([${files.map(sqlString).join(', ')}])`,
      ),
    );
    const ids = new Set(rows.map((r) => r.event_id));
    return { rows: rows.length, distinct: ids.size, ids, duplicatesDropped, windows };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function waitUntil<T>(what: string, check: () => Promise<T | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

const fmt = (n: number) => (Math.round(n * 10) / 10).toString();

// ---- the orchestrator ----------------------------------------------------------------------------

async function orchestrate(): Promise<void> {
  const rate = Number(values.rate);
  const duration = Number(values.duration);
  const connections = Number(values.connections);
  const skip = new Set((values.skip ?? '').split(',').filter(Boolean));
  const machine = `${cpus().length} CPU (${cpus()[0]?.model ?? '?'}), load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} at start, Node ${process.version}`;
  Runtime.install({ logger: new DefaultLogger(process.env.BENCH_DEBUG ? 'WARN' : 'ERROR') });
  const root = mkdtempSync(path.join(tmpdir(), 'bench-receiver-'));
  const report: string[] = [];
  const log = (line = '') => {
    console.log(line);
    report.push(line);
  };
  const [temporal, s3] = await Promise.all([
    startTemporalDevServer({ dataDir: path.join(root, 'temporal'), headless: true }),
    startS3Server({ dataDir: path.join(root, 's3'), bucket: 'bench' }),
  ]);
  const secretsDir = path.join(root, 'secrets');
  const sandbox = await startSandbox({
    dataDir: path.join(root, 'sandbox'),
    port: 0,
    businesses: 500,
    prospects: 50,
    apiKeys: [{ name: 'bench', key: 'bench-key' }],
    adminKey: 'bench-admin',
    rateLimitPerMinute: 0,
    preloadDatasets: [],
    events: { deliveryOptions: { baseDelayMs: 200, maxDelayMs: 2_000, jitter: 0.25, pollIntervalMs: 100 } },
  });
  const env: Record<string, string> = {
    ENRICHFLOW_TEMPORAL_ADDRESS: temporal.address,
    ENRICHFLOW_TASK_QUEUE: 'bench',
    ENRICHFLOW_API_TASK_QUEUE: 'bench-api',
    ENRICHFLOW_API_BASE_URL: sandbox.url,
    ENRICHFLOW_API_KEY: 'bench-key',
    ENRICHFLOW_API_RATE_PER_MINUTE: '60000',
    ENRICHFLOW_S3_ENDPOINT: s3.endpoint,
    ENRICHFLOW_S3_REGION: s3.region,
    ENRICHFLOW_S3_FORCE_PATH_STYLE: 'true',
    ENRICHFLOW_S3_ACCESS_KEY_ID: s3.accessKeyId,
    ENRICHFLOW_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    ENRICHFLOW_WEBHOOK_SECRETS_DIR: secretsDir,
    LOG_LEVEL: 'warn',
  };
  const config = loadConfig({ env });
  const connection = await NativeConnection.connect({ address: temporal.address });
  const calls = new DataServiceClient({ baseUrl: sandbox.url, apiKey: 'bench-key' });
  const workers = await createEnrichflowWorkers({
    config,
    connection,
    calls,
    logger: silentLogger,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: workflowsPath(),
      logger: { ...console, trace() {}, debug() {}, info() {}, warn() {} },
    }),
  });
  const running = workers.run();
  const businessIds = [...sandbox.app.sandbox.store.businessIds].slice(0, 200);
  const bucket = `s3://${s3.bucket}`;

  async function secretFor(tenant: string): Promise<{ secret: string; file: string }> {
    const secret = newWebhookSecret();
    const file = defaultSecretFile(secretsDir, tenant, 'bench');
    await saveWebhookSecret(file, {
      partner_id: 'bench',
      tenant,
      webhook_url: 'http://127.0.0.1/unused',
      webhook_secret: secret,
      registered_at: new Date().toISOString(),
      service_url: sandbox.url,
    });
    return { secret, file };
  }

  try {
    log('# Webhook receiver benchmark');
    log();
    log(
      `Command: \`npx tsx bench/receiver.ts --rate ${rate} --duration ${duration} --connections ${connections}\``,
    );
    log(
      `Machine: ${machine}. Temporal dev server (SQLite file), versitygw, worker and sandbox on the same machine;`,
    );
    log('the receiver (`enrichflow webhooks serve`) and the load generator each in their own process.');
    log();

    // ---- 1. load -----------------------------------------------------------------------------------
    if (!skip.has('load')) {
      log('## 1. Signed deliveries at a fixed rate');
      log();
      log(
        '| server | load | offered | achieved req/s | p50 ms | p90 ms | p99 ms | max ms | receiver p50/p99 ms | 2xx | other | stored once | mean batch | queued p50/p99 ms | hand-off p50/p99 ms | put p99 ms | signal p99 ms | loop delay p99/max ms | GC pauses (total/max ms) | load process loop delay p99/max ms |',
      );
      log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
      const wanted = new Set((values.passes ?? '').split(',').filter(Boolean));
      type Pass = {
        name: string;
        server: 'node' | 'fastify';
        generator: 'paced' | 'autocannon';
        rate: number;
        seconds: number;
        /** Every batch stored first (`--inline-max-bytes 0`); by default small ones ride in their signals. */
        stored?: boolean;
      };
      const passes: Pass[] = (
        [
          { name: 'node', server: 'node', generator: 'paced', rate, seconds: duration },
          { name: 'node-autocannon', server: 'node', generator: 'autocannon', rate, seconds: duration },
          {
            name: 'node-stored',
            server: 'node',
            generator: 'paced',
            rate,
            seconds: duration,
            stored: true,
          },
          { name: 'fastify', server: 'fastify', generator: 'paced', rate, seconds: duration },
          { name: 'max', server: 'node', generator: 'autocannon', rate: 0, seconds: Math.min(duration, 10) },
        ] satisfies Pass[]
      ).filter((pass) => wanted.has(pass.name));
      for (const [index, pass] of passes.entries()) {
        const tenant = `load-${index}`;
        const { secret, file } = await secretFor(tenant);
        const output = `${bucket}/load-${index}/`;
        const profile = values['cpu-prof']
          ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`]
          : [];
        const receiver = await startReceiverProcess(
          env,
          { output, secrets: file },
          [
            ...(values['max-in-flight'] ? ['--max-in-flight', values['max-in-flight']] : []),
            ...(values['inline-max-bytes'] || pass.stored
              ? ['--inline-max-bytes', values['inline-max-bytes'] || '0']
              : []),
            '--commit-every',
            // The first commit comes after the load, so commits do not compete with it for the CPU.
            `${pass.seconds + 5}s`,
            '--http-server',
            pass.server,
          ],
          profile,
        );
        const result = await loadFromChild({
          url: receiver.url,
          secret,
          tenant,
          partner: 'bench',
          connections,
          rate: pass.rate,
          durationSeconds: pass.seconds,
          generator: pass.generator,
          warmupSeconds: Number(values.warmup),
          businessIds,
        });
        if (process.env.BENCH_DEBUG) console.error('slowest by second', result.slowestBySecond);
        type Percentiles = { p50: number; p99: number };
        const health = (await receiver.health()) as {
          responseMs: Percentiles;
          eventLoopDelayMs: Percentiles & { max: number };
          gc: { pauses: number; totalMs: number; maxMs: number };
          handoff: {
            meanBatch: number;
            putMs: Percentiles;
            signalMs: Percentiles;
            handoffMs: Percentiles;
            queuedMs: Percentiles;
          };
        };
        if (process.env.BENCH_DEBUG) console.error('receiver health', JSON.stringify(health));
        const { handoff } = health;
        const accepted = new Set(result.acceptedIds ?? []);
        const sink = await waitUntil(
          'the load drill rows',
          async () => {
            const counts = await sinkCounts(config, output);
            if (process.env.BENCH_DEBUG) {
              const { Client } = await import('@temporalio/client');
              const client = new Client({ connection });
              for await (const wf of client.workflow.list({
                query: `WorkflowType = 'eventWindowWorkflow'`,
              })) {
                let state: unknown = wf.status.name;
                try {
                  state = await client.workflow.getHandle(wf.workflowId, wf.runId).query('progress');
                } catch {
                  // closed
                }
                console.error(wf.workflowId, wf.runId, JSON.stringify(state).slice(0, 400));
              }
              console.error(`sink ${counts.rows} rows, want ${accepted.size}`);
            }
            return counts.distinct >= accepted.size ? counts : false;
          },
          180_000,
        );
        const missing = [...accepted].filter((id) => !sink.ids.has(id)).length;
        await receiver.stop();
        const ok = result.statuses['200'] ?? 0;
        log(
          `| ${pass.server}${pass.stored ? ' (stored first)' : ''} | ${pass.generator} | ${pass.rate > 0 ? `${pass.rate}/s` : 'max'} | ${result.perSecond} | ${fmt(result.latency.p50)} | ${fmt(result.latency.p90)} | ${fmt(result.latency.p99)} | ${fmt(result.latency.max)} | ${health.responseMs.p50}/${health.responseMs.p99} | ${ok} | ${result.requests - ok + result.errors} | ${sink.rows === sink.distinct && missing === 0 ? `yes (${sink.rows})` : `NO (${sink.rows} rows, ${sink.distinct} distinct, ${missing} missing)`} | ${handoff.meanBatch} | ${handoff.queuedMs.p50}/${handoff.queuedMs.p99} | ${handoff.handoffMs.p50}/${handoff.handoffMs.p99} | ${handoff.putMs.p99} | ${handoff.signalMs.p99} | ${health.eventLoopDelayMs.p99}/${health.eventLoopDelayMs.max} | ${health.gc.pauses} (${health.gc.totalMs}/${health.gc.maxMs}) | ${result.loopDelayMs.p99}/${result.loopDelayMs.max} |`,
        );
      }
      log();
      for (const line of [
        `Each pass warms up for ${values.warmup} s at the rate before measuring (those deliveries are checked too).`,
        'Load "paced": an open-loop sender in its own process, delivery i due at start + i/rate over keep-alive',
        'connections (at most --connections); latency counts from the due time, so waiting for a connection',
        'or for the receiver is included (no coordinated omission). Load "autocannon": its `overallRate` sends',
        "each connection's share of a second back to back at the start of the second (bursts of",
        '--connections requests), and its correction records every response as if requests were due every',
        '1 ms, so a single slow response adds one sample per millisecond it took: its p99 is a burst-and-tail',
        'figure, kept for comparison with earlier results. "max" is autocannon without a rate.',
        'Batches of up to 128 KiB ride in their signal to the intake slot (the default); "(stored first)": every',
        'batch is written to the object store beside its signal (`--inline-max-bytes 0`).',
        'Receiver columns come from its /healthz: response time from request to answer, hand-off stages,',
        'event-loop delay and GC pauses of the receiver process since it started (warm-up included).',
      ])
        log(line);
      log('"stored once" checks every 200-answered event id is in the Parquet output exactly once.');
      log();
    }

    // ---- 2. kill mid-stream ------------------------------------------------------------------------
    if (!skip.has('kill')) {
      log('## 2. Receiver killed mid-stream (SIGKILL), sandbox outbox retries');
      log();
      const port = await freePort();
      const client = new DataServiceClient({ baseUrl: sandbox.url, apiKey: 'bench-key', tenant: 'fault' });
      const { body } = await client.registerWebhook({
        partner_id: 'bench',
        webhook_url: `http://127.0.0.1:${port}/webhooks/events`,
      });
      const file = defaultSecretFile(secretsDir, 'fault', 'bench');
      await saveWebhookSecret(file, {
        partner_id: 'bench',
        tenant: 'fault',
        webhook_url: body.webhook_url,
        webhook_secret: body.webhook_secret,
        registered_at: body.last_modified_time,
        service_url: sandbox.url,
      });
      const enrolled = businessIds.slice(0, 20);
      await client.createEnrollments({
        enrollment_key: 'fault-key',
        event_types: ['new_product'],
        business_ids: enrolled,
      });
      const output = `${bucket}/fault/`;
      const serving = { output, secrets: file, port };
      const args = ['--window', '10s', '--grace', '2s', '--settle', '1s', '--idle', '10s'];
      let receiver = await startReceiverProcess(env, serving, args);
      const admin = { 'content-type': 'application/json', 'x-admin-key': 'bench-admin' };
      const deliveries = async () => {
        const response = await fetch(`${sandbox.url}/_admin/events/deliveries`, { headers: admin });
        return ((await response.json()) as { deliveries: { status: string; attempts: number }[] }).deliveries;
      };
      const emitted: string[] = [];
      const started = Date.now();
      for (let burst = 0; burst < 20; burst += 1) {
        const response = await fetch(`${sandbox.url}/_admin/events`, {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({
            events: Array.from({ length: 50 }, (_, i) => ({
              business_id: enrolled[i % 20],
              event_name: 'new_product',
            })),
          }),
        });
        emitted.push(
          ...((await response.json()) as { events: { event_id: string }[] }).events.map((e) => e.event_id),
        );
        if (burst === 6) {
          // Kill while the outbox is still sending: some acknowledged, some in flight, some not sent yet.
          await waitUntil(
            'some deliveries',
            async () => (await deliveries()).filter((d) => d.status === 'delivered').length >= 100 || false,
            60_000,
          );
          await receiver.kill();
          const atKill = await deliveries();
          log(
            `- killed the receiver (SIGKILL) with ${atKill.filter((d) => d.status === 'delivered').length} of ${emitted.length} emitted deliveries acknowledged and the rest in flight or queued`,
          );
        }
        if (burst === 13) {
          receiver = await startReceiverProcess(env, serving, args);
          log(
            `- restarted it on the same port ${((Date.now() - started) / 1000).toFixed(1)} s after the first event, while deliveries kept coming`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await waitUntil(
        'the outbox to empty',
        async () => (await deliveries()).every((d) => d.status !== 'pending') || false,
        180_000,
      );
      const all = await deliveries();
      const sink = await waitUntil(
        'all killed-drill rows',
        async () => {
          const counts = await sinkCounts(config, output);
          return counts.distinct >= emitted.length ? counts : false;
        },
        180_000,
      );
      const missing = emitted.filter((id) => !sink.ids.has(id)).length;
      const attempts = all.reduce((sum, d) => sum + d.attempts, 0);
      log(
        `- ${emitted.length} events emitted; sandbox: ${all.filter((d) => d.status === 'delivered').length} delivered, ${all.filter((d) => d.status === 'abandoned').length} abandoned, ${attempts} attempts (${attempts - all.length} retries)`,
      );
      log(
        `- output: ${sink.rows} rows, ${sink.distinct} distinct event ids, ${missing} missing, over ${sink.windows} window(s); ${sink.duplicatesDropped} duplicate deliveries dropped at commit`,
      );
      log(
        `- result: ${sink.rows === emitted.length && sink.distinct === emitted.length && missing === 0 ? 'every event exactly once' : 'FAILED'}`,
      );
      log();
      await receiver.stop();
      await client.close();
    }

    // ---- 3. mixed --------------------------------------------------------------------------------------
    if (!skip.has('mixed')) {
      log('## 3. 1,000 deliveries: 5% bad signatures, 10% duplicates');
      log();
      const { secret, file } = await secretFor('mixed');
      const output = `${bucket}/mixed/`;
      const receiver = await startReceiverProcess(env, { output, secrets: file }, [
        '--window',
        '10s',
        '--grace',
        '2s',
        '--settle',
        '1s',
      ]);
      const stamp = Date.now().toString(36);
      const items: { eventId: string; good: boolean; duplicate: boolean }[] = [];
      for (let i = 0; i < 850; i += 1)
        items.push({ eventId: `mixed-${stamp}-${i}`, good: true, duplicate: false });
      for (let i = 0; i < 50; i += 1)
        items.push({ eventId: `bad-${stamp}-${i}`, good: false, duplicate: false });
      for (let i = 0; i < 100; i += 1)
        items.push({ eventId: `mixed-${stamp}-${(i * 37) % 850}`, good: true, duplicate: true });
      // A fixed shuffle: duplicates and bad deliveries interleaved with the rest.
      let seed = 7;
      for (let i = items.length - 1; i > 0; i -= 1) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        const j = seed % (i + 1);
        [items[i], items[j]] = [items[j] as (typeof items)[number], items[i] as (typeof items)[number]];
      }
      const result = await loadFromChild({
        url: receiver.url,
        secret,
        tenant: 'mixed',
        partner: 'bench',
        connections: 16,
        rate: 0,
        durationSeconds: 0,
        mixed: items.map(({ eventId, good }) => ({ eventId, good })),
        businessIds,
      });
      const statuses = result.byIndex ?? [];
      const badRefused = items.filter((item, i) => !item.good && statuses[i] === 401).length;
      const goodAccepted = items.filter((item, i) => item.good && statuses[i] === 200).length;
      const goodIds = new Set(items.filter((item) => item.good).map((item) => item.eventId));
      const sink = await waitUntil(
        'the mixed drill rows',
        async () => {
          const counts = await sinkCounts(config, output);
          return counts.distinct >= goodIds.size ? counts : false;
        },
        120_000,
      );
      const badStored = items.filter((item) => !item.good && sink.ids.has(item.eventId)).length;
      const health = (await receiver.health()) as { duplicates: number };
      await receiver.stop();
      log(
        `- sent ${items.length}: ${goodIds.size} distinct good events, ${items.filter((i) => i.duplicate).length} duplicates, ${items.filter((i) => !i.good).length} badly signed`,
      );
      log(
        `- answers: ${goodAccepted} good deliveries 200, ${badRefused} of 50 bad ones 401; the receiver recognised ${health.duplicates} duplicates before Temporal`,
      );
      log(`- output: ${sink.rows} rows, ${sink.distinct} distinct, ${badStored} bad ones stored`);
      log(
        `- result: ${sink.rows === goodIds.size && sink.distinct === goodIds.size && badStored === 0 && badRefused === 50 && goodAccepted === 950 ? 'every good event once, every bad one refused' : 'FAILED'}`,
      );
      log();
    }
  } finally {
    workers.shutdown();
    await running.catch(() => undefined);
    await calls.close();
    await connection.close();
    await sandbox.close();
    await Promise.all([temporal.stop(), s3.stop()]);
    rmSync(root, { recursive: true, force: true });
  }
  if (!skip.size && !values['cpu-prof'] && values.passes === 'node,node-autocannon,node-stored,fastify,max') {
    mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(path.join(ROOT, 'bench', 'results', 'receiver.md'), `${report.join('\n')}\n`);
  }
}

if (receiverChild) {
  const { main } = await import('../cli/main.js');
  await main(['node', 'enrichflow', 'webhooks', 'serve', ...process.argv.slice(4)]);
} else if (values.child === 'load') {
  const result = await runLoad(JSON.parse(values.spec ?? '{}') as LoadSpec);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  await orchestrate();
}
