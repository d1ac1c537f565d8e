// Observability of a real run: `enrichflow worker` with ENRICHFLOW_METRICS_ADDRESS serves Prometheus
// metrics whose counts (calls, 429s, records, misses, rows written) equal the run's manifest, next to
// Temporal's own SDK metrics; and the run report rendered from that manifest says what an analyst needs.
import type { Client } from '@temporalio/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { withDuckDb } from '../../storage/duckdb.js';
import { rejectReasonsOf, renderRunReport, type RunManifest } from '../../activities/report.js';
import { RunFiles } from '../../storage/run-files.js';
import { startRun } from '../../cli/start-run.js';
import type { EnrichflowConfig } from '../../config/index.js';
import { validateJobSpec } from '../../jobs/job-spec.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import { freePort } from '../../stack/ports.js';
import { storeResolverFor } from '../../workers/worker.js';
import type { RunSummary } from '../../pipeline/run-types.js';
import {
  API_KEY,
  readJson,
  s3Location,
  setFaults,
  startTestSandbox,
  temporalClient,
  testConfig,
  uploadFile,
} from '../support/pipeline-harness.js';

const SAMPLE = fileURLToPath(new URL('../../samples/companies.csv', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DATASETS = ['firmographics', 'technographics'] as const;

let sandbox: RunningSandbox;
let config: EnrichflowConfig;
let client: Client;
let worker: ChildProcess;
let metricsUrl: string;
let summary: RunSummary;
let manifest: RunManifest;
let metrics: Sample[];

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format, samples only. */
function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of a metric's samples whose labels include `where`. */
function total(name: string, where: Record<string, string> = {}): number {
  return metrics
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('condition not met in time');
}

beforeAll(async () => {
  sandbox = await startTestSandbox();
  config = testConfig(sandbox.url);
  client = await temporalClient();
  const address = `127.0.0.1:${await freePort()}`;
  metricsUrl = `http://${address}/metrics`;
  worker = spawn(process.execPath, ['--import', 'tsx', 'bin/enrichflow-src.ts', 'worker'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ENRICHFLOW_TEMPORAL_ADDRESS: config.temporal.address,
      ENRICHFLOW_TEMPORAL_NAMESPACE: config.temporal.namespace,
      ENRICHFLOW_TASK_QUEUE: config.temporal.taskQueue,
      ENRICHFLOW_API_TASK_QUEUE: config.temporal.apiTaskQueue,
      ENRICHFLOW_API_BASE_URL: config.dataService.baseUrl,
      ENRICHFLOW_API_KEY: API_KEY,
      ENRICHFLOW_API_RATE_PER_MINUTE: '60000',
      ENRICHFLOW_S3_ENDPOINT: config.s3.endpoint,
      ENRICHFLOW_S3_FORCE_PATH_STYLE: 'true',
      ENRICHFLOW_S3_ACCESS_KEY_ID: config.s3.accessKeyId,
      ENRICHFLOW_S3_SECRET_ACCESS_KEY: config.s3.secretAccessKey,
      ENRICHFLOW_METRICS_ADDRESS: address,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await until(async () => (await fetch(metricsUrl)).ok, 60_000);

  // The sample plus three rows that cannot be used, so the report has rejects to summarise.
  const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-observability-'));
  const local = path.join(dir, 'companies.csv');
  writeFileSync(
    local,
    `${readFileSync(SAMPLE, 'utf8').trimEnd()}\n,,,,US\nFoo Ltd,,not a domain!,,\nBar plc,,bad..domain,,GB\n`,
  );
  const input = `${s3Location('inputs')}companies.csv`;
  await uploadFile(config, input, local);
  // Two 429s on technographics: retried after their Retry-After, counted as rate limited.
  await setFaults(sandbox, [
    { match: 'bulkEnrichTechnographics', kind: 'rate_limit', count: 2, retryAfterSeconds: 0 },
  ]);
  const { runId } = await startRun(
    client,
    config,
    validateJobSpec(
      {
        job_name: 'observed',
        input: { location: input },
        datasets: [...DATASETS],
        output: s3Location('observed'),
      },
      'test',
    ),
  );
  summary = (await client.workflow.getHandle(runId).result()) as RunSummary;
  manifest = await readJson<RunManifest>(config, `${summary.outputPrefix}manifest.json`);
  metrics = parsePrometheus(await (await fetch(metricsUrl)).text());
}, 240_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    worker.kill('SIGTERM');
    await new Promise((resolve) => worker.once('exit', resolve));
  }
  if (sandbox) await setFaults(sandbox, []);
  await client?.connection.close();
  await sandbox?.close();
});

describe('worker metrics after a real run', () => {
  test('the run completed, with the two injected 429s retried', () => {
    expect(summary.status).toBe('completed');
    expect(manifest.stages.map((s) => s.stage)).toEqual(['match', ...DATASETS]);
  });

  test('calls per stage equal the manifest (every attempt), with 429s by status and in their own counter', () => {
    for (const stage of manifest.stages) {
      expect(total('enrichflow_calls', { stage: stage.stage }), stage.stage).toBe(stage.calls);
      expect(total('enrichflow_call_latency_count', { stage: stage.stage }), stage.stage).toBe(stage.calls);
    }
    expect(
      total('enrichflow_calls', { stage: 'technographics', outcome: 'rate_limited', status: '429' }),
    ).toBe(2);
    expect(total('enrichflow_rate_limited', { stage: 'technographics' })).toBe(2);
    expect(total('enrichflow_rate_limited', { stage: 'firmographics' })).toBe(0);
    const ok = manifest.stages.reduce((sum, s) => sum + s.batches, 0);
    expect(total('enrichflow_calls', { outcome: 'ok', status: '200' })).toBe(ok);
    // Tagged by the activity context: which activity on which task queue made the call.
    const sample = metrics.find((s) => s.name === 'enrichflow_calls')!;
    expect(sample.labels).toMatchObject({
      activityType: 'callBatch',
      taskQueue: config.temporal.apiTaskQueue,
    });
  });

  test('records and misses per stage equal the manifest', () => {
    for (const stage of manifest.stages) {
      expect(total('enrichflow_records', { stage: stage.stage }), stage.stage).toBe(stage.records);
      expect(total('enrichflow_misses', { stage: stage.stage }), stage.stage).toBe(stage.misses);
    }
  });

  test('rows written per table equal the committed tables', () => {
    for (const table of manifest.tables) {
      expect(total('enrichflow_rows_written', { table: table.name }), table.name).toBe(table.rows);
    }
    expect(total('enrichflow_rows_written', { table: 'rejects' })).toBe(manifest.counts.rejected_rows);
  });

  test("Temporal's own SDK metrics come from the same endpoint", () => {
    const names = new Set(metrics.map((s) => s.name));
    expect(names).toContain('temporal_activity_execution_latency_count');
    expect(names).toContain('temporal_workflow_completed');
    expect(
      total('temporal_workflow_completed', { workflow_type: 'enrichRunWorkflow' }),
    ).toBeGreaterThanOrEqual(1);
  });
});

describe('run report from the real manifest', () => {
  let report: string;

  beforeAll(async () => {
    const files = RunFiles.open(storeResolverFor(config), {
      runId: summary.runId,
      output: summary.request.output,
    });
    const rejects = manifest.tables.find((t) => t.name === 'rejects')!;
    const rejectReasons = await withDuckDb({}, (connection, scratch) =>
      rejectReasonsOf(connection, files, rejects, scratch),
    );
    report = renderRunReport(manifest, { rejectReasons });
  });

  test('names the run, its status, input and output folder', () => {
    expect(report).toContain(`# Run report: ${summary.runId}`);
    expect(report).toContain('**Completed** — job `observed`, 2 datasets (firmographics, technographics).');
    expect(report).toContain(`| Output | \`${summary.outputPrefix}\` |`);
  });

  test('coverage per dataset: records of the unique ids', () => {
    const unique = manifest.counts.unique_business_ids;
    for (const stage of manifest.stages.filter((s) => s.stage !== 'match')) {
      const coverage = `${((100 * stage.records) / unique).toFixed(1)}%`;
      expect(report).toContain(
        `| ${stage.stage} | ${stage.records.toLocaleString('en-US')} | ${unique.toLocaleString('en-US')} | ${coverage} | ${stage.misses.toLocaleString('en-US')} |`,
      );
    }
  });

  test('calls per stage include the retried 429s, and the rejects are summarised by reason', () => {
    const techno = manifest.stages.find((s) => s.stage === 'technographics')!;
    expect(techno.calls).toBe(techno.batches + 2);
    expect(report).toMatch(
      new RegExp(
        `\\| technographics \\| ${techno.batches} / ${techno.batches} \\| 0 \\| ${techno.calls} \\|`,
      ),
    );
    // The sample's own empty rows, and the three added at its end (rows 301 to 303).
    const rejected = manifest.counts.rejected_rows;
    expect(report).toContain(`| Rejected rows | ${rejected} |`);
    expect(report).toContain('| domain "…" is not a valid domain name | 2 | 302 |');
    expect(report).toMatch(
      new RegExp(
        `\\| no usable field: name, domain, url and network_url are all empty \\| ${rejected - 2} \\| \\d+ \\|`,
      ),
    );
  });

  test('says where every table is', () => {
    for (const table of manifest.tables) {
      expect(report).toContain(`| ${table.name} | ${table.rows.toLocaleString('en-US')} | 1 |`);
      expect(report).toContain(`\`${summary.outputPrefix}${table.name}/part-0.parquet\``);
    }
    expect(report).toContain(`Manifest: \`${summary.outputPrefix}manifest.json\``);
  });
});
