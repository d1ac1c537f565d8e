// Benchmark: one stuck run must not hold up others (issue 13). One worker process serves three runs at
// once: a run whose output is an S3 endpoint that answers the preflight's probe and then nothing (its
// planning hangs on its first write), started first, and then two 100,000-row runs with match and three
// datasets writing to local folders. Prints each good run's time against the ideal for both (their calls / the rate, since
// they share one rate budget), what became of the stuck run (failed on its own, or how long `cancel`
// took), and the worker's peak RSS (bar 450 MB).
//   npx tsx bench/isolation.ts [--businesses 200000] [--rows 100000] [--rate 100] [--latency 50]
import { type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import type { BulkDataset } from '../contract/datasets.js';
import { startTemporalDevServer } from '../stack/temporal.js';
import { enrichRunWorkflow } from '../workflows/index.js';
import {
  rssMb,
  sandboxAdmin,
  startBenchSandbox,
  startBenchWorker,
  waitForPollers,
  workerNodeFlags,
  writeCompanyInput,
} from './support.js';

const { values: args } = parseArgs({
  options: {
    businesses: { type: 'string', default: '200000' },
    rows: { type: 'string', default: '100000' },
    rate: { type: 'string', default: '100' },
    latency: { type: 'string', default: '50' },
    heap: { type: 'string', default: '192' },
  },
});
const businesses = Number(args.businesses);
const rows = Number(args.rows);
const ratePerSecond = Number(args.rate);
const DATASETS: BulkDataset[] = ['firmographics', 'technographics', 'funding_and_acquisition'];
const KEY = 'bench-key';
const ADMIN = 'bench-admin';
const work = mkdtempSync(path.join(tmpdir(), 'enrichflow-isolation-'));
const children: ChildProcess[] = [];
const seconds = (ms: number) => (ms / 1000).toFixed(1);

/**
 * An S3 endpoint that answers the preflight's probe (so the run starts) and then nothing: every other
 * request is taken and never answered, like a store that dies once a run is under way.
 */
async function startBlackHole(): Promise<{ url: string; close: () => void }> {
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    request.resume();
    if (!request.url?.includes('_enrichflow-preflight-')) return;
    request.on('end', () => {
      if (request.method === 'DELETE') response.writeHead(204).end();
      else response.writeHead(200, { etag: '"probe"' }).end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/** The innermost message of a failure (Temporal wraps the activity's in "Activity task failed"). */
function rootMessage(error: unknown): string {
  let current = error as { message?: string; cause?: unknown } | undefined;
  while (current?.cause) current = current.cause;
  return String(current?.message ?? error);
}

try {
  console.log(
    `businesses ${businesses}, two runs of ${rows} rows, rate ${ratePerSecond}/s, latency ${args.latency} ms`,
  );
  const inputs = [0, 1].map((n) => {
    const file = path.join(work, `companies-${n}.csv`);
    writeCompanyInput(file, businesses, rows, n * rows);
    return file;
  });
  const small = path.join(work, 'stuck.csv');
  writeCompanyInput(small, businesses, 200);

  const started = Date.now();
  const sandbox = await startBenchSandbox(children, {
    businesses,
    ratePerSecond,
    apiKey: KEY,
    adminKey: ADMIN,
    preload: DATASETS,
  });
  console.log(`sandbox ready in ${seconds(Date.now() - started)} s`);
  await sandboxAdmin(sandbox.url, ADMIN, 'PUT', 'faults', {
    rules: [{ match: '/v1/*', kind: 'latency', latencyMs: Number(args.latency) }],
  });
  const blackHole = await startBlackHole();
  const temporal = await startTemporalDevServer({ dataDir: path.join(work, 'temporal'), headless: true });
  const worker = startBenchWorker(
    children,
    {
      ENRICHFLOW_TEMPORAL_ADDRESS: temporal.address,
      ENRICHFLOW_API_BASE_URL: sandbox.url,
      ENRICHFLOW_API_KEY: KEY,
      ENRICHFLOW_API_RATE_PER_MINUTE: String(ratePerSecond * 60),
      ENRICHFLOW_WORKER_MAX_ACTIVITIES: '96',
      // The only S3 this worker knows never answers: the stuck run's output.
      ENRICHFLOW_S3_ENDPOINT: blackHole.url,
      ENRICHFLOW_S3_FORCE_PATH_STYLE: 'true',
      ENRICHFLOW_S3_ACCESS_KEY_ID: 'bench',
      ENRICHFLOW_S3_SECRET_ACCESS_KEY: 'bench-secret',
      LOG_LEVEL: 'warn',
    },
    workerNodeFlags(Number(args.heap)),
  );
  const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
  await waitForPollers(client, ['enrichflow', 'enrichflow-api']);
  const rss: [number, number][] = [];
  const sampler = setInterval(() => {
    try {
      rss.push([Date.now(), rssMb(worker.process.pid!, 'VmRSS')]);
    } catch {
      // the worker is gone
    }
  }, 500);

  const start = (runKey: string, input: string, output: string) =>
    client.workflow.start(enrichRunWorkflow, {
      taskQueue: 'enrichflow',
      workflowId: `isolation-${runKey}-${Date.now()}`,
      args: [
        {
          jobName: 'isolation',
          runKey,
          input: { location: input },
          output,
          datasets: DATASETS,
          apiTaskQueue: 'enrichflow-api',
        },
      ],
    });
  const t0 = Date.now();
  const stuck = await start('stuck', small, 's3://stuck-bucket/out/');
  // The stuck run takes its place on the worker first: its planning attempt has started.
  for (;;) {
    const { raw } = await stuck.describe();
    if ((raw.pendingActivities ?? []).some((a) => Number(a.attempt ?? 0) >= 1 && a.lastStartedTime)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const good = await Promise.all(
    inputs.map((input, n) => start(`good-${n}`, input, path.join(work, `out-${n}/`))),
  );
  const stuckOutcome = stuck.result().then(
    () => ({ at: Date.now(), how: 'completed (it should not have)' }),
    (error: unknown) => ({
      at: Date.now(),
      how: error instanceof WorkflowFailedError ? `failed: ${rootMessage(error)}` : String(error),
    }),
  );
  const results = await Promise.all(
    good.map(async (handle) => {
      const summary = await handle.result();
      return { summary, at: Date.now() };
    }),
  );
  /** What a good run was doing at `t`. */
  const phaseAt = ({ summary, at }: (typeof results)[number], t: number): string => {
    const match = summary.stages.find((s) => s.stage === 'match');
    const datasets = summary.stages.filter((s) => s.stage !== 'match');
    const firstDataset = Math.min(...datasets.map((s) => s.startedAt));
    const lastStage = Math.max(...summary.stages.map((s) => s.updatedAt));
    if (match && t < match.startedAt) return 'planning';
    if (match && t <= match.updatedAt) return 'match';
    if (t < firstDataset) return 'enrich plan';
    if (t <= lastStage) return 'datasets';
    return t <= at ? 'commit' : 'done';
  };
  const settled = await Promise.race([
    stuckOutcome,
    new Promise<undefined>((r) => setTimeout(() => r(undefined), 0)),
  ]);
  let stuckReport: string;
  if (settled) {
    stuckReport = `the stuck run ended on its own after ${seconds(settled.at - t0)} s, ${settled.how}`;
  } else {
    const cancelAt = Date.now();
    await stuck.cancel();
    const ended = await stuckOutcome;
    stuckReport = `the stuck run was still running when both good runs had finished; cancelled, it ended ${seconds(ended.at - cancelAt)} s later (${ended.how.slice(0, 120)})`;
  }
  clearInterval(sampler);
  const peak = rss.reduce((a, b) => (b[1] > a[1] ? b : a), [t0, 0]);
  const calls = results.reduce((sum, r) => sum + r.summary.stages.reduce((n, s) => n + s.calls, 0), 0);
  const ideal = (calls / ratePerSecond) * 1000;
  const last = Math.max(...results.map((r) => r.at));
  console.log(
    [
      ...results.map(
        ({ summary, at }, n) =>
          `good run ${n}: ${summary.status} in ${seconds(at - t0)} s, ${summary.stages.reduce((sum, s) => sum + s.calls, 0)} calls, tables ${summary.tables.map((t) => `${t.table} ${t.rows}`).join(', ')}`,
      ),
      `both good runs: ${seconds(last - t0)} s = ${((last - t0) / ideal).toFixed(3)} x the ideal ${seconds(ideal)} s (${calls} calls at ${ratePerSecond}/s)`,
      stuckReport,
      `worker peak RSS: ${rssMb(worker.process.pid!, 'VmHWM').toFixed(0)} MB (bar 450), sampled max ${peak[1].toFixed(0)} MB at ${seconds(peak[0] - t0)} s (good runs in ${results.map((r) => phaseAt(r, peak[0])).join(' and ')})`,
    ].join('\n'),
  );
  await client.connection.close();
  await temporal.stop();
  blackHole.close();
} finally {
  for (const child of children) child.kill('SIGTERM');
}
