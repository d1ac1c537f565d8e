// What the benchmarks share: child processes run through tsx, the sandbox and a worker in their own
// processes, inputs drawn from the sandbox's businesses and prospects, waiting for a server or for a
// worker's pollers, a process's memory read from /proc, and a run's phases read from its summary.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DEFAULT_SEED } from '../sandbox/app.js';
import { employerWeights, generateBusinessRows } from '../sandbox/data/businesses.js';
import { generateProspect, type ProspectContext, type ProspectRow } from '../sandbox/data/prospects.js';
import { seedKey, streamFor, type SeededRandom } from '../sandbox/data/random.js';
import { freePort } from '../stack/ports.js';
import { startTemporalDevServer } from '../stack/temporal.js';
import type { RunSummary, StageResult } from '../pipeline/run-types.js';

export const ROOT = path.resolve(import.meta.dirname, '..');

/** Starts `node [nodeFlags] --import tsx <argv>` from the repository, stderr shown; adds it to `children`. */
export function tsxProcess(
  children: ChildProcess[],
  argv: string[],
  env: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
): ChildProcess {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', ...argv], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

/** Polls `url` until it answers 2xx; fails at once if `child` (the server) has exited. */
export async function waitFor(url: string, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`${url}: the process exited (${child.exitCode})`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not come up`);
}

/** Waits until a worker polls every task queue, so a timed run does not include the worker's start. */
export async function waitForPollers(client: Client, queues: string[]): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (const name of queues) {
    for (;;) {
      const described = await client.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name },
        taskQueueType: name.endsWith('-api') ? 2 : 1,
      });
      if ((described.pollers ?? []).length > 0) break;
      if (Date.now() > deadline) throw new Error(`no worker polls ${name}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** CPU time (user and system) a process has used so far, seconds. */
export function cpuSeconds(pid: number | 'self'): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command (which may hold spaces) in parentheses: utime and stime are 14 and 15, in ticks.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** RSS of a process (`VmRSS`, now) or its peak so far (`VmHWM`), MB. */
export function rssMb(pid: number | 'self', field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
}

/**
 * How `docker-compose.yml` runs a worker, for benchmarks that start one: V8's old space capped at
 * `heapMb` (0 = Node's default) and its young generation at 8 MB semi-spaces (Node's default is 16 MB,
 * in the main thread and the workflow thread alike: ~30 MB of RSS for a few more scavenges), and two
 * malloc arenas (DuckDB's and the Temporal core's threads otherwise get one each, ~60 MB of freed
 * memory held in them between commits).
 */
export function workerNodeFlags(heapMb: number): string[] {
  return [...(heapMb > 0 ? [`--max-old-space-size=${heapMb}`] : []), '--max-semi-space-size=8'];
}
export const WORKER_ENV = { MALLOC_ARENA_MAX: '2' } as const;

/** The admin routes of a benchmark's sandbox (faults, rate-limit reset, status). */
export async function sandboxAdmin(
  base: string,
  adminKey: string,
  method: string,
  route: string,
  body?: unknown,
): Promise<unknown> {
  const response = await fetch(`${base}/_admin/${route}`, {
    method,
    headers: { 'x-admin-key': adminKey, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
  return response.headers.get('content-type')?.includes('json') ? response.json() : undefined;
}

/**
 * Writes a CSV of `rows` companies drawn from the sandbox's own businesses (same seed), by name and
 * domain, starting at the `offset`th draw (two inputs with different offsets overlap only by chance).
 */
export function writeCompanyInput(file: string, businesses: number, rows: number, offset = 0): void {
  const world = generateBusinessRows(DEFAULT_SEED, businesses).filter((b) => b.domain);
  const lines = ['name,domain'];
  for (let i = offset; i < offset + rows; i += 1) {
    const b = world[(i * 7919) % world.length]!;
    lines.push(`"${b.name.replace(/"/g, '""')}",${b.domain}`);
  }
  writeFileSync(file, lines.join('\n') + '\n');
}

export interface BenchSandboxOptions {
  businesses: number;
  /** Prospects the sandbox generates; default 1,000. */
  prospects?: number;
  ratePerSecond: number;
  apiKey: string;
  adminKey: string;
  /** Datasets served from memory (the indexes and these loaded before the sandbox counts as warm). */
  preload?: string[];
}

/** Starts the sandbox in its own process on a free port; resolves when it answers (and is warm). */
export async function startBenchSandbox(
  children: ChildProcess[],
  options: BenchSandboxOptions,
): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const preload = options.preload ?? [];
  const prospects = options.prospects ?? 1000;
  // One data folder per world, so benchmarks of different sizes do not regenerate each other's.
  const dataDir = `bench-sandbox-${options.businesses}${prospects === 1000 ? '' : `-${prospects}`}`;
  const child = tsxProcess(
    children,
    [
      'bin/enrichflow-src.ts',
      'sandbox',
      'serve',
      '--port',
      String(port),
      '--data-dir',
      path.join(ROOT, '.data', dataDir),
      '--businesses',
      String(options.businesses),
      '--prospects',
      String(prospects),
      '--rate-limit',
      String(options.ratePerSecond * 60),
      '--api-key',
      `bench:${options.apiKey}`,
      '--admin-key',
      options.adminKey,
      // The stand-in service serves the datasets from memory, as the real one would not slow down with
      // the dataset asked for: the benchmark measures the pipeline, not the sandbox's cache.
      ...(preload.length ? ['--record-cache-mb', '1024', '--preload', preload.join(',')] : []),
    ],
    { LOG_LEVEL: 'warn' },
  );
  await waitFor(`${url}/healthcheck/http`, 600_000, child);
  const deadline = Date.now() + 300_000;
  for (;;) {
    const status = (await sandboxAdmin(url, options.adminKey, 'GET', 'status')) as {
      indexes_ready: boolean;
      datasets_in_memory: string[];
    };
    if (status.indexes_ready && preload.every((d) => status.datasets_in_memory.includes(d))) break;
    if (Date.now() > deadline) throw new Error(`sandbox not warm: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  return { url, process: child };
}

/**
 * Starts a worker process as users run it: the compiled CLI when it is built, else the sources through
 * tsx; with `workerNodeFlags` and `WORKER_ENV`.
 */
export function startBenchWorker(
  children: ChildProcess[],
  env: NodeJS.ProcessEnv,
  nodeFlags: string[],
): { process: ChildProcess; compiled: boolean } {
  const compiled = existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'));
  if (!compiled) {
    const child = tsxProcess(
      children,
      ['bin/enrichflow-src.ts', 'worker'],
      { ...env, ...WORKER_ENV },
      nodeFlags,
    );
    return { process: child, compiled };
  }
  const child = spawn(process.execPath, [...nodeFlags, 'bin/enrichflow.js', 'worker'], {
    cwd: ROOT,
    env: { ...process.env, ...env, ...WORKER_ENV },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return { process: child, compiled };
}

export interface BenchStackOptions extends BenchSandboxOptions {
  /** Latency the sandbox adds to every `/v1/*` answer, ms. */
  latencyMs: number;
  /** The worker's V8 heap cap (`workerNodeFlags`). */
  heapMb: number;
  /** Folder for the Temporal dev server's data. */
  workDir: string;
  /** Puts something in front of the sandbox (a counting door); resolves to the URL the worker calls. */
  front?: (sandboxUrl: string) => Promise<string>;
}

export interface BenchStack {
  sandboxUrl: string;
  /** Where the worker sends its requests: the sandbox, or what `front` put in front of it. */
  serviceUrl: string;
  client: Client;
  worker: ChildProcess;
  /** Process ids of the sandbox, the worker and the Temporal dev server (for `cpuSeconds`). */
  pids: { sandbox: number; worker: number; temporal: number };
  stop(): Promise<void>;
}

/**
 * What a benchmark of the main job runs on: the sandbox (warm, with its latency), a Temporal dev
 * server, and one worker as deployed (`startBenchWorker`) paced to the sandbox's rate, polling both
 * task queues before this resolves.
 */
export async function startBenchStack(
  children: ChildProcess[],
  options: BenchStackOptions,
): Promise<BenchStack> {
  const t0 = Date.now();
  const { url: sandboxUrl, process: sandbox } = await startBenchSandbox(children, options);
  console.log(`sandbox ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (indexes and datasets loaded)`);
  await sandboxAdmin(sandboxUrl, options.adminKey, 'PUT', 'faults', {
    rules: [{ match: '/v1/*', kind: 'latency', latencyMs: options.latencyMs }],
  });
  const serviceUrl = options.front ? await options.front(sandboxUrl) : sandboxUrl;
  const temporal = await startTemporalDevServer({
    dataDir: path.join(options.workDir, 'temporal'),
    headless: true,
  });
  // ENRICHFLOW_BENCH_WORKER_FLAGS adds Node flags to the worker alone (`--cpu-prof` is refused in
  // NODE_OPTIONS): e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to see where its CPU goes.
  const extraFlags = (process.env.ENRICHFLOW_BENCH_WORKER_FLAGS ?? '').split(' ').filter(Boolean);
  const nodeFlags = [...workerNodeFlags(options.heapMb), ...extraFlags];
  const { process: worker, compiled } = startBenchWorker(
    children,
    {
      ENRICHFLOW_TEMPORAL_ADDRESS: temporal.address,
      ENRICHFLOW_API_BASE_URL: serviceUrl,
      ENRICHFLOW_API_KEY: options.apiKey,
      ENRICHFLOW_API_RATE_PER_MINUTE: String(options.ratePerSecond * 60),
      ENRICHFLOW_WORKER_MAX_ACTIVITIES: '96',
      LOG_LEVEL: 'warn',
    },
    nodeFlags,
  );
  const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
  await waitForPollers(client, ['enrichflow', 'enrichflow-api']);
  console.log(
    `worker ready (${compiled ? 'compiled dist/' : 'TypeScript via tsx'}, ${nodeFlags.join(' ')}, MALLOC_ARENA_MAX=${WORKER_ENV.MALLOC_ARENA_MAX})`,
  );
  return {
    sandboxUrl,
    serviceUrl,
    client,
    worker,
    pids: { sandbox: sandbox.pid!, worker: worker.pid!, temporal: temporal.process.pid },
    stop: async () => {
      await client.connection.close();
      await temporal.stop();
    },
  };
}

/** A process's RSS sampled every `everyMs`, to tell which phase of a run sets the peak. */
export function sampleRss(
  pid: number,
  everyMs = 200,
): { stop(): void; peakBetween(from: number, to: number): number } {
  const samples: [number, number][] = [];
  const timer = setInterval(() => {
    try {
      samples.push([Date.now(), rssMb(pid, 'VmRSS')]);
    } catch {
      // the process is gone
    }
  }, everyMs);
  return {
    stop: () => clearInterval(timer),
    peakBetween: (from, to) =>
      Math.max(0, ...samples.filter(([t]) => t >= from && t <= to).map(([, mb]) => mb)),
  };
}

export interface RunPhase {
  name: string;
  from: number;
  to: number;
}

const isMatchStage = (stage: StageResult) => stage.stage === 'match' || stage.stage === 'prospect_match';

/**
 * The phases of a run, from its summary's stage times and when the run was started and ended: planning
 * (start to the first stage), the match stage, the enrich plan (match to the first dataset stage), the
 * dataset stages (first start to last end) and the commit (last stage to the end).
 */
export function runPhases(summary: RunSummary, started: number, ended: number): RunPhase[] {
  const match = summary.stages.find(isMatchStage);
  const datasets = summary.stages.filter((s) => !isMatchStage(s));
  const first = Math.min(...summary.stages.map((s) => s.startedAt));
  const last = Math.max(...summary.stages.map((s) => s.updatedAt));
  const datasetsStart = datasets.length > 0 ? Math.min(...datasets.map((s) => s.startedAt)) : last;
  return [
    { name: 'planning', from: started, to: first },
    ...(match
      ? [
          { name: 'match', from: match.startedAt, to: match.updatedAt },
          { name: 'enrich plan', from: match.updatedAt, to: datasetsStart },
        ]
      : []),
    { name: 'datasets', from: datasetsStart, to: last },
    { name: 'commit', from: last, to: ended },
  ];
}

/** Milliseconds between `from` and `to` in which no stage of the run was running (gaps between stages). */
export function idleBetweenStages(summary: RunSummary, from: number, to: number): number {
  const spans = summary.stages
    .map((s) => [Math.max(from, s.startedAt), Math.min(to, s.updatedAt)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let idle = 0;
  let covered = from;
  for (const [a, b] of spans) {
    if (a > covered) idle += a - covered;
    covered = Math.max(covered, b);
  }
  return idle + Math.max(0, to - covered);
}

export interface PeopleInputOptions {
  /** The sandbox's world: its businesses and prospects (same seed). */
  businesses: number;
  prospects: number;
  /** Distinct people of the sandbox in the input. */
  known: number;
  /** Distinct people the sandbox does not know. */
  unknown: number;
  /** Rows naming a person again (after the distinct ones), by the same key written differently or by another. */
  duplicates: number;
}

export interface PeopleInputStats {
  rows: number;
  known: number;
  unknown: number;
  duplicates: number;
  /** Duplicates that name the person by another key (the others repeat the key in other case or spacing). */
  duplicatesByOtherKey: number;
  /** Distinct employers (business ids from the profiles) of the known people. */
  employers: number;
}

type PersonKey = 'email' | 'phone' | 'network' | 'name';
const PEOPLE_HEADER = 'full_name,company,email,phone,linkedin_url,crm_id';

const csvField = (value: string) => (/[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

/** A person's key as a people list writes it; `variant` writes the same key the way another list would. */
function personFields(
  r: SeededRandom,
  p: { fullName: string; company: string; email: string | null; phone: string | null; network: string },
  key: PersonKey,
  variant: boolean,
): [string, string, string, string, string] {
  switch (key) {
    case 'email':
      return ['', '', variant ? `  ${r.chance(0.5) ? p.email!.toUpperCase() : p.email!} ` : p.email!, '', ''];
    case 'phone': {
      if (!variant) return ['', '', '', p.phone!, ''];
      const digits = p.phone!.slice(1);
      const national = digits.startsWith('1')
        ? `+1 (${digits.slice(1, 4)}) ${digits.slice(4, 7)}-${digits.slice(7)}`
        : `00${digits.slice(0, 2)} ${digits.slice(2, 6)} ${digits.slice(6)}`;
      return ['', '', '', national, ''];
    }
    case 'network':
      return ['', '', '', '', variant ? `https://www.${p.network.toUpperCase()}/` : p.network];
    case 'name':
      return variant
        ? [`  ${p.fullName.toUpperCase().replace(' ', '   ')}`, `${p.company} `, '', '', '']
        : [p.fullName, p.company, '', '', ''];
  }
}

/**
 * Writes a people list (CSV) drawn from the sandbox's own prospects (same seed as the sandbox, so the
 * same people, emails, phones and profile addresses): `known` distinct prospects, each by one key
 * (work email, phone, profile address, or full name with the company name when no earlier prospect
 * has that name at that company, as the service then answers with the first), `unknown` people on
 * reserved example domains and addresses the sandbox has no one for, then `duplicates` rows naming
 * one of them again: mostly the same key in other case or spacing (normalisation makes it one key),
 * one in four by another key of the same person. Rows are shuffled, deterministically.
 */
export function writePeopleInput(file: string, options: PeopleInputOptions): PeopleInputStats {
  const key = seedKey(DEFAULT_SEED);
  const businesses = generateBusinessRows(DEFAULT_SEED, options.businesses, true);
  const context: ProspectContext = {
    key,
    rows: businesses,
    employerWeights: employerWeights(businesses),
    emails: new Set(),
    phones: new Set(),
  };
  // Prospects depend on the ones before them (emails and phones are unique): generate all in order.
  const all: ProspectRow[] = [];
  const firstByName = new Map<string, number>();
  for (let pix = 0; pix < options.prospects; pix += 1) {
    const p = generateProspect(pix, context);
    all.push(p);
    const nameAtEmployer = `${p.fullNameNorm}|${businesses[p.bix]!.name}`;
    if (!firstByName.has(nameAtEmployer)) firstByName.set(nameAtEmployer, pix);
  }
  const r = streamFor(key, 'bench-people-input', 0);
  type Person = Parameters<typeof personFields>[1] & { keys: PersonKey[] };
  const people: Person[] = [];
  const employers = new Set<string>();
  for (const p of r.sample(all, options.known)) {
    const record = JSON.parse(p.recordJson) as { full_name: string; company_name: string; network: string };
    const keys: PersonKey[] = ['network'];
    if (p.email) keys.push('email', 'email');
    if (p.phone) keys.push('phone');
    if (firstByName.get(`${p.fullNameNorm}|${record.company_name}`) === p.pix) keys.push('name');
    people.push({
      fullName: record.full_name,
      company: record.company_name,
      email: p.email,
      phone: p.phone,
      network: record.network,
      keys,
    });
    employers.add(p.businessId);
  }
  all.length = 0;
  for (let i = 0; i < options.unknown; i += 1) {
    const slug = `nobody-${i}-${r.int(1000, 9999)}`;
    people.push({
      fullName: `Unlisted Person${i}`,
      company: `Nonexistent Holdings ${i}`,
      email: `${slug}@unknown-people.example`,
      phone: null,
      network: `network.example/in/${slug}`,
      keys: ['email', 'network', 'name'],
    });
  }
  const rows: string[][] = [];
  const primary = people.map((p) => r.pick(p.keys));
  people.forEach((p, i) => rows.push(personFields(r, p, primary[i]!, false)));
  let byOtherKey = 0;
  for (let i = 0; i < options.duplicates; i += 1) {
    const at = r.int(0, people.length - 1);
    const p = people[at]!;
    const others = p.keys.filter((k) => k !== primary[at]);
    const other = others.length > 0 && r.chance(0.25);
    if (other) byOtherKey += 1;
    rows.push(personFields(r, p, other ? r.pick(others) : primary[at]!, !other));
  }
  const shuffled = r.sample(rows, rows.length);
  writeFileSync(
    file,
    [PEOPLE_HEADER, ...shuffled.map((row, i) => [...row, `crm-${i + 1}`].map(csvField).join(','))].join(
      '\n',
    ) + '\n',
  );
  return {
    rows: rows.length,
    known: options.known,
    unknown: options.unknown,
    duplicates: options.duplicates,
    duplicatesByOtherKey: byOtherKey,
    employers: employers.size,
  };
}

/**
 * What the run's own workflow did, from its history: each activity and child workflow with when it was
 * scheduled, started and ended (s from `started`), so the steps no call overlaps can be told apart.
 */
export async function runTimeline(client: Client, workflowId: string, started: number): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const ms = (t: unknown) => {
    const ts = t as { seconds?: { toNumber(): number } | number; nanos?: number } | null | undefined;
    const seconds = typeof ts?.seconds === 'number' ? ts.seconds : (ts?.seconds?.toNumber() ?? 0);
    return seconds * 1000 + (ts?.nanos ?? 0) / 1e6;
  };
  const at = (t: number) => ((t - started) / 1000).toFixed(2);
  const open = new Map<string, { name: string; scheduled: number; started?: number }>();
  const lines: string[] = [];
  for (const event of history.events ?? []) {
    const id = String(event.eventId);
    const time = ms(event.eventTime);
    if (event.activityTaskScheduledEventAttributes) {
      open.set(id, {
        name: event.activityTaskScheduledEventAttributes.activityType?.name ?? '?',
        scheduled: time,
      });
    } else if (event.activityTaskStartedEventAttributes) {
      const entry = open.get(String(event.activityTaskStartedEventAttributes.scheduledEventId));
      if (entry) entry.started = time;
    } else if (event.activityTaskCompletedEventAttributes) {
      const entry = open.get(String(event.activityTaskCompletedEventAttributes.scheduledEventId));
      if (entry)
        lines.push(
          `${entry.name} scheduled ${at(entry.scheduled)} started ${at(entry.started ?? 0)} ended ${at(time)}`,
        );
    } else if (event.startChildWorkflowExecutionInitiatedEventAttributes) {
      open.set(id, {
        name: event.startChildWorkflowExecutionInitiatedEventAttributes.workflowId ?? '?',
        scheduled: time,
      });
    } else if (event.childWorkflowExecutionCompletedEventAttributes) {
      const entry = open.get(String(event.childWorkflowExecutionCompletedEventAttributes.initiatedEventId));
      if (entry)
        lines.push(`child ${entry.name.split('/').pop()} initiated ${at(entry.scheduled)} ended ${at(time)}`);
    }
  }
  return lines;
}
