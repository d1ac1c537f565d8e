// Benchmark of a run through a faulty service (issue 13): the same input twice against one sandbox and
// one worker, first clean, then with 10 % 5xx, 5 % 429, 2 % hanging and 1 % malformed responses. Prints
// both runs' time and calls and their ratios (bars: time ≤ 1.5 x, calls ≤ 1.25 x), and whether the two
// outputs hold the same rows. The sandbox and the worker run in their own processes.
//   npm run bench:faults -- [--businesses 20000] [--rows 10000] [--rate 100] [--latency 50]
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import type { BulkDataset } from '../contract/datasets.js';
import { DEFAULT_SEED } from '../sandbox/app.js';
import { generateBusinessRows } from '../sandbox/data/businesses.js';
import { freePort } from '../stack/ports.js';
import { startTemporalDevServer } from '../stack/temporal.js';
import { queryRows, sqlString, withDuckDb } from '../storage/duckdb.js';
import { ROOT, tsxProcess, waitFor, waitForPollers, WORKER_ENV, workerNodeFlags } from './support.js';
import { enrichRunWorkflow } from '../workflows/index.js';

const { values: args } = parseArgs({
  options: {
    businesses: { type: 'string', default: '20000' },
    rows: { type: 'string', default: '10000' },
    rate: { type: 'string', default: '100' },
    latency: { type: 'string', default: '50' },
    window: { type: 'string', default: '48' },
    // Only these fault kinds (comma-separated), to see what each one costs; default all four.
    only: { type: 'string', default: 'error,rate_limit,hang,malformed' },
  },
});
const businesses = Number(args.businesses);
const rows = Number(args.rows);
const ratePerSecond = Number(args.rate);
const latencyMs = Number(args.latency);
const DATASETS: BulkDataset[] = ['firmographics', 'technographics', 'funding_and_acquisition'];
const KEY = 'bench-key';
const ADMIN = 'bench-admin';
const work = mkdtempSync(path.join(tmpdir(), 'enrichflow-faults-'));
const children: ChildProcess[] = [];

async function admin(base: string, method: string, route: string, body?: unknown): Promise<void> {
  const response = await fetch(`${base}/_admin/${route}`, {
    method,
    headers: { 'x-admin-key': ADMIN, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
}

/** Each output table's rows, as one sorted text per table: equal texts mean equal outputs. */
async function tableDigest(runFolder: string): Promise<Record<string, string>> {
  const digest: Record<string, string> = {};
  await withDuckDb({}, async (connection) => {
    for (const table of ['matches', ...DATASETS]) {
      const [row] = await queryRows<{ n: number; h: string }>(
        connection,
        `SELECT count(*) AS n, CAST(sum(hash(t::VARCHAR)) AS VARCHAR) AS h
           FROM read_parquet(${sqlString(path.join(runFolder, table, '*.parquet'))}) t`,
      );
      digest[table] = `${row?.n} rows, hash ${row?.h}`;
    }
  });
  return digest;
}

try {
  console.log(
    `businesses ${businesses}, input rows ${rows}, rate ${ratePerSecond}/s, latency ${latencyMs} ms`,
  );
  const world = generateBusinessRows(DEFAULT_SEED, businesses).filter((b) => b.domain);
  const input = path.join(work, 'companies.csv');
  const lines = ['name,domain'];
  for (let i = 0; i < rows; i += 1) {
    const b = world[(i * 7919) % world.length]!;
    lines.push(`"${b.name.replace(/"/g, '""')}",${b.domain}`);
  }
  writeFileSync(input, lines.join('\n') + '\n');

  const sandboxPort = await freePort();
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  const sandbox = tsxProcess(
    children,
    [
      'bin/enrichflow-src.ts',
      'sandbox',
      'serve',
      '--port',
      String(sandboxPort),
      '--data-dir',
      path.join(ROOT, '.data', `bench-sandbox-${businesses}`),
      '--businesses',
      String(businesses),
      '--prospects',
      '1000',
      '--rate-limit',
      String(ratePerSecond * 60),
      '--api-key',
      `bench:${KEY}`,
      '--admin-key',
      ADMIN,
    ],
    { LOG_LEVEL: 'warn' },
  );
  await waitFor(`${sandboxUrl}/healthcheck/http`, 600_000, sandbox);

  const temporal = await startTemporalDevServer({ dataDir: path.join(work, 'temporal'), headless: true });
  const env = {
    ENRICHFLOW_TEMPORAL_ADDRESS: temporal.address,
    ENRICHFLOW_API_BASE_URL: sandboxUrl,
    ENRICHFLOW_API_KEY: KEY,
    ENRICHFLOW_API_RATE_PER_MINUTE: String(ratePerSecond * 60),
    ENRICHFLOW_WORKER_MAX_ACTIVITIES: '96',
    LOG_LEVEL: 'error',
  };
  const nodeFlags = workerNodeFlags(192);
  const compiled = existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'));
  if (compiled) {
    const child = spawn(process.execPath, [...nodeFlags, 'bin/enrichflow.js', 'worker'], {
      cwd: ROOT,
      env: { ...process.env, ...env, ...WORKER_ENV },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
  } else {
    tsxProcess(children, ['bin/enrichflow-src.ts', 'worker'], { ...env, ...WORKER_ENV }, nodeFlags);
  }
  const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
  await waitForPollers(client, ['enrichflow', 'enrichflow-api']);

  const run = async (label: string, faults: unknown[]) => {
    await admin(sandboxUrl, 'PUT', 'faults', {
      rules: [{ match: '/v1/*', kind: 'latency', latencyMs }, ...faults],
      seed: 7,
    });
    await admin(sandboxUrl, 'POST', 'rate-limit/reset');
    const output = path.join(work, label) + '/';
    const started = Date.now();
    const summary = await client.workflow.execute(enrichRunWorkflow, {
      taskQueue: 'enrichflow',
      workflowId: `bench-${label}-${Date.now()}`,
      args: [
        {
          jobName: 'bench',
          runKey: label,
          input: { location: input },
          output,
          datasets: DATASETS,
          apiTaskQueue: 'enrichflow-api',
          windowSize: Number(args.window),
        },
      ],
    });
    const seconds = (Date.now() - started) / 1000;
    const calls = summary.stages.reduce((sum, s) => sum + s.calls, 0);
    const t0 = Math.min(...summary.stages.map((s) => s.startedAt));
    const stages = summary.stages.map(
      (s) =>
        `${s.stage} ${((s.startedAt - t0) / 1000).toFixed(1)}-${((s.updatedAt - t0) / 1000).toFixed(1)} s (${s.calls} calls)`,
    );
    console.log(
      `${label}: ${seconds.toFixed(1)} s, ${calls} calls, status ${summary.status}, failed batches ${summary.failedBatches}\n  stages: ${stages.join(', ')}\n  planning ${((t0 - started) / 1000).toFixed(1)} s`,
    );
    return { seconds, calls, digest: await tableDigest(summary.outputPrefix.replace(/^file:\/\//, '')) };
  };

  const clean = await run('clean', []);
  const only = new Set(args.only.split(','));
  const faulty = await run(
    'faults',
    [
      { match: '/v1/*', kind: 'error', status: 503, rate: 0.1 },
      { match: '/v1/*', kind: 'rate_limit', retryAfterSeconds: 1, rate: 0.05 },
      { match: '/v1/*', kind: 'hang', rate: 0.02 },
      { match: '/v1/*', kind: 'malformed', rate: 0.01 },
    ].filter((rule) => only.has(rule.kind)),
  );
  const same = JSON.stringify(clean.digest) === JSON.stringify(faulty.digest);
  console.log(
    [
      `time: ${(faulty.seconds / clean.seconds).toFixed(2)} x the clean run (bar 1.5)`,
      `calls: ${(faulty.calls / clean.calls).toFixed(2)} x the clean run (bar 1.25)`,
      `outputs identical: ${same ? 'yes' : `NO\n  clean  ${JSON.stringify(clean.digest)}\n  faults ${JSON.stringify(faulty.digest)}`}`,
    ].join('\n'),
  );
  await client.connection.close();
  await temporal.stop();
} finally {
  for (const child of children) child.kill('SIGTERM');
}
