// Tracing of a real run: a worker and a client traced with OTLP/HTTP (JSON) to a receiver in this
// process; one run's trace holds its start, its workflow, its stages, its activities, its Data Service
// calls (status and attempt, a 429 retried included) and its object-store transfers, all one tree, and
// every span carries the run id.
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DataServiceClient } from '../../client/index.js';
import { startRun } from '../../cli/start-run.js';
import type { EnrichflowConfig } from '../../config/index.js';
import { validateJobSpec } from '../../jobs/job-spec.js';
import { silentLogger } from '../../lib/logger.js';
import type { RunSummary } from '../../pipeline/run-types.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import { spansOfExport, type OtlpSpan } from '../../stack/otelcol.js';
import { createEnrichflowWorkers, workflowsPath, type EnrichflowWorkers } from '../../workers/worker.js';
import type { Tracing } from '../../workers/tracing.js';
import {
  SAMPLE_COMPANIES,
  s3Location,
  setFaults,
  startTestSandbox,
  testConfig,
  uploadFile,
} from '../support/pipeline-harness.js';

const DATASETS = ['firmographics', 'technographics'] as const;

/** An OTLP/HTTP receiver (JSON encoding) that keeps every span it is sent. */
function startReceiver(): Promise<{ server: Server; url: string; spans: OtlpSpan[] }> {
  const spans: OtlpSpan[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      spans.push(...spansOfExport(JSON.parse(body)));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans }),
    ),
  );
}

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let sandbox: RunningSandbox;
let config: EnrichflowConfig;
let tracing: Tracing;
let workers: EnrichflowWorkers;
let running: Promise<void>;
let connection: NativeConnection;
let service: DataServiceClient;
let client: Client;
let runId: string;
let summary: RunSummary;
let trace: OtlpSpan[];

const RUN_ID = 'enrichflow.run_id';

async function until(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  receiver = await startReceiver();
  // The standard variables, as an operator would set them; the test process is worker and client.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  process.env.OTEL_BSP_SCHEDULE_DELAY = '200';
  const traced = await import('../../workers/tracing.js');
  tracing = await traced.startTracing('enrichflow-test');

  sandbox = await startTestSandbox();
  config = testConfig(sandbox.url);
  connection = await NativeConnection.connect({ address: config.temporal.address });
  service = new DataServiceClient({ baseUrl: sandbox.url, apiKey: config.dataService.apiKey ?? '' });
  workers = await createEnrichflowWorkers({
    config,
    connection,
    calls: traced.traceCalls(service, tracing.tracer),
    logger: silentLogger,
    tracing,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: workflowsPath(),
      workflowInterceptorModules: [traced.WORKFLOW_INTERCEPTORS_MODULE],
      logger: { ...console, trace() {}, debug() {}, info() {} },
    }),
  });
  running = workers.run();
  client = new Client({
    connection: await Connection.connect({ address: config.temporal.address }),
    namespace: config.temporal.namespace,
    interceptors: traced.clientInterceptors(),
  });

  const input = `${s3Location('inputs')}companies.csv`;
  await uploadFile(config, input, SAMPLE_COMPANIES);
  // One 429 on technographics: its batch is retried, so the trace shows attempt 1 (429) and 2 (200).
  await setFaults(sandbox, [
    { match: 'bulkEnrichTechnographics', kind: 'rate_limit', count: 1, retryAfterSeconds: 0 },
  ]);
  ({ runId } = await startRun(
    client,
    config,
    validateJobSpec(
      {
        job_name: 'traced',
        input: { location: input },
        datasets: [...DATASETS],
        output: s3Location('traced'),
      },
      'test',
    ),
  ));
  summary = (await client.workflow.getHandle(runId).result()) as RunSummary;

  // The run's root span (its workflow's execution) is exported once the workflow has completed.
  const traceOf = () => receiver.spans.find((s) => s.name === 'StartWorkflow:enrichRunWorkflow')?.traceId;
  await until(async () => {
    await tracing.flush();
    return receiver.spans.some((s) => s.name === 'RunWorkflow:enrichRunWorkflow' && s.traceId === traceOf());
  }, 30_000);
  trace = receiver.spans.filter((s) => s.traceId === traceOf());
}, 240_000);

afterAll(async () => {
  workers?.shutdown();
  await running;
  await client?.connection.close();
  await connection?.close();
  await service?.close();
  await sandbox?.close();
  receiver?.server.close();
});

describe('a traced run', () => {
  test('its one trace is a tree from the CLI start, and every span carries the run id', () => {
    expect(summary.status).toBe('completed');
    const ids = new Set(trace.map((s) => s.spanId));
    const roots = trace.filter((s) => !ids.has(s.parentSpanId));
    expect(roots.map((s) => s.name)).toEqual(['StartWorkflow:enrichRunWorkflow']);
    const withoutRunId = trace.filter((s) => s.attributes[RUN_ID] !== runId).map((s) => s.name);
    expect(withoutRunId).toEqual([]);
    // Nothing of this run went to another trace but the start's look for an earlier run of that id.
    const elsewhere = receiver.spans.filter((s) => s.attributes[RUN_ID] === runId && !ids.has(s.spanId));
    expect(elsewhere.map((s) => s.name)).toEqual(['DescribeWorkflow']);
  });

  test('it holds the workflow, a stage workflow per dataset, and their activities', () => {
    const names = new Set(trace.map((s) => s.name));
    for (const name of [
      'RunWorkflow:enrichRunWorkflow',
      'RunActivity:planRun',
      'RunActivity:callBatch',
      'RunActivity:commitRun',
    ])
      expect(names).toContain(name);
    const stageWorkflows = trace
      .filter((s) => s.name.startsWith('RunWorkflow:') && s.name !== 'RunWorkflow:enrichRunWorkflow')
      .map((s) => s.attributes.workflowId);
    for (const stage of ['match', ...DATASETS]) expect(stageWorkflows).toContain(`${runId}/${stage}`);
  });

  test('it holds every Data Service call, with operation, dataset, status and attempt', () => {
    const calls = trace.filter((s) => s.name.startsWith('DataService '));
    // One span per request the service received: the run's own call count.
    const counted = summary.stages.reduce((sum, stage) => sum + stage.calls, 0);
    expect(calls.length).toBe(counted);
    expect(calls.filter((s) => s.attributes['enrichflow.operation'] === 'matchBusinesses').length).toBe(
      summary.stages.find((s) => s.stage === 'match')?.calls,
    );
    for (const dataset of DATASETS) {
      const ofDataset = calls.filter((s) => s.attributes['enrichflow.dataset'] === dataset);
      expect(ofDataset.length).toBe(summary.stages.find((s) => s.stage === dataset)?.calls);
    }
    const limited = calls.filter((s) => s.attributes['http.response.status_code'] === 429);
    expect(
      limited.map((s) => [s.attributes['enrichflow.dataset'], s.attributes['enrichflow.attempt']]),
    ).toEqual([['technographics', 1]]);
    expect(limited[0]?.attributes['error.type']).toBe('RateLimitedError');
    expect(calls.filter((s) => s.attributes['enrichflow.attempt'] === 2)).toHaveLength(1);
    expect(calls.every((s) => s.attributes['http.response.status_code'] === 200 || s === limited[0])).toBe(
      true,
    );
    // Each call is a child of the activity attempt that made it.
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    expect(new Set(calls.map((s) => byId.get(s.parentSpanId)?.name))).toEqual(
      new Set(['RunActivity:callBatch']),
    );
  });

  test('it holds the object-store transfers of the run, the committed tables among them', () => {
    const transfers = trace.filter((s) => s.name.startsWith('ObjectStore '));
    expect(transfers.length).toBeGreaterThan(0);
    const written = transfers
      .filter((s) => s.name === 'ObjectStore put' || s.name === 'ObjectStore putFile')
      .map((s) => String(s.attributes['enrichflow.object_key']));
    expect(written.some((key) => key.endsWith(`${runId}/_SUCCESS`))).toBe(true);
    expect(written.some((key) => key.includes(`${runId}/firmographics/`))).toBe(true);
  });
});
