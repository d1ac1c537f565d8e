// A worker killed with SIGKILL in the middle of an export: a new worker finishes the run, the output
// has every record exactly once, and the slices finished before the kill are not fetched again —
// counted on the wire by a proxy in front of the sandbox.
import type { Client } from '@temporalio/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { exportLayout } from '../../pipeline/export-layout.js';
import { loadConfig, type EnrichflowConfig } from '../../config/index.js';
import { startExport } from '../../cli/export-run.js';
import { composeFilters, type DimensionDomain, type SearchFilters } from '../../pipeline/export-filters.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import { storeResolverFor } from '../../workers/worker.js';
import type { ExportPlan, ExportSummary, SliceOutcome } from '../../pipeline/export-types.js';
import {
  API_KEY,
  readTable,
  s3Location,
  startTestWorker,
  temporalClient,
  workflowBundle,
  type TestWorker,
} from '../support/pipeline-harness.js';
import { prospectIds, startCountingProxy, startExportSandbox, type CountingProxy } from './support.js';

const WORKER_SCRIPT = fileURLToPath(new URL('./worker-process.ts', import.meta.url));

let sandbox: RunningSandbox;
let proxy: CountingProxy;
let client: Client;
let child: ChildProcess | undefined;
let worker: TestWorker | undefined;

beforeAll(async () => {
  sandbox = await startExportSandbox('resume');
  proxy = await startCountingProxy(sandbox.url);
  client = await temporalClient();
});

afterAll(async () => {
  child?.kill('SIGKILL');
  await worker?.stop();
  await client?.connection.close();
  await proxy?.close();
  await sandbox?.close();
});

/** The suite's servers, a task queue of this test's own, and 20 calls/s so the export takes a few seconds. */
function environment(): Record<string, string> {
  const s3 = inject('s3');
  const queue = `resume-${Math.random().toString(36).slice(2, 8)}`;
  return {
    ENRICHFLOW_TEMPORAL_ADDRESS: inject('temporalAddress'),
    ENRICHFLOW_TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    ENRICHFLOW_TASK_QUEUE: queue,
    ENRICHFLOW_API_TASK_QUEUE: `${queue}-api`,
    ENRICHFLOW_API_BASE_URL: proxy.url,
    ENRICHFLOW_API_KEY: API_KEY,
    ENRICHFLOW_API_RATE_PER_MINUTE: '1200',
    ENRICHFLOW_API_TIMEOUT_MS: '3000',
    ENRICHFLOW_S3_ENDPOINT: s3.endpoint,
    ENRICHFLOW_S3_REGION: s3.region,
    ENRICHFLOW_S3_FORCE_PATH_STYLE: 'true',
    ENRICHFLOW_S3_ACCESS_KEY_ID: s3.accessKeyId,
    ENRICHFLOW_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    LOG_LEVEL: 'silent',
  };
}

async function startWorkerProcess(env: Record<string, string>): Promise<ChildProcess> {
  const bundleFile = path.join(mkdtempSync(path.join(tmpdir(), 'enrichflow-bundle-')), 'workflows.js');
  writeFileSync(bundleFile, (await workflowBundle()).code);
  const proc = spawn(process.execPath, ['--import', 'tsx', WORKER_SCRIPT], {
    env: { ...process.env, ...env, WORKFLOW_BUNDLE: bundleFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  proc.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker process not ready: ${errors}`)), 60_000);
    proc.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once('exit', (code) => reject(new Error(`worker process exited (${code}): ${errors}`)));
  });
  return proc;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('a worker killed mid-export: a new worker finishes it without fetching finished slices again', async () => {
  const env = environment();
  const config: EnrichflowConfig = loadConfig({ env });
  child = await startWorkerProcess(env);
  const output = s3Location('resume');
  const { runId } = await startExport(client, config, {
    target: 'prospects',
    filters: { company_size: { values: ['11-50', '51-200', '1001-5000'] } },
    output,
    offsetCap: 1_000,
    callTimeoutMs: 3_000,
  });
  const { store, prefix } = storeResolverFor(config)(`${output}${runId}/`);
  const doneSlices = async () => {
    const done: SliceOutcome[] = [];
    for await (const info of store.list(`${prefix}${exportLayout.slicesPrefix}`)) {
      done.push(JSON.parse((await store.getBytes(info.key)).toString('utf8')) as SliceOutcome);
    }
    return done;
  };
  await until('a finished slice', async () => ((await doneSlices()).length > 0 ? true : undefined));
  child.kill('SIGKILL');
  await new Promise((resolve) => child?.once('exit', resolve));
  const finishedBeforeKill = await doneSlices();
  const plan = JSON.parse(
    (await store.getBytes(`${prefix}${exportLayout.plan}`)).toString('utf8'),
  ) as ExportPlan;
  expect(finishedBeforeKill.length).toBeLessThan(plan.slices.length);

  worker = await startTestWorker(config);
  const summary = (await client.workflow.getHandle(runId).result()) as ExportSummary;
  expect(summary.status).toBe('completed');
  const want = await prospectIds(sandbox, `b.size_range IN ('11-50', '51-200', '1001-5000')`);
  const { rows } = await readTable<{ id: string }>(
    config,
    summary.outputPrefix,
    'prospects',
    'SELECT prospect_id AS id FROM t',
  );
  expect(rows.length).toBe(want.length);
  expect(new Set(rows.map((r) => r.id))).toEqual(new Set(want));

  // Each page of a slice finished before the kill went over the wire exactly once.
  const spec = JSON.parse((await store.getBytes(`${prefix}${exportLayout.spec}`)).toString('utf8')) as {
    filters: SearchFilters;
    dimensions: DimensionDomain[];
  };
  const sliceOf = new Map(
    plan.slices.map((s) => [
      JSON.stringify(composeFilters(spec.filters, spec.dimensions, s.constraints)),
      s.index,
    ]),
  );
  const pageCalls = new Map<string, number>();
  for (const call of proxy.calls) {
    if (call.path !== '/v1/prospects' || typeof call.body?.page !== 'number' || call.body.page_size === 1)
      continue;
    const slice = sliceOf.get(JSON.stringify(call.body.filters));
    const key = `${slice}/${call.body.page}`;
    pageCalls.set(key, (pageCalls.get(key) ?? 0) + 1);
  }
  for (const done of finishedBeforeKill) {
    const planned = plan.slices[done.index]!;
    for (let page = 1; page <= planned.pages; page += 1) {
      expect(pageCalls.get(`${done.index}/${page}`), `slice ${done.index} page ${page}`).toBe(1);
    }
  }
  expect(summary.counts.duplicates).toBe(0);
}, 120_000);
