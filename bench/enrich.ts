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
import pLimit from 'p-limit';
import { DataServiceClient } from '../client/index.js';
import { rssMb, runPhases, sampleRss, sandboxAdmin, startBenchStack, writeCompanyInput } from './support.js';
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
  const stack = await startBenchStack(children, {
    businesses,
    ratePerSecond,
    apiKey: KEY,
    adminKey: ADMIN,
    preload: DATASETS,
    latencyMs,
    heapMb: Number(args.heap),
    workDir: work,
  });
  const { client, worker, sandboxUrl } = stack;

  // The worker's RSS over time, to tell which phase sets the peak.
  const rss = sampleRss(worker.pid!);
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
  rss.stop();
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

  const phases = runPhases(summary, started, started + elapsed * 1000);
  const report = [
    `phases: ${phases.map((p) => `${p.name} ${((p.to - p.from) / 1000).toFixed(1)} s`).join(', ')}`,
    `calls (enrichflow): ${calls} (match ${summary.stages[0]?.calls}, datasets ${summary.stages
      .slice(1)
      .map((s) => s.calls)
      .join(' + ')})`,
    `ideal at ${ratePerSecond}/s: ${ideal.toFixed(1)} s`,
    `enrichflow end to end: ${elapsed.toFixed(1)} s = ${(elapsed / ideal).toFixed(3)} x ideal (API stages ${apiSeconds.toFixed(1)} s, ${(calls / apiSeconds).toFixed(1)} calls/s)`,
    `plain p-limit script, same calls (${baselineCalls}, ${baselineRetries} retried after a 429) at the same rate: ${baseline.toFixed(1)} s; enrichflow = ${(elapsed / baseline).toFixed(3)} x the script`,
    `worker peak RSS: ${workerRss.toFixed(0)} MB (peak per phase, MB: ${phases.map((p) => `${p.name} ${rss.peakBetween(p.from, p.to).toFixed(0)}`).join(', ')})`,
    `output rows: ${summary.tables.map((t) => `${t.table} ${t.rows}`).join(', ')}`,
  ];
  console.log(report.join('\n'));
  await stack.stop();
} finally {
  for (const child of children) child.kill('SIGTERM');
}
