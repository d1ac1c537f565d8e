// The main job end to end, on the real Temporal dev server, the real S3 server and the real sandbox over
// HTTP: what an analyst loads must equal what the service holds for the matched ids.
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { DataServiceClient } from '../../client/index.js';
import type { EnrichflowConfig } from '../../config/index.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import { validateJobSpec } from '../../jobs/job-spec.js';
import { startRun } from '../../cli/start-run.js';
import { storeResolverFor } from '../../workers/worker.js';
import type { RunSummary } from '../../pipeline/run-types.js';
import {
  API_KEY,
  matchedIds,
  readJson,
  readTable,
  s3Location,
  setFaults,
  startTestWorker,
  testConfig,
  SAMPLE_COMPANIES,
  startPipelineStack,
  type PipelineStack,
} from '../support/pipeline-harness.js';
import { startSandboxDoor } from '../support/sandbox-door.js';

const SAMPLE = SAMPLE_COMPANIES;

let stack: PipelineStack;
let sandbox: RunningSandbox;
let config: EnrichflowConfig;
let client: Client;
let service: DataServiceClient;
let input: string;

beforeAll(async () => {
  stack = await startPipelineStack();
  ({ sandbox, config, client, service, input } = stack);
});

afterAll(async () => stack?.stop());

async function runToEnd(spec: unknown): Promise<RunSummary> {
  const { runId } = await startRun(client, config, validateJobSpec(spec, 'test'));
  return (await client.workflow.getHandle(runId).result()) as RunSummary;
}

async function truth(dataset: 'firmographics' | 'technographics' | 'funding_and_acquisition', ids: string[]) {
  const records = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < ids.length; i += 50) {
    const { body } = await service.bulkEnrich(dataset, { business_ids: ids.slice(i, i + 50) });
    for (const item of body.data ?? []) records.set(item.business_id, item.data);
  }
  return records;
}

describe('enrich: sample companies from S3 to Parquet on S3', () => {
  let summary: RunSummary;
  let output: string;

  beforeAll(async () => {
    output = s3Location('enriched');
    summary = await runToEnd({
      job_name: 'sample',
      input: { location: input },
      datasets: ['firmographics', 'technographics', 'funding_and_acquisition', 'company_hierarchies'],
      output,
    });
  });

  test('the run completes, and every usable row is in matches with its status', async () => {
    expect(summary.status).toBe('completed');
    const matches = await readTable<{ row_number: string; business_id: string | null; match_status: string }>(
      config,
      summary.outputPrefix,
      'matches',
    );
    const rejects = await readTable<{ row_number: string; reason: string }>(
      config,
      summary.outputPrefix,
      'rejects',
    );
    expect(matches.rows.length + rejects.rows.length).toBe(300);
    expect(summary.plan.inputRows).toBe(300);
    const rowNumbers = [...matches.rows, ...rejects.rows]
      .map((r) => Number(r.row_number))
      .sort((a, b) => a - b);
    expect(rowNumbers).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    for (const reject of rejects.rows)
      expect(reject.reason).toMatch(/no usable field|not a valid|no valid host|not a profile/);
    const matched = matches.rows.filter((r) => r.match_status === 'matched');
    expect(matched.length).toBeGreaterThan(240);
    expect(matches.rows.filter((r) => r.match_status === 'unmatched').length).toBeGreaterThan(0);
    expect(matches.types.business_id).toBe('VARCHAR');
  });

  test("each dataset table equals the service's records for the matched ids, once per id", async () => {
    const ids = await matchedIds(config, summary.outputPrefix);
    expect(ids.length).toBe(summary.enrichPlan.uniqueIds);
    for (const dataset of ['firmographics', 'technographics', 'funding_and_acquisition'] as const) {
      const expected = await truth(dataset, ids);
      const table = await readTable<Record<string, unknown>>(config, summary.outputPrefix, dataset);
      const got = table.rows.map((r) => r.business_id as string);
      expect(new Set(got).size, `${dataset}: duplicate ids`).toBe(got.length);
      expect(new Set(got), dataset).toEqual(new Set(expected.keys()));
      for (const row of table.rows) {
        const record = expected.get(row.business_id as string)!;
        for (const field of [
          'name',
          'website',
          'number_of_employees_range',
          'full_tech_stack',
          'investors',
          'number_of_funding_rounds',
        ]) {
          if (!(field in table.types)) continue;
          const want = record[field] ?? null;
          const have = row[field] ?? null;
          expect(
            typeof have === 'string' && /^\d+$/.test(have) ? Number(have) : have,
            `${dataset}.${field}`,
          ).toEqual(want);
        }
      }
    }
  });

  test('columns carry the types a warehouse expects', async () => {
    const firmographics = await readTable(
      config,
      summary.outputPrefix,
      'firmographics',
      'SELECT * FROM t LIMIT 1',
    );
    expect(firmographics.types).toMatchObject({
      business_id: 'VARCHAR',
      name: 'VARCHAR',
      number_of_employees_range: 'VARCHAR',
    });
    const technographics = await readTable(
      config,
      summary.outputPrefix,
      'technographics',
      'SELECT * FROM t LIMIT 1',
    );
    expect(technographics.types.full_tech_stack).toBe('VARCHAR[]');
    const funding = await readTable(
      config,
      summary.outputPrefix,
      'funding_and_acquisition',
      'SELECT * FROM t LIMIT 1',
    );
    expect(funding.types).toMatchObject({
      is_ipo: 'BOOLEAN',
      number_of_funding_rounds: 'BIGINT',
      ipo_date: 'TIMESTAMP WITH TIME ZONE',
    });
    const hierarchies = await readTable(
      config,
      summary.outputPrefix,
      'company_hierarchies',
      'SELECT * FROM t LIMIT 1',
    );
    expect(hierarchies.types.subsidiaries).toMatch(/^STRUCT\(id VARCHAR, "?name"? VARCHAR\)\[\]$/);
  });

  test('manifest lists every file with rows and checksum, and _SUCCESS is there', async () => {
    const manifest = await readJson<{
      status: string;
      tables: { name: string; rows: number; files: { key: string; sha256: string }[] }[];
    }>(config, `${summary.outputPrefix}manifest.json`);
    expect(manifest.status).toBe('completed');
    expect(manifest.tables.map((t) => t.name).sort()).toEqual(
      [
        'company_hierarchies',
        'failures',
        'firmographics',
        'funding_and_acquisition',
        'matches',
        'rejects',
        'technographics',
      ].sort(),
    );
    for (const table of manifest.tables) {
      for (const file of table.files) expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    await expect(readJson(config, `${summary.outputPrefix}_SUCCESS`)).resolves.toMatchObject({
      run_id: summary.runId,
    });
    const { store, prefix } = storeResolverFor(config)(`${summary.outputPrefix}report.md`);
    const report = (await store.getBytes(prefix)).toString('utf8');
    for (const table of [
      'firmographics',
      'technographics',
      'funding_and_acquisition',
      'company_hierarchies',
      'matches',
    ]) {
      expect(report).toContain(table);
    }
  });

  test('no API key and no input row appears in any workflow history of the run', async () => {
    const sampleNames = (await import('node:fs'))
      .readFileSync(SAMPLE, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[0] ?? '')
      .filter((name) => name.length > 8);
    expect(sampleNames.length).toBeGreaterThan(50);
    const ids = [summary.runId, ...summary.stages.map((s) => `${summary.runId}/${s.stage}`)];
    for (const id of ids) {
      const history = JSON.stringify(await client.workflow.getHandle(id).fetchHistory());
      expect(history).not.toContain(API_KEY);
      for (const name of sampleNames)
        expect(history, `${id} carries input row "${name}"`).not.toContain(name);
    }
  });

  test('starting the same run again does not do the work again', async () => {
    const again = await startRun(
      client,
      config,
      validateJobSpec(
        {
          job_name: 'sample',
          input: { location: input },
          datasets: ['firmographics', 'technographics', 'funding_and_acquisition', 'company_hierarchies'],
          output,
        },
        'test',
      ),
    );
    expect(again).toEqual({ runId: summary.runId, started: false });
  });
});

describe('enrich: input that cannot be used', () => {
  test('a missing input file fails before anything starts, naming the file', async () => {
    const spec = validateJobSpec(
      {
        input: { location: `${s3Location('inputs')}nope.csv` },
        datasets: ['firmographics'],
        output: s3Location('out'),
      },
      'test',
    );
    await expect(startRun(client, config, spec)).rejects.toThrow(/nope\.csv: no such file/);
  });

  test('a file with no usable column is refused before a run starts, with a message naming the file', async () => {
    // (The preflight: test/failure-paths/preflight.e2e.test.ts has every case, and a worker's.)
    const location = `${s3Location('inputs')}wrong.csv`;
    const { store, prefix } = (await import('../../workers/worker.js')).storeResolverFor(config)(location);
    await store.put(prefix, 'foo,bar\n1,2\n');
    await expect(
      startRun(
        client,
        config,
        validateJobSpec(
          { input: { location }, datasets: ['firmographics'], output: s3Location('out') },
          'test',
        ),
      ),
    ).rejects.toThrow(/wrong\.csv: no usable column/);
  });
});

describe('enrich: a key the service refuses', () => {
  test('401 stops the run at once with a message naming the key, without burning retries', async () => {
    const badConfig = testConfig(sandbox.url, { ENRICHFLOW_API_KEY: 'not-a-valid-key' });
    const badWorker = await startTestWorker(badConfig);
    try {
      const started = Date.now();
      const { runId } = await startRun(
        client,
        badConfig,
        validateJobSpec(
          {
            job_name: 'badkey',
            input: { location: input },
            datasets: ['firmographics'],
            output: s3Location('out'),
          },
          'test',
        ),
      );
      const failure = await client.workflow
        .getHandle(runId)
        .result()
        .then(
          () => undefined,
          (error: unknown) => error as { cause?: { message?: string; type?: string } },
        );
      expect(failure?.cause?.message).toMatch(/rejected the API key .*Check ENRICHFLOW_API_KEY/);
      expect(Date.now() - started).toBeLessThan(20_000);
      const history = JSON.stringify(await client.workflow.getHandle(`${runId}/match`).fetchHistory());
      expect(
        history.match(/"ActivityTaskStarted"|activityTaskStartedEventAttributes/g)?.length ?? 0,
      ).toBeLessThanOrEqual(32);
    } finally {
      await badWorker.stop();
    }
  });
});

describe('enrich: a faulty service', () => {
  afterAll(async () => setFaults(sandbox, []));

  test('5xx, 429 bursts and hanging requests are survived, and the output is complete', async () => {
    await setFaults(sandbox, [
      { match: 'bulkEnrich*', kind: 'error', rate: 0.1 },
      { match: 'matchBusinesses', kind: 'error', status: 502, rate: 0.1 },
      { match: 'bulkEnrich*', kind: 'rate_limit', count: 3, retryAfterSeconds: 1 },
      { match: 'bulkEnrichTechnographics', kind: 'hang', count: 2 },
    ]);
    // This run's worker reaches the sandbox through a door that counts what the service received.
    const door = await startSandboxDoor(sandbox.url);
    const doorConfig = testConfig(door.url);
    const doorWorker = await startTestWorker(doorConfig);
    let summary: RunSummary;
    try {
      const { runId } = await startRun(
        client,
        doorConfig,
        validateJobSpec(
          {
            job_name: 'faulty',
            input: { location: input },
            datasets: ['firmographics', 'technographics'],
            output: s3Location('enriched'),
            api_retry: { initial_interval_ms: 100, maximum_interval_ms: 500 },
          },
          'test',
        ),
      );
      summary = (await client.workflow.getHandle(runId).result()) as RunSummary;
    } finally {
      await doorWorker.stop();
      await door.close();
    }
    expect(summary.status).toBe('completed');
    const ids = summary.enrichPlan.uniqueIds;
    const firmographics = await readTable(
      config,
      summary.outputPrefix,
      'firmographics',
      'SELECT count(*) AS n, count(DISTINCT business_id) AS d FROM t',
    );
    expect(firmographics.rows[0]).toEqual({ n: firmographics.rows[0]?.d, d: firmographics.rows[0]?.d });
    const stage = summary.stages.find((s) => s.stage === 'firmographics')!;
    expect(stage.records + stage.misses).toBe(ids);
    // Retries happened, but no storm: at most the minimal calls plus a few percent.
    const minimal = summary.stages.reduce((sum, s) => sum + s.totalBatches, 0);
    const calls = summary.stages.reduce((sum, s) => sum + s.calls, 0);
    expect(calls).toBeGreaterThan(minimal);
    expect(calls).toBeLessThanOrEqual(Math.ceil(minimal * 1.5));
    // The calls the run reports are the requests the service received: failed, hung and retried ones
    // included, none that never left.
    expect(calls).toBe(door.requests.filter((r) => r.path.startsWith('/v1/')).length);
  });

  test('a 422 on a batch is split down to the id that causes it; the rest of the batch is enriched', async () => {
    const { body } = await service.matchBusinesses({
      businesses_to_match: [{ domain: 'granorhavenpartners.co.uk' }],
    });
    const poisoned = body.matched_businesses[0]?.business_id;
    expect(poisoned).toMatch(/^[0-9a-f]{32}$/);
    await setFaults(sandbox, [{ match: 'bulkEnrichFirmographics', kind: 'reject', bodyContains: poisoned! }]);
    const summary = await runToEnd({
      job_name: 'poisoned',
      input: { location: input },
      datasets: ['firmographics'],
      output: s3Location('enriched'),
    });
    expect(summary.status).toBe('completed_with_failures');
    const failures = await readTable<{ error_type: string; items: string[]; message: string }>(
      config,
      summary.outputPrefix,
      'failures',
    );
    expect(failures.rows).toEqual([
      expect.objectContaining({ error_type: 'ValidationError', items: [poisoned] }) as unknown,
    ]);
    const ids = await matchedIds(config, summary.outputPrefix);
    const expected = await truth(
      'firmographics',
      ids.filter((id) => id !== poisoned),
    );
    const table = await readTable<{ business_id: string }>(
      config,
      summary.outputPrefix,
      'firmographics',
      'SELECT business_id FROM t',
    );
    expect(new Set(table.rows.map((r) => r.business_id))).toEqual(new Set(expected.keys()));
    // Bisection costs about two calls per halving (50 → 1 is six halvings), not a call per id.
    const stage = summary.stages.find((s) => s.stage === 'firmographics')!;
    expect(stage.calls).toBeLessThanOrEqual(stage.totalBatches + 2 * 6 + 1);
  });

  test('a batch that keeps failing is recorded, the run completes with failures, and retry finishes it', async () => {
    await setFaults(sandbox, [{ match: 'bulkEnrichFirmographics', kind: 'error', count: 6 }]);
    const summary = await runToEnd({
      job_name: 'retry',
      input: { location: input },
      datasets: ['firmographics'],
      output: s3Location('enriched'),
      window_size: 1,
      api_retry: { maximum_attempts: 3, initial_interval_ms: 50, maximum_interval_ms: 100 },
    });
    expect(summary.status).toBe('completed_with_failures');
    expect(summary.failedBatches).toBe(2);
    const failures = await readTable<{
      stage: string;
      error_type: string;
      attempts: number;
      items: string[];
    }>(config, summary.outputPrefix, 'failures');
    expect(failures.rows).toHaveLength(2);
    expect(failures.rows[0]).toMatchObject({
      stage: 'firmographics',
      error_type: 'ServerError',
      attempts: 3,
    });
    expect(failures.rows[0]?.items.length).toBe(50);
    const before = await readTable(
      config,
      summary.outputPrefix,
      'firmographics',
      'SELECT count(*) AS n FROM t',
    );

    const retry = (await client.workflow.execute('retryRunWorkflow', {
      workflowId: `${summary.runId}.retry-test`,
      taskQueue: config.temporal.taskQueue,
      args: [{ previous: summary, apiTaskQueue: config.temporal.apiTaskQueue }],
    })) as RunSummary;
    expect(retry.status).toBe('completed');
    expect(retry.failedBatches).toBe(0);
    const stage = retry.stages.find((s) => s.stage === 'firmographics')!;
    expect(stage.calls).toBe(summary.stages.find((s) => s.stage === 'firmographics')!.calls + 2);
    const after = await readTable<{ n: string; d: string }>(
      config,
      summary.outputPrefix,
      'firmographics',
      'SELECT count(*) AS n, count(DISTINCT business_id) AS d FROM t',
    );
    expect(Number(after.rows[0]?.n)).toBeGreaterThan(Number((before.rows[0] as { n: string }).n));
    expect(after.rows[0]?.n).toBe(after.rows[0]?.d);
    expect(Number(after.rows[0]?.n)).toBe(stage.records);
    const manifest = await readJson<{ status: string; retries: string[] }>(
      config,
      `${summary.outputPrefix}manifest.json`,
    );
    expect(manifest).toMatchObject({ status: 'completed', retries: [`${summary.runId}.retry-test`] });
  });
});
