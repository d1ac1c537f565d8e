// Benchmark of the sandbox (issue 3): generation time of the benchmark world, start time on the existing
// file, `firmographics/bulk_enrich` throughput and latency with 50 ids per call, prospect fetch latency
// (100-record pages, three filters), and the sandbox's memory under that load. The sandbox runs as the
// compiled `enrichflow sandbox serve` in its own process; the load comes from this process (autocannon).
//   npx tsx bench/sandbox.ts [--businesses 200000] [--prospects 1000000] [--fresh] [--record]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_SEED } from '../sandbox/app.js';
import { entityId, seedKey, SeededRandom } from '../sandbox/data/random.js';
import { DATABASE_FILE } from '../sandbox/data/store.js';
import { freePort } from '../stack/ports.js';
import { ROOT, rssMb } from './support.js';

const { values: args } = parseArgs({
  options: {
    businesses: { type: 'string', default: '200000' },
    prospects: { type: 'string', default: '1000000' },
    'data-dir': { type: 'string' },
    /** Delete the data file first, so generation is measured. */
    fresh: { type: 'boolean', default: false },
    duration: { type: 'string', default: '20' },
    connections: { type: 'string', default: '10' },
    'fetch-connections': { type: 'string', default: '4' },
    /** Write the figures to bench/results/sandbox.md. */
    record: { type: 'boolean', default: false },
    /** The server's V8 heap cap in MB, as docker-compose.yml deploys it (NODE_OPTIONS); 0 = Node's default. */
    heap: { type: 'string', default: '160' },
  },
});

const businesses = Number(args.businesses);
const prospects = Number(args.prospects);
const dataDir = path.resolve(
  args['data-dir'] ?? path.join(ROOT, '.data', `bench-sandbox-${businesses}-${prospects}`),
);
const duration = Number(args.duration);
const KEY = 'bench-key-0123456789';
const ADMIN = 'bench-admin';
const children = new Set<ChildProcess>();
const loadAtStart = loadavg();

interface Server {
  child: ChildProcess;
  url: string;
  readyMs: number;
  log: string[];
}

/**
 * Compiles the project (as `npm run build` does, into a folder of its own) so the sandbox runs as users
 * run it, without a TypeScript loader in the measured process. Returns the CLI runner to start.
 */
function compileProject(): string {
  const outDir = path.join(ROOT, '.data', 'bench-sandbox-build');
  const tsc = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      outDir,
    ],
    {
      cwd: ROOT,
      stdio: 'inherit',
    },
  );
  const runner = path.join(outDir, 'run-cli.mjs');
  if (!existsSync(path.join(outDir, 'cli', 'main.js')))
    throw new Error(`compiling the project failed (tsc exit ${tsc.status})`);
  writeFileSync(runner, "const cli = await import('./cli/main.js');\nawait cli.main(process.argv);\n");
  return runner;
}

/** Starts `enrichflow sandbox serve` and waits for its healthcheck; `readyMs` counts from the spawn. */
async function startServer(runner: string): Promise<Server> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [
      ...(Number(args.heap) > 0 ? [`--max-old-space-size=${Number(args.heap)}`] : []),
      runner,
      'sandbox',
      'serve',
      '--port',
      String(port),
      '--data-dir',
      dataDir,
      '--seed',
      DEFAULT_SEED,
      '--businesses',
      String(businesses),
      '--prospects',
      String(prospects),
      '--rate-limit',
      '0',
      '--api-key',
      `bench:${KEY}`,
      '--admin-key',
      ADMIN,
    ],
    { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.add(child);
  const log: string[] = [];
  child.stderr
    ?.setEncoding('utf8')
    .on('data', (text: string) => log.push(...text.split('\n').filter(Boolean)));
  const deadline = Date.now() + 15 * 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`sandbox exited early:\n${log.slice(-20).join('\n')}`);
    try {
      if ((await fetch(`${url}/healthcheck/http`)).ok)
        return { child, url, readyMs: Date.now() - started, log };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('sandbox did not come up within 15 minutes');
}

async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
  children.delete(server.child);
}

function logMillis(log: string[], message: string): number | null {
  for (const line of log) {
    try {
      const entry = JSON.parse(line) as { msg?: string; millis?: number };
      if (entry.msg === message && typeof entry.millis === 'number') return entry.millis;
    } catch {
      // not a log line
    }
  }
  return null;
}

/** Waits until the background loads after start are done: the indexes, and firmographics in memory. */
async function waitForFirmographicsInMemory(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const response = await fetch(`${url}/_admin/status`, { headers: { 'x-admin-key': ADMIN } });
    const status = (await response.json()) as { datasets_in_memory: string[]; indexes_ready?: boolean };
    if (status.datasets_in_memory.includes('firmographics') && status.indexes_ready !== false) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('firmographics never reached memory');
}

interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}
interface AutocannonResult {
  requests: { total: number; average: number };
  latency: { p50: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
// autocannon ships no types; this is the part of its API the benchmark uses.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

interface LoadFigures {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  non2xx: number;
  total: number;
  peakRssMb: number;
}

/** Runs autocannon with a rotating pool of bodies; samples the server's RSS meanwhile. */
async function load(
  server: Server,
  pathName: string,
  bodies: string[],
  connections: number,
  seconds: number,
): Promise<LoadFigures> {
  let next = 0;
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(server.child.pid as number, 'VmRSS'));
  }, 200);
  const result = await autocannon({
    url: server.url,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: pathName,
        headers: { api_key: KEY, 'content-type': 'application/json' },
        setupRequest: (request: AutocannonRequest) => ({
          ...request,
          body: bodies[(next += 1) % bodies.length],
        }),
      },
    ],
  });
  clearInterval(sampler);
  peak = Math.max(peak, rssMb(server.child.pid as number, 'VmRSS'));
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
    peakRssMb: peak,
  };
}

function bulkBodies(count: number): string[] {
  const key = seedKey(DEFAULT_SEED);
  const random = new SeededRandom(1, 2, 3, 4);
  return Array.from({ length: count }, () =>
    JSON.stringify({
      business_ids: Array.from({ length: 50 }, () =>
        entityId(key, 'business', random.int(0, businesses - 1), 32),
      ),
    }),
  );
}

function fetchBodies(count: number): string[] {
  const random = new SeededRandom(5, 6, 7, 8);
  const levels = ['manager', 'director', 'non-managerial', 'senior non-managerial', 'vice president'];
  const countries = ['us', 'gb', 'de', 'fr', 'in', 'ca'];
  return Array.from({ length: count }, () =>
    JSON.stringify({
      mode: 'full',
      size: 60000,
      page_size: 100,
      page: random.int(1, 20),
      filters: {
        job_level: { values: random.sample(levels, 2) },
        company_country_code: { values: random.sample(countries, 2) },
        has_email: { value: true },
      },
    }),
  );
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

try {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, DATABASE_FILE);
  if (args.fresh) rmSync(file, { force: true });
  const generating = !existsSync(file);
  console.log(`sandbox benchmark: ${businesses} businesses, ${prospects} prospects, data ${file}`);
  const runner = compileProject();
  let generationSeconds: number | null = null;
  if (generating) {
    const first = await startServer(runner);
    generationSeconds = (logMillis(first.log, 'sandbox data: generation finished') ?? first.readyMs) / 1000;
    console.log(
      `generated in ${round(generationSeconds)} s (process ready after ${round(first.readyMs / 1000)} s)`,
    );
    await stopServer(first);
  }
  const server = await startServer(runner);
  const startSeconds = server.readyMs / 1000;
  console.log(`started on the existing file in ${round(startSeconds, 2)} s (spawn to healthcheck)`);
  const idleRss = rssMb(server.child.pid as number, 'VmRSS');
  await waitForFirmographicsInMemory(server.url);

  const bulkPath = '/v1/businesses/firmographics/bulk_enrich';
  const bodies = bulkBodies(2000);
  await load(server, bulkPath, bodies, Number(args.connections), 3); // warm-up
  const bulk = await load(server, bulkPath, bodies, Number(args.connections), duration);
  console.log(
    `firmographics/bulk_enrich (50 ids): ${round(bulk.requestsPerSecond, 0)} req/s, p50 ${bulk.p50} ms, p99 ${bulk.p99} ms, max ${bulk.max} ms, errors ${bulk.errors}, non-2xx ${bulk.non2xx}, peak RSS ${round(bulk.peakRssMb, 0)} MB`,
  );
  const fetchLoad = await load(
    server,
    '/v1/prospects',
    fetchBodies(500),
    Number(args['fetch-connections']),
    Math.max(10, duration / 2),
  );
  console.log(
    `prospect fetch (100/page, 3 filters): ${round(fetchLoad.requestsPerSecond, 0)} req/s, p50 ${fetchLoad.p50} ms, p99 ${fetchLoad.p99} ms, max ${fetchLoad.max} ms, errors ${fetchLoad.errors}, non-2xx ${fetchLoad.non2xx}, peak RSS ${round(fetchLoad.peakRssMb, 0)} MB`,
  );
  const peakRss = Math.max(bulk.peakRssMb, fetchLoad.peakRssMb);
  console.log(
    `sandbox RSS: idle after start ${round(idleRss, 0)} MB, peak under load ${round(peakRss, 0)} MB`,
  );
  await stopServer(server);

  if (args.record) {
    const lines = [
      '# Sandbox benchmark',
      '',
      `Command: \`npx tsx bench/sandbox.ts --businesses ${businesses} --prospects ${prospects}${args.fresh ? ' --fresh' : ''} --record\`` +
        (Number(args.heap) > 0
          ? ` (server heap cap --max-old-space-size=${Number(args.heap)}, as deployed)`
          : ''),
      `Run: ${new Date().toISOString()}, ${process.platform} ${process.arch}, Node ${process.version}; load average (1/5/15 min) at start ${loadAtStart.map((l) => l.toFixed(1)).join(' ')}, at the end ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} (2 cores, shared with other work)`,
      '',
      '| figure | target | measured |',
      '|---|---|---|',
      `| generation, ${businesses} businesses / ${prospects} prospects | ≤ 120 s | ${generationSeconds === null ? 'not measured (file existed)' : `${round(generationSeconds)} s`} |`,
      `| start on the existing file (spawn → healthcheck) | ≤ 5 s | ${round(startSeconds, 2)} s |`,
      `| firmographics/bulk_enrich, 50 ids, ${args.connections} connections | ≥ 1,000 req/s | ${round(bulk.requestsPerSecond, 0)} req/s |`,
      `| firmographics/bulk_enrich latency | p99 ≤ 50 ms | p50 ${bulk.p50} ms, p99 ${bulk.p99} ms |`,
      `| prospect fetch, 100/page, 3 filters, ${args['fetch-connections']} connections | p99 ≤ 100 ms | p50 ${fetchLoad.p50} ms, p99 ${fetchLoad.p99} ms (${round(fetchLoad.requestsPerSecond, 0)} req/s) |`,
      `| sandbox RSS under that load | ≤ 500 MB | ${round(peakRss, 0)} MB (idle after start ${round(idleRss, 0)} MB) |`,
      '',
      `Errors: bulk ${bulk.errors} (non-2xx ${bulk.non2xx}), fetch ${fetchLoad.errors} (non-2xx ${fetchLoad.non2xx}).`,
    ];
    // The explanation of what limits each figure is written by hand below the table; keep it.
    const resultFile = path.join(ROOT, 'bench', 'results', 'sandbox.md');
    const previous = existsSync(resultFile) ? readFileSync(resultFile, 'utf8') : '';
    const notes = previous.indexOf('\n## What limits');
    writeFileSync(resultFile, `${lines.join('\n')}\n${notes >= 0 ? previous.slice(notes) : ''}`);
    console.log('recorded in bench/results/sandbox.md');
  }
} finally {
  for (const child of children) child.kill('SIGTERM');
}
