// Benchmark of search exports (issue 5): a sandbox of ~1,000,000 prospects, a filter matching about
// 200,000 of them (over three times the 60,000 offset cap), exported at a configured rate limit. Prints
// the plan, calls, the call rate against the limit, the time per phase, the worker's peak RSS, and
// checks that the Parquet holds every record of the search exactly once. The sandbox and the worker
// run in their own processes; generating the sandbox's data takes a few minutes the first time.
//   npx tsx bench/export.ts [--prospects 1000000] [--businesses 20000] [--rate 50] [--latency 50]
//                           [--filters '{"job_level":{"values":["manager"]}}'] [--cap 60000]
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { queryRows, sqlString, withDuckDb } from '../storage/duckdb.js';
import pLimit from 'p-limit';
import { DataServiceClient } from '../client/index.js';
import { composeFilters, type DimensionDomain, type SearchFilters } from '../pipeline/export-filters.js';
import { freePort } from '../stack/ports.js';
import { ROOT, rssMb, tsxProcess, waitFor, waitForPollers, WORKER_ENV, workerNodeFlags } from './support.js';
import { startTemporalDevServer } from '../stack/temporal.js';
import { workflowsPath } from '../workers/worker.js';
import type { ExportRunWorkflowInput, ExportSummary } from '../pipeline/export-types.js';

const { values: args } = parseArgs({
  options: {
    prospects: { type: 'string', default: '1000000' },
    businesses: { type: 'string', default: '20000' },
    rate: { type: 'string', default: '50' },
    latency: { type: 'string', default: '50' },
    window: { type: 'string', default: '64' },
    filters: { type: 'string', default: '{"job_level":{"values":["manager"]}}' },
    cap: { type: 'string', default: '60000' },
    // The worker as deployed: workflows bundled ahead (not at start), V8's old space capped at this many MB.
    heap: { type: 'string', default: '0' },
    'bundle-at-start': { type: 'boolean', default: false },
    'skip-baseline': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    // A file the worker appends its memory breakdown to every second (V8 heap, buffers, RSS).
    'memory-log': { type: 'string' },
  },
});
const prospects = Number(args.prospects);
const businesses = Number(args.businesses);
const ratePerSecond = Number(args.rate);
const latencyMs = Number(args.latency);
// As docker-compose.yml runs the worker: heap flags and malloc arenas (`workerNodeFlags`, `WORKER_ENV`).
const heapFlags = workerNodeFlags(Number(args.heap));
const filters = JSON.parse(args.filters) as Record<string, unknown>;
const KEY = 'bench-key';
const ADMIN = 'bench-admin';
const work = mkdtempSync(path.join(tmpdir(), 'enrichflow-bench-export-'));
const children: ChildProcess[] = [];
let stopTemporal: (() => Promise<void>) | undefined;

/** CPU seconds a process has used (user + system). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

try {
  console.log(
    `sandbox ${prospects} prospects / ${businesses} businesses; rate limit ${ratePerSecond}/s; latency ${latencyMs} ms; filters ${JSON.stringify(filters)}`,
  );
  console.log(
    `worker: ${args['bundle-at-start'] ? 'enrichflow worker (bundles workflows at start)' : 'workflows bundled ahead'}, ${heapFlags.join(' ')}, MALLOC_ARENA_MAX=${WORKER_ENV.MALLOC_ARENA_MAX}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const sandboxPort = await freePort();
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  const t0 = Date.now();
  const sandbox = tsxProcess(
    children,
    [
      'bin/enrichflow-src.ts',
      'sandbox',
      'serve',
      '--port',
      String(sandboxPort),
      '--data-dir',
      path.join(ROOT, '.data', 'bench-export-sandbox'),
      '--businesses',
      String(businesses),
      '--prospects',
      String(prospects),
      // The service's own limit, a little above the configured rate: the budget is the workers' to keep.
      '--rate-limit',
      String(Math.ceil(ratePerSecond * 60 * 1.1)),
      '--api-key',
      `bench:${KEY}`,
      '--admin-key',
      ADMIN,
    ],
    { LOG_LEVEL: 'warn' },
  );
  await waitFor(`${sandboxUrl}/healthcheck/http`, 3_600_000);
  console.log(`sandbox ready in ${seconds(Date.now() - t0)}`);
  const faults = await fetch(`${sandboxUrl}/_admin/faults`, {
    method: 'PUT',
    headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify({ rules: [{ match: '/v1/*', kind: 'latency', latencyMs }] }),
  });
  if (!faults.ok) throw new Error(`latency: ${faults.status}`);

  // The service's own count of the search, for the check at the end.
  const service = new DataServiceClient({ baseUrl: sandboxUrl, apiKey: KEY });
  const probe = await service.fetchProspects({
    mode: 'preview',
    size: 1,
    page_size: 1,
    next_cursor: 'null',
    filters,
  });
  const truth = probe.body.total_results;
  await service.close();
  console.log(`the search matches ${truth} prospects (${(truth / Number(args.cap)).toFixed(2)} x the cap)`);

  const temporal = await startTemporalDevServer({ dataDir: path.join(work, 'temporal'), headless: true });
  stopTemporal = () => temporal.stop();
  const env = {
    ENRICHFLOW_TEMPORAL_ADDRESS: temporal.address,
    ENRICHFLOW_API_BASE_URL: sandboxUrl,
    ENRICHFLOW_API_KEY: KEY,
    ENRICHFLOW_API_RATE_PER_MINUTE: String(ratePerSecond * 60),
    ENRICHFLOW_WORKER_MAX_ACTIVITIES: '96',
    ENRICHFLOW_WORK_DIR: work,
    LOG_LEVEL: 'warn',
  };
  let worker: ChildProcess;
  if (args['bundle-at-start']) {
    worker = tsxProcess(children, ['bin/enrichflow-src.ts', 'worker'], { ...env, ...WORKER_ENV }, heapFlags);
  } else {
    // The worker entry of the kill-and-resume test: the same workers, from a bundle built here.
    const bundle = path.join(work, 'workflows.js');
    const { code } = await bundleWorkflowCode({
      workflowsPath: workflowsPath(),
      logger: { ...console, trace() {}, debug() {}, info() {}, warn() {} },
    });
    writeFileSync(bundle, code);
    worker = tsxProcess(
      children,
      ['test/export/worker-process.ts'],
      {
        ...env,
        ...WORKER_ENV,
        WORKFLOW_BUNDLE: bundle,
        ...(args['memory-log'] ? { WORKER_MEMORY_LOG: path.resolve(args['memory-log']) } : {}),
      },
      heapFlags,
    );
  }
  const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
  await waitForPollers(client, ['enrichflow', 'enrichflow-api']);
  console.log('worker ready');

  const output = path.join(work, 'out');
  const input: ExportRunWorkflowInput = {
    runId: 'bench-export',
    jobName: 'bench',
    runKey: '1',
    target: 'prospects',
    filters,
    output,
    windowSize: Number(args.window),
    offsetCap: Number(args.cap),
    apiTaskQueue: 'enrichflow-api',
  };
  // Worker memory during the export, sampled; the start-up peak (bundling the workflows) is reported apart.
  const startupPeak = rssMb(worker.pid!, 'VmHWM');
  const cpuBefore = {
    worker: cpuSeconds(worker.pid!),
    sandbox: cpuSeconds(sandbox.pid!),
    temporal: cpuSeconds(temporal.process.pid),
  };
  const started = Date.now();
  let exportPeak = 0;
  const timeline: string[] = [];
  let ticks = 0;
  const sampler = setInterval(() => {
    const rss = rssMb(worker.pid!, 'VmRSS');
    exportPeak = Math.max(exportPeak, rss);
    if (++ticks % 25 === 0) timeline.push(`${Math.round((Date.now() - started) / 1000)}s:${rss.toFixed(0)}`);
  }, 200);
  const summary = (await client.workflow.execute('exportRunWorkflow', {
    taskQueue: 'enrichflow',
    workflowId: input.runId,
    args: [input],
  })) as ExportSummary;
  const elapsed = Date.now() - started;
  clearInterval(sampler);
  const cpu = {
    worker: cpuSeconds(worker.pid!) - cpuBefore.worker,
    sandbox: cpuSeconds(sandbox.pid!) - cpuBefore.sandbox,
    temporal: cpuSeconds(temporal.process.pid) - cpuBefore.temporal,
  };
  exportPeak = Math.max(exportPeak, rssMb(worker.pid!, 'VmRSS'));

  const plan = summary.stages.find((s) => s.stage === 'plan');
  const pages = summary.stages.find((s) => s.stage === 'pages');
  const apiStart = plan?.startedAt ?? pages?.startedAt ?? started;
  const apiEnd = pages?.updatedAt ?? apiStart;
  const apiCalls = summary.counts.calls;
  const rate = apiCalls / ((apiEnd - apiStart) / 1000);
  const pagesRate = pages ? pages.calls / ((pages.updatedAt - pages.startedAt) / 1000) : 0;

  const tableDir = path.join(output, input.runId, 'prospects');
  const files = readdirSync(tableDir).map((f) => path.join(tableDir, f));
  const [check] = await withDuckDb({}, (connection) =>
    queryRows<{ n: number; d: number }>(
      connection,
      `SELECT count(*) AS n, count(DISTINCT prospect_id) AS d FROM read_parquet([${files.map(sqlString).join(', ')}])`,
    ),
  );
  const rows = Number(check?.n ?? 0);
  const distinct = Number(check?.d ?? 0);
  // The same pages from a plain script (p-limit at the same window, paced to the same rate), in the same
  // run: what the sandbox can serve on this machine right now, to read the pipeline's rate against.
  let baseline = '';
  if (!args['skip-baseline']) {
    worker.kill('SIGTERM');
    await fetch(`${sandboxUrl}/_admin/rate-limit/reset`, {
      method: 'POST',
      headers: { 'x-admin-key': ADMIN },
    });
    const spec = JSON.parse(
      readFileSync(path.join(output, input.runId, '_work', 'export', 'spec.json'), 'utf8'),
    ) as { filters: SearchFilters; dimensions: DimensionDomain[] };
    const plain = new DataServiceClient({
      baseUrl: sandboxUrl,
      apiKey: KEY,
      connections: Number(args.window),
    });
    const limit = pLimit(Number(args.window));
    let next = Date.now();
    const pacedStart = Date.now();
    let plainRecords = 0;
    await Promise.all(
      summary.plan.slices.flatMap((slice) =>
        Array.from({ length: slice.pages }, (_, i) =>
          limit(async () => {
            const at = next;
            next += 1000 / ratePerSecond;
            if (at > Date.now()) await new Promise((r) => setTimeout(r, at - Date.now()));
            const { body } = await plain.fetchProspects({
              mode: 'full',
              size: summary.plan.cap,
              page_size: summary.plan.pageSize,
              page: i + 1,
              filters: composeFilters(spec.filters, spec.dimensions, slice.constraints),
            });
            plainRecords += body.data.length;
          }),
        ),
      ),
    );
    const plainSeconds = (Date.now() - pacedStart) / 1000;
    await plain.close();
    const plainPages = summary.plan.slices.reduce((sum, s) => sum + s.pages, 0);
    baseline = `plain p-limit script, same ${plainPages} pages, same window and rate: ${seconds(plainSeconds * 1000)}, ${(plainPages / plainSeconds).toFixed(1)} pages/s (${plainRecords} records); enrichflow's pages at ${((pagesRate / (plainPages / plainSeconds)) * 100).toFixed(1)} % of it`;
  }
  const report = [
    `status: ${summary.status}; plan: ${summary.plan.slices.length} slices (${summary.plan.slices.map((s) => `${s.count} ${s.method}`).join(', ')}), slice sum ${summary.plan.sliceSum} vs search ${summary.plan.total.n}`,
    `calls: ${apiCalls} (${summary.plan.probes} count probes, ${pages?.calls ?? 0} pages); ideal at ${ratePerSecond}/s: ${seconds((apiCalls / ratePerSecond) * 1000)}`,
    `call rate: ${rate.toFixed(1)}/s over planning + pages (${((rate / ratePerSecond) * 100).toFixed(1)} % of the limit); pages alone ${pagesRate.toFixed(1)}/s (${((pagesRate / ratePerSecond) * 100).toFixed(1)} %)`,
    `time: end to end ${seconds(elapsed)} = planning ${seconds((pages?.startedAt ?? apiStart) - apiStart)} + pages ${seconds(pages ? pages.updatedAt - pages.startedAt : 0)} + commit ${seconds(started + elapsed - apiEnd)} (start ${seconds(apiStart - started)})`,
    `output: ${rows} rows, ${distinct} distinct ids; the service counts ${truth}: ${rows === truth && distinct === truth ? 'every record exactly once' : 'MISMATCH'}`,
    `worker RSS timeline (s:MB): ${timeline.join(' ')}`,
    `worker RSS during the export: peak ${exportPeak.toFixed(0)} MB (start-up peak, bundling workflows: ${startupPeak.toFixed(0)} MB)`,
    `CPU during the export (share of one core): ${Object.entries(cpu)
      .map(
        ([name, used]) => `${name} ${used.toFixed(1)} s (${((used / (elapsed / 1000)) * 100).toFixed(0)} %)`,
      )
      .join(', ')}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
    ...(baseline ? [baseline] : []),
  ];
  console.log(report.join('\n'));
  await client.connection.close();
} finally {
  for (const child of children) child.kill('SIGTERM');
  await stopTemporal?.();
  if (args.keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
