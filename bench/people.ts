// Benchmark of a people run at the service's rate limit (issue 15): a sandbox of B businesses and P
// prospects with a rate limit and added latency; a people list drawn from the sandbox's own prospects
// (distinct people, some it does not know, and duplicate rows); prospect match, the prospect datasets
// and (when the run takes them) the employers' business datasets. Prints the end-to-end time against
// the ideal (calls the service received / rate), the run's phases and its own steps, calls per stage
// and per route, rows per table, and the worker's peak RSS. Sandbox and worker run in their own
// processes; what the service received is the sandbox's own count (`GET /_admin/traffic`), so nothing
// stands between the worker and the service (a counting proxy in this process took ~7 s of the two
// cores' CPU in a 31 s run). ENRICHFLOW_BENCH_WORKER_FLAGS adds Node flags to the worker (`--cpu-prof`).
//   npx tsx bench/people.ts [--people 40000] [--unknown 0.1] [--duplicates 10000] [--rate 100]
//       [--latency 50] [--datasets profiles,contacts_information,firmographics]
import { type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { JobSpecError, toRunInput, validateJobSpec } from '../jobs/job-spec.js';
import type { RunSummary } from '../pipeline/run-types.js';
import type { TrafficView } from '../sandbox/http/traffic.js';
import {
  cpuSeconds,
  idleBetweenStages,
  rssMb,
  runPhases,
  runTimeline,
  sandboxAdmin,
  sampleRss,
  startBenchStack,
  writePeopleInput,
  type BenchStack,
} from './support.js';

const { values: args } = parseArgs({
  options: {
    businesses: { type: 'string', default: '50000' },
    prospects: { type: 'string', default: '50000' },
    people: { type: 'string', default: '40000' },
    unknown: { type: 'string', default: '0.1' },
    duplicates: { type: 'string', default: '10000' },
    rate: { type: 'string', default: '100' },
    latency: { type: 'string', default: '50' },
    window: { type: 'string', default: '48' },
    datasets: { type: 'string', default: 'profiles,contacts_information,firmographics' },
    // The worker's V8 heap cap, as docker-compose.yml deploys it; 0 = Node's default.
    heap: { type: 'string', default: '192' },
  },
});
const ratePerSecond = Number(args.rate);
const people = Number(args.people);
const unknown = Math.round(people * Number(args.unknown));
const datasets = args.datasets.split(',').map((d) => d.trim());
const KEY = 'bench-key';
const ADMIN = 'bench-admin';
const BARS = { ideal: 1.1, rssMb: 400 };
const work = mkdtempSync(path.join(tmpdir(), 'enrichflow-bench-people-'));
const input = path.join(work, 'people.csv');
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** The run's request, checked as `enrichflow enrich` checks it, before anything starts. */
function runRequest(): ReturnType<typeof toRunInput> {
  try {
    return toRunInput(
      validateJobSpec(
        {
          job_name: 'bench-people',
          input: { location: input },
          datasets,
          output: path.join(work, 'out') + '/',
        },
        '--datasets',
      ),
      '1',
    );
  } catch (error) {
    if (!(error instanceof JobSpecError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
}
const request = runRequest();

const children: ChildProcess[] = [];
let stack: BenchStack | undefined;
try {
  console.log(
    `sandbox ${args.businesses} businesses, ${args.prospects} prospects; ${people} distinct people (${unknown} unknown) + ${args.duplicates} duplicate rows; rate ${ratePerSecond}/s, latency ${args.latency} ms; datasets ${datasets.join(',')}`,
  );
  console.log(`load average at start: ${loadavg()}`);
  const stats = writePeopleInput(input, {
    businesses: Number(args.businesses),
    prospects: Number(args.prospects),
    known: people - unknown,
    unknown,
    duplicates: Number(args.duplicates),
  });
  console.log(
    `input: ${stats.rows} rows (${stats.known} known people with ${stats.employers} employers, ${stats.unknown} unknown, ${stats.duplicates} duplicates of which ${stats.duplicatesByOtherKey} by another key)`,
  );
  stack = await startBenchStack(children, {
    businesses: Number(args.businesses),
    prospects: Number(args.prospects),
    ratePerSecond,
    apiKey: KEY,
    adminKey: ADMIN,
    preload: ['firmographics'],
    latencyMs: Number(args.latency),
    heapMb: Number(args.heap),
    workDir: work,
  });
  const { client, worker } = stack;
  const rss = sampleRss(worker.pid!);
  const traffic = (method: 'GET' | 'DELETE') =>
    sandboxAdmin(stack!.sandboxUrl, ADMIN, method, 'traffic') as Promise<TrafficView>;
  await traffic('DELETE');
  // CPU each process uses during the run: on a shared 2-core machine, what competes with pacing.
  const cpuOf = (): Record<string, number> =>
    Object.fromEntries(Object.entries(stack!.pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const cpuBefore = cpuOf();

  const started = Date.now();
  const workflowId = `bench-people-${started}`;
  const summary = (await client.workflow.execute('enrichRunWorkflow', {
    taskQueue: 'enrichflow',
    workflowId,
    args: [{ ...request, apiTaskQueue: 'enrichflow-api', windowSize: Number(args.window) }],
  })) as RunSummary;
  const ended = Date.now();
  rss.stop();
  const cpuAfter = cpuOf();
  const elapsed = (ended - started) / 1000;
  const workerRss = rssMb(worker.pid!, 'VmHWM');

  const served = await traffic('GET');
  const received = served.calls;
  const ideal = received / ratePerSecond;
  const calls = summary.stages.reduce((sum, s) => sum + s.calls, 0);
  const phases = runPhases(summary, started, ended);
  const datasetsPhase = phases.find((p) => p.name === 'datasets')!;
  const idle = idleBetweenStages(summary, datasetsPhase.from, datasetsPhase.to) / 1000;
  const firstStage = Math.min(...summary.stages.map((s) => s.startedAt));
  const lastStage = Math.max(...summary.stages.map((s) => s.updatedAt));
  const apiSeconds = (lastStage - firstStage) / 1000;
  const at = (t: number) => ((t - started) / 1000).toFixed(1);
  const ratio = elapsed / ideal;
  const report = [
    `load average at end: ${loadavg()}`,
    `plan: ${summary.plan.inputRows} rows, ${summary.plan.rejectedRows} rejected, ${summary.plan.uniqueKeys} distinct match keys; matched rows ${summary.enrichPlan.matchedRows}, unmatched ${summary.enrichPlan.unmatchedRows}, distinct ids ${summary.enrichPlan.uniqueIds} (expected ${stats.known} people, ${stats.employers} employers); stage items ${summary.enrichPlan.stages.map((s) => `${s.stage} ${s.totalItems}`).join(', ')}`,
    `phases: ${phases.map((p) => `${p.name} ${((p.to - p.from) / 1000).toFixed(1)} s`).join(', ')}; no stage running for ${idle.toFixed(1)} s within the datasets phase`,
    `stages (s from start): ${summary.stages.map((s) => `${s.stage} ${at(s.startedAt)}-${at(s.updatedAt)}`).join(', ')}`,
    `calls (enrichflow): ${calls} (${summary.stages.map((s) => `${s.stage} ${s.calls}`).join(', ')})`,
    `calls the sandbox received: ${received} (${served.routes.map((r) => `${r.route} ${r.calls}${r.statuses['429'] ? `, ${r.statuses['429']} answered 429` : ''}, answered in median ${r.median_ms} ms, p95 ${r.p95_ms} ms`).join('; ')})`,
    `CPU during the run, s: ${Object.entries(cpuAfter)
      .map(([name, s]) => `${name} ${(s - (cpuBefore[name] ?? 0)).toFixed(1)}`)
      .join(
        ', ',
      )} (of ${(availableParallelism() * elapsed).toFixed(0)} s on ${availableParallelism()} cores)`,
    `ideal at ${ratePerSecond}/s: ${received} / ${ratePerSecond} = ${ideal.toFixed(1)} s`,
    `enrichflow end to end: ${elapsed.toFixed(1)} s = ${ratio.toFixed(3)} x ideal (bar ${BARS.ideal}: ${ratio <= BARS.ideal ? 'met' : 'missed'}); API stages ${apiSeconds.toFixed(1)} s, ${(received / apiSeconds).toFixed(1)} calls/s`,
    `worker peak RSS: ${workerRss.toFixed(0)} MB (bar ${BARS.rssMb}: ${workerRss <= BARS.rssMb ? 'met' : 'missed'}; peak per phase, MB: ${phases.map((p) => `${p.name} ${rss.peakBetween(p.from, p.to).toFixed(0)}`).join(', ')})`,
    `run status: ${summary.status}, failed batches ${summary.failedBatches}`,
    `output rows: ${summary.tables.map((t) => `${t.table} ${t.rows}`).join(', ')}`,
  ];
  console.log(report.join('\n'));
  console.log(
    `the run's own steps (s from start):\n  ${(await runTimeline(client, workflowId, started)).join('\n  ')}`,
  );
} finally {
  await stack?.stop();
  for (const child of children) child.kill('SIGTERM');
}
