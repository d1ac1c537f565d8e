// `events pull` end to end on the real sandbox, Temporal and S3: a run whose table holds exactly the
// events the service returns for the ids and time range (40 ids per call), with manifest and _SUCCESS;
// ids come from the command line or from a Parquet table.
import type { Client } from '@temporalio/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDuckDb } from '../../storage/duckdb.js';
import { buildPullRequest, startEventsPull } from '../../cli/commands/events.js';
import { DataServiceClient } from '../../client/index.js';
import { BUSINESS_EVENT_TYPES } from '../../contract/enums.js';
import type { EnrichflowConfig } from '../../config/index.js';
import type { EventsPullSummary } from '../../pipeline/events-types.js';
import {
  API_KEY,
  readJson,
  readTable,
  s3Location,
  startTestWorker,
  temporalClient,
  testConfig,
  uploadFile,
  type TestWorker,
} from '../support/pipeline-harness.js';
import { envOf, runCli, startEventsSandbox, type EventsSandbox } from './support.js';

let world: EventsSandbox;
let config: EnrichflowConfig;
let worker: TestWorker;
let temporal: Client;
let service: DataServiceClient;

beforeAll(async () => {
  world = await startEventsSandbox();
  config = testConfig(world.sandbox.url);
  worker = await startTestWorker(config);
  temporal = await temporalClient();
  service = new DataServiceClient({ baseUrl: world.sandbox.url, apiKey: API_KEY });
});

afterAll(async () => {
  await worker?.stop();
  await temporal?.connection.close();
  await service?.close();
  await world?.close();
});

/** What the service holds for these ids since `from`, asked directly, 40 at a time. */
async function truth(ids: readonly string[], from: string): Promise<string[]> {
  const found: string[] = [];
  for (let i = 0; i < ids.length; i += 40) {
    const { body } = await service.fetchEvents({
      business_ids: ids.slice(i, i + 40),
      event_types: [...BUSINESS_EVENT_TYPES],
      timestamp_from: from,
    });
    found.push(...body.data.map((e) => e.event_id));
  }
  return found.sort();
}

describe('events pull', () => {
  it('writes the events of the ids over the last 30 days, as the service returns them, with manifest and _SUCCESS', async () => {
    const ids = world.businessIds.slice(0, 90);
    const output = s3Location('events-pull');
    const request = await buildPullRequest(
      { businessIds: [...ids], eventTypes: 'all', since: '30d', output },
      config,
    );
    const { runId, started } = await startEventsPull(temporal, config, request);
    expect(started).toBe(true);
    const summary = (await temporal.workflow.getHandle(runId).result()) as EventsPullSummary;
    expect(summary.plan).toMatchObject({ uniqueIds: 90, totalBatches: 3 });
    expect(summary.timestampFrom).toBe(request.since);

    // The seeded history is served as ending today, so the last 30 days hold events.
    const expected = await truth(ids, request.since ?? '');
    expect(expected.length).toBeGreaterThan(0);
    const { rows, types } = await readTable<{ event_id: string; business_id: string; event_time: string }>(
      config,
      summary.outputPrefix,
      'events',
    );
    expect(rows.map((r) => r.event_id).sort()).toEqual(expected);
    expect(types).toMatchObject({
      event_id: 'VARCHAR',
      event_time: 'TIMESTAMP WITH TIME ZONE',
      data: 'JSON',
    });
    for (const row of rows) expect(ids).toContain(row.business_id);

    const manifest = await readJson<{ kind: string; counts: { events: number; batches: number } }>(
      config,
      `${summary.outputPrefix}manifest.json`,
    );
    expect(manifest).toMatchObject({ kind: 'events_pull', counts: { events: expected.length, batches: 3 } });
    expect(await readJson(config, `${summary.outputPrefix}_SUCCESS`)).toMatchObject({ run_id: runId });

    // The same request again is the same run: nothing new is started.
    expect((await startEventsPull(temporal, config, request)).started).toBe(false);
  });

  it('takes ids from a Parquet table through the CLI', async () => {
    const ids = world.businessIds.slice(100, 160);
    const dir = mkdtempSync(path.join(tmpdir(), 'events-pull-ids-'));
    try {
      const file = path.join(dir, 'ids.parquet');
      await withDuckDb({}, async (connection) => {
        await connection.run(
          `COPY (SELECT unnest([${ids.map((id) => `'${id}'`).join(', ')}, NULL]) AS business_id, 'x' AS other)
           TO '${file}' (FORMAT PARQUET)`,
        );
      });
      const location = `${s3Location('events-pull-ids')}ids.parquet`;
      await uploadFile(config, location, file);
      const output = s3Location('events-pull-cli');
      const { stdout } = await runCli(
        ['events', 'pull', '--from-parquet', location, '--event-types', 'all', '--output', output, '--json'],
        envOf(config),
      );
      const summary = JSON.parse(stdout) as EventsPullSummary;
      expect(summary.plan).toMatchObject({ uniqueIds: 60, totalBatches: 2 });
      const { rows } = await readTable<{ event_id: string }>(config, summary.outputPrefix, 'events');
      expect(rows.map((r) => r.event_id).sort()).toEqual(await truth(ids, '2000-01-01'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('resolves a relative bound when the run starts, as a scheduled run does', async () => {
    const output = s3Location('events-pull-relative');
    const request = await buildPullRequest(
      { businessIds: world.businessIds.slice(0, 5), eventTypes: 'all', since: '7d', output },
      config,
      Date.now(),
      { keepRelativeBounds: true },
    );
    expect(request.since).toBe('7d');
    const before = Date.now();
    const { runId } = await startEventsPull(temporal, config, request);
    const summary = (await temporal.workflow.getHandle(runId).result()) as EventsPullSummary;
    const from = Date.parse(summary.timestampFrom ?? '');
    expect(from).toBeGreaterThanOrEqual(before - 7 * 86_400_000 - 1_000);
    expect(from).toBeLessThanOrEqual(Date.now() - 7 * 86_400_000);
  });

  it('refuses unknown event types and malformed bounds before starting anything', async () => {
    const output = s3Location('events-pull-bad');
    await expect(
      buildPullRequest({ businessIds: [world.businessIds[0] ?? ''], eventTypes: 'ipo', output }, config),
    ).rejects.toThrow(/unknown event type "ipo"/);
    await expect(
      buildPullRequest(
        { businessIds: [world.businessIds[0] ?? ''], eventTypes: 'all', since: 'yesterday', output },
        config,
      ),
    ).rejects.toThrow(/neither a duration/);
  });
});
