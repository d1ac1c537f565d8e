// Benchmark of a run through a faulty service (issue 13): the same input twice against one sandbox and
// one worker, first clean, then with 10 % 5xx, 5 % 429, 2 % hanging and 1 % malformed responses. Prints
// both runs' time and calls and their ratios (bars: time ≤ 1.5 x, calls ≤ 1.25 x), and whether the two
// outputs hold the same rows. The sandbox and the worker run in their own processes.
//   npm run bench:faults -- [--businesses 20000] [--rows 10000] [--rate 100] [--latency 50]
import { type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import type { BulkDataset } from '../contract/datasets.js';
import { startTemporalDevServer } from '../stack/temporal.js';
import { queryRows, sqlString, withDuckDb } from '../storage/duckdb.js';
import { startSandboxDoor } from '../test/support/sandbox-door.js';
import {
  sandboxAdmin,
  startBenchSandbox,
  startBenchWorker,
  waitForPollers,
  workerNodeFlags,
  writeCompanyInput,
} from './support.js';
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

const admin = (base: string, method: string, route: string, body?: unknown) =>
  sandboxAdmin(base, ADMIN, method, route, body);

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
  const input = path.join(work, 'companies.csv');
  writeCompanyInput(input, businesses, rows);
  const { url: sandboxUrl } = await startBenchSandbox(children, {
    businesses,
    ratePerSecond,
    apiKey: KEY,
    adminKey: ADMIN,
  });

  // Workers reach the sandbox through a door that counts what the service received.
  const door = await startSandboxDoor(sandboxUrl);
  const temporal = await startTemporalDevServer({ dataDir: path.join(work, 'temporal'), headless: true });
  const env = {
    ENRICHFLOW_TEMPORAL_ADDRESS: temporal.address,
    ENRICHFLOW_API_BASE_URL: door.url,
    ENRICHFLOW_API_KEY: KEY,
    ENRICHFLOW_API_RATE_PER_MINUTE: String(ratePerSecond * 60),
    ENRICHFLOW_WORKER_MAX_ACTIVITIES: '96',
    LOG_LEVEL: 'error',
  };
  startBenchWorker(children, env, workerNodeFlags(192));
  const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
  await waitForPollers(client, ['enrichflow', 'enrichflow-api']);

  const run = async (label: string, faults: unknown[]) => {
    await admin(sandboxUrl, 'PUT', 'faults', {
      rules: [{ match: '/v1/*', kind: 'latency', latencyMs }, ...faults],
      seed: 7,
    });
    await admin(sandboxUrl, 'POST', 'rate-limit/reset');
    const output = path.join(work, label) + '/';
    const before = door.requests.length;
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
    const received = door.requests.length - before;
    const answered = new Map<number, number>();
    for (const r of door.requests.slice(before)) answered.set(r.status, (answered.get(r.status) ?? 0) + 1);
    const statuses = [...answered].map(([status, n]) => `${status || 'no answer'} x ${n}`).join(', ');
    console.log(
      `${label}: ${seconds.toFixed(1)} s, ${calls} calls in the manifest, ${received} received by the service (${statuses}), status ${summary.status}, failed batches ${summary.failedBatches}\n  stages: ${stages.join(', ')}\n  planning ${((t0 - started) / 1000).toFixed(1)} s`,
    );
    return {
      seconds,
      calls,
      received,
      digest: await tableDigest(summary.outputPrefix.replace(/^file:\/\//, '')),
    };
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
      `manifest calls = calls received: clean ${clean.calls === clean.received ? 'yes' : `NO (${clean.calls} vs ${clean.received})`}, faults ${faulty.calls === faulty.received ? 'yes' : `NO (${faulty.calls} vs ${faulty.received})`}`,
      `outputs identical: ${same ? 'yes' : `NO\n  clean  ${JSON.stringify(clean.digest)}\n  faults ${JSON.stringify(faulty.digest)}`}`,
    ].join('\n'),
  );
  await client.connection.close();
  await temporal.stop();
  await door.close();
} finally {
  for (const child of children) child.kill('SIGTERM');
}
