// Benchmark of the main job at the service's rate limit (issue 4): a sandbox with N businesses, a rate
// limit and added latency; an input of M rows; match plus three datasets. Prints the end-to-end time
// against the ideal (calls / rate) and against a plain p-limit script making the same calls at the same
// rate in the same run, and the worker's peak RSS. The sandbox and the worker run in their own processes.
//   npx tsx bench/enrich.ts [--businesses 200000] [--rows 100000] [--rate 100] [--latency 50]
import { type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import pLimit from 'p-limit';
import { DataServiceClient } from '../client/index.js';
import {
  rssMb,
  sandboxAdmin,
  startBenchSandbox,
  startBenchWorker,
  waitForPollers,
  WORKER_ENV,
  workerNodeFlags,
  writeCompanyInput,
} from './support.js';
import { startTemporalDevServer } from '../stack/temporal.js';
import type { RunSummary } from '../pipeline/run-types.js';
import type { BulkDataset } from '../contract/datasets.js';

const { values: args } = parseArgs({
  options: {
    businesses: { type: 'string', default: '200000' },
    rows: { type: 'string', default: '100000' },
    rate: { type: 'string', default: '100' },
    latency: { type: 'string', default: '50' },
    window: { type: 'string', default: '48' },
    // The worker's V8 heap cap, as docker-compose.yml deploys it (NODE_OPTIONS, with the other flags
    // and environment of `workerNodeFlags` and `WORKER_ENV`); 0 = Node's default.
    heap: { type: 'string', default: '192' },
  },
});
const businesses = Number(args.businesses);
const rows = Number(args.rows);
const ratePerSecond = Number(args.rate);
const latencyMs = Number(args.latency);
const nodeFlags = workerNodeFlags(Number(args.heap));
const DATASETS: BulkDataset[] = ['firmographics', 'technographics', 'funding_and_acquisition'];
const KEY = 'bench-key';
const ADMIN = 'bench-admin';
const work = mkdtempSync(path.join(tmpdir(), 'enrichflow-bench-'));
const children: ChildProcess[] = [];

const admin = (base: string, method: string, route: string, body?: unknown) =>
  sandboxAdmin(base, ADMIN, method, route, body);

try {
  console.log(
    `businesses ${businesses}, input rows ${rows}, rate ${ratePerSecond}/s, latency ${latencyMs} ms`,
  );
  const input = path.join(work, 'companies.csv');
  writeCompanyInput(input, businesses, rows);
  const lines = readFileSync(input, 'utf8').trimEnd().split('\n');
  const t0 = Date.now();
  const { url: sandboxUrl } = await startBenchSandbox(children, {
    businesses,
    ratePerSecond,
    apiKey: KEY,
    adminKey: ADMIN,
    preload: DATASETS,
  });
  console.log(`sandbox ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (indexes and datasets loaded)`);
  await admin(sandboxUrl, 'PUT', 'faults', { rules: [{ match: '/v1/*', kind: 'latency', latencyMs }] });

  const temporal = await startTemporalDevServer({ dataDir: path.join(work, 'temporal'), headless: true });
  const env = {
    ENRICHFLOW_TEMPORAL_ADDRESS: temporal.address,
    ENRICHFLOW_API_BASE_URL: sandboxUrl,
    ENRICHFLOW_API_KEY: KEY,
    ENRICHFLOW_API_RATE_PER_MINUTE: String(ratePerSecond * 60),
    ENRICHFLOW_WORKER_MAX_ACTIVITIES: '96',
    LOG_LEVEL: 'warn',
  };
  const { process: worker, compiled } = startBenchWorker(children, env, nodeFlags);
  const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
  await waitForPollers(client, ['enrichflow', 'enrichflow-api']);
  console.log(
    `worker ready (${compiled ? 'compiled dist/' : 'TypeScript via tsx'}, ${nodeFlags.join(' ')}, MALLOC_ARENA_MAX=${WORKER_ENV.MALLOC_ARENA_MAX})`,
  );

  // The worker's RSS over time, to tell which phase sets the peak.
  const rssSamples: [number, number][] = [];
  const sampler = setInterval(() => {
    try {
      rssSamples.push([Date.now(), rssMb(worker.pid!, 'VmRSS')]);
    } catch {
      // the worker is gone
    }
  }, 200);
  const started = Date.now();
  const summary = (await client.workflow.execute('enrichRunWorkflow', {
    taskQueue: 'enrichflow',
    workflowId: `bench-${Date.now()}`,
    args: [
      {
        jobName: 'bench',
        runKey: '1',
        input: { location: input },
        output: path.join(work, 'out') + '/',
        datasets: DATASETS,
        apiTaskQueue: 'enrichflow-api',
        windowSize: Number(args.window),
      },
    ],
  })) as RunSummary;
  const elapsed = (Date.now() - started) / 1000;
  clearInterval(sampler);
  const peakBetween = (from: number, to: number) =>
    Math.max(0, ...rssSamples.filter(([t]) => t >= from && t <= to).map(([, mb]) => mb)).toFixed(0);
  const workerRss = rssMb(worker.pid!, 'VmHWM');
  const calls = summary.stages.reduce((sum, s) => sum + s.calls, 0);
  const apiSeconds =
    (Math.max(...summary.stages.map((s) => s.updatedAt)) -
      Math.min(...summary.stages.map((s) => s.startedAt))) /
    1000;
  const ideal = calls / ratePerSecond;
  console.log(
    `enrichflow: ${calls} calls in ${elapsed.toFixed(1)} s = ${(elapsed / ideal).toFixed(3)} x the ideal ${ideal.toFixed(1)} s; worker peak RSS ${workerRss.toFixed(0)} MB`,
  );

  // The same calls from a plain script: p-limit for concurrency, paced to the same rate.
  await admin(sandboxUrl, 'POST', 'rate-limit/reset');
  const service = new DataServiceClient({ baseUrl: sandboxUrl, apiKey: KEY, connections: 96 });
  const keys = [...new Map(lines.slice(1).map((l) => [l, l])).keys()].map((l) => {
    const comma = l.lastIndexOf(',');
    return { name: l.slice(1, comma - 1).replace(/""/g, '"'), domain: l.slice(comma + 1) };
  });
  const limit = pLimit(96);
  let next = Date.now();
  // A careful script: paced to the rate, and on a 429 it waits the Retry-After and tries again.
  const paced = async <T>(fn: () => Promise<T>): Promise<T> => {
    for (;;) {
      const at = next;
      next += 1000 / ratePerSecond;
      const wait = at - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      try {
        return await fn();
      } catch (error) {
        const retryAfterMs = (error as { retryAfterMs?: number }).retryAfterMs;
        if (retryAfterMs === undefined) throw error;
        baselineRetries += 1;
        await new Promise((r) => setTimeout(r, retryAfterMs));
      }
    }
  };
  let baselineRetries = 0;
  const baselineStart = Date.now();
  next = Date.now();
  let baselineCalls = 0;
  const ids: string[] = [];
  await Promise.all(
    Array.from({ length: Math.ceil(keys.length / 50) }, (_, i) =>
      limit(() =>
        paced(async () => {
          baselineCalls += 1;
          const { body } = await service.matchBusinesses({
            businesses_to_match: keys.slice(i * 50, i * 50 + 50),
          });
          for (const m of body.matched_businesses) if (m.business_id) ids.push(m.business_id);
        }),
      ),
    ),
  );
  const unique = [...new Set(ids)];
  await Promise.all(
    DATASETS.flatMap((dataset) =>
      Array.from({ length: Math.ceil(unique.length / 50) }, (_, i) =>
        limit(() =>
          paced(async () => {
            baselineCalls += 1;
            await service.bulkEnrich(dataset, { business_ids: unique.slice(i * 50, i * 50 + 50) });
          }),
        ),
      ),
    ),
  );
  const baseline = (Date.now() - baselineStart) / 1000;
  await service.close();

  const firstStage = Math.min(...summary.stages.map((s) => s.startedAt));
  const lastStage = Math.max(...summary.stages.map((s) => s.updatedAt));
  const matchStage = summary.stages.find((s) => s.stage === 'match');
  const datasetsStart = Math.min(
    ...summary.stages.filter((s) => s.stage !== 'match').map((s) => s.startedAt),
  );
  const memory = [
    `planning ${peakBetween(started, firstStage)}`,
    matchStage ? `match ${peakBetween(matchStage.startedAt, matchStage.updatedAt)}` : '',
    matchStage ? `enrich plan ${peakBetween(matchStage.updatedAt, datasetsStart)}` : '',
    `datasets ${peakBetween(datasetsStart, lastStage)}`,
    `commit ${peakBetween(lastStage, started + elapsed * 1000)}`,
  ].filter(Boolean);
  const phases = [
    `planning ${((firstStage - started) / 1000).toFixed(1)} s`,
    matchStage ? `match ${((matchStage.updatedAt - matchStage.startedAt) / 1000).toFixed(1)} s` : '',
    matchStage
      ? `enrich plan ${((Math.min(...summary.stages.filter((s) => s.stage !== 'match').map((s) => s.startedAt)) - matchStage.updatedAt) / 1000).toFixed(1)} s`
      : '',
    `datasets ${((lastStage - Math.min(...summary.stages.filter((s) => s.stage !== 'match').map((s) => s.startedAt))) / 1000).toFixed(1)} s`,
    `commit ${((started + elapsed * 1000 - lastStage) / 1000).toFixed(1)} s`,
  ].filter(Boolean);
  const report = [
    `phases: ${phases.join(', ')}`,
    `calls (enrichflow): ${calls} (match ${summary.stages[0]?.calls}, datasets ${summary.stages
      .slice(1)
      .map((s) => s.calls)
      .join(' + ')})`,
    `ideal at ${ratePerSecond}/s: ${ideal.toFixed(1)} s`,
    `enrichflow end to end: ${elapsed.toFixed(1)} s = ${(elapsed / ideal).toFixed(3)} x ideal (API stages ${apiSeconds.toFixed(1)} s, ${(calls / apiSeconds).toFixed(1)} calls/s)`,
    `plain p-limit script, same calls (${baselineCalls}, ${baselineRetries} retried after a 429) at the same rate: ${baseline.toFixed(1)} s; enrichflow = ${(elapsed / baseline).toFixed(3)} x the script`,
    `worker peak RSS: ${workerRss.toFixed(0)} MB (peak per phase, MB: ${memory.join(', ')})`,
    `output rows: ${summary.tables.map((t) => `${t.table} ${t.rows}`).join(', ')}`,
  ];
  console.log(report.join('\n'));
  await client.connection.close();
  await temporal.stop();
} finally {
  for (const child of children) child.kill('SIGTERM');
}
