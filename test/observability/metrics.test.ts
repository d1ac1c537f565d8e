// enrichflow's metric functions inside an activity: what each call, record count and commit adds, by
// which labels — recorded through the activity context's meter, as the worker's Prometheus endpoint
// receives them (test/observability/metrics-report.e2e.test.ts scrapes the real endpoint).
import type { MetricMeter, MetricTags } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, test } from 'vitest';
import type { EnrichmentCalls } from '../../activities/client-port.js';
import {
  countRowsWritten,
  instrumentCalls,
  METRICS,
  outcomeOf,
  recordCall,
  recordRows,
  timedCall,
} from '../../activities/metrics.js';
import { RateLimitedError, RequestTimeoutError, ServerError } from '../../client/errors.js';
import type { TableSummary } from '../../pipeline/run-types.js';

interface Point {
  name: string;
  kind: 'counter' | 'histogram';
  value: number;
  tags: MetricTags;
}

/** A meter that keeps every value it is given. */
function recordingMeter(points: Point[]): MetricMeter {
  const metric = (name: string, kind: Point['kind']) => {
    const write = (value: number, tags: MetricTags = {}) => points.push({ name, kind, value, tags });
    return { name, add: write, record: write, withTags: () => metric(name, kind) };
  };
  return {
    createCounter: (name: string) => metric(name, 'counter'),
    createHistogram: (name: string) => metric(name, 'histogram'),
    createGauge: (name: string) => metric(name, 'histogram'),
    withTags: function () {
      return this;
    },
  } as unknown as MetricMeter;
}

function sum(points: Point[], name: string, tags: MetricTags = {}): number {
  return points
    .filter((p) => p.name === name && Object.entries(tags).every(([k, v]) => p.tags[k] === v))
    .reduce((total, p) => total + p.value, 0);
}

const context = { operationId: 'bulkEnrichFirmographics', correlationId: undefined };

describe('activity metrics', () => {
  test('recordCall: one call by stage, outcome and status, its latency, and 429s on their own', async () => {
    const points: Point[] = [];
    const env = new MockActivityEnvironment(
      { activityType: 'callBatch', taskQueue: 'enrichflow-api' },
      { metricMeter: recordingMeter(points) },
    );
    await env.run(() => {
      recordCall({ stage: 'firmographics', outcome: 'ok', latencyMs: 41.6, status: 200 });
      recordCall({ stage: 'firmographics', outcome: 'rate_limited', latencyMs: 3, status: 429 });
      recordCall({ stage: 'match', outcome: 'timeout', latencyMs: 30_000 });
      return Promise.resolve();
    });
    const calls = points.filter((p) => p.name === METRICS.calls);
    expect(calls.map((p) => p.tags)).toEqual([
      expect.objectContaining({ stage: 'firmographics', outcome: 'ok', status: '200' }),
      expect.objectContaining({ stage: 'firmographics', outcome: 'rate_limited', status: '429' }),
      expect.objectContaining({ stage: 'match', outcome: 'timeout', status: 'none' }),
    ]);
    // The activity context adds which activity, on which task queue, made the call.
    expect(calls[0]!.tags).toMatchObject({ activityType: 'callBatch', taskQueue: 'enrichflow-api' });
    expect(points.filter((p) => p.name === METRICS.callLatency).map((p) => p.value)).toEqual([42, 3, 30_000]);
    expect(sum(points, METRICS.rateLimited, { stage: 'firmographics' })).toBe(1);
    expect(sum(points, METRICS.rateLimited)).toBe(1);
  });

  test('timedCall: failures are recorded with the outcome of the client error, and still thrown', async () => {
    const points: Point[] = [];
    const env = new MockActivityEnvironment({}, { metricMeter: recordingMeter(points) });
    const limited = new RateLimitedError('slow down', 1000, { ...context, status: 429 });
    await env.run(async () => {
      await expect(timedCall('firmographics', () => Promise.reject(limited))).rejects.toBe(limited);
      await expect(timedCall('firmographics', () => Promise.resolve('ok'))).resolves.toBe('ok');
    });
    expect(points.filter((p) => p.name === METRICS.calls).map((p) => p.tags)).toEqual([
      expect.objectContaining({ stage: 'firmographics', outcome: 'rate_limited', status: '429' }),
      expect.objectContaining({ stage: 'firmographics', outcome: 'ok', status: '200' }),
    ]);
    expect(outcomeOf(new ServerError('boom', { ...context, status: 503 }))).toBe('server_error');
    expect(outcomeOf(new RequestTimeoutError('late', 'headers', context))).toBe('timeout');
    expect(outcomeOf(new Error('what'))).toBe('error');
  });

  test('instrumentCalls: records and misses per stage; other members of the client untouched', async () => {
    const points: Point[] = [];
    const client = {
      secret: 'kept private',
      matchBusinesses: () =>
        Promise.resolve({
          body: { matched_businesses: [{ business_id: 'b1' }, { business_id: null }, { business_id: 'b3' }] },
        }),
      bulkEnrich: (_dataset: string, body: { business_ids: string[] }) =>
        Promise.resolve({
          body: { data: body.business_ids.slice(1).map((id) => ({ business_id: id, data: {} })) },
        }),
      enrichHierarchy: (body: { business_id: string }) =>
        Promise.resolve({ body: body.business_id === 'b1' ? { data: { parent: null } } : {} }),
      fetchEvents(this: { secret: string }) {
        return this.secret;
      },
    };
    const calls = instrumentCalls(client as unknown as EnrichmentCalls & { fetchEvents(): string });
    const env = new MockActivityEnvironment({}, { metricMeter: recordingMeter(points) });
    await env.run(async () => {
      await calls.matchBusinesses({ businesses_to_match: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
      await calls.bulkEnrich('firmographics', { business_ids: ['b1', 'b3', 'b4', 'b5'] });
      await calls.enrichHierarchy({ business_id: 'b1' });
      await calls.enrichHierarchy({ business_id: 'b3' });
    });
    expect(sum(points, METRICS.records, { stage: 'match' })).toBe(2);
    expect(sum(points, METRICS.misses, { stage: 'match' })).toBe(1);
    expect(sum(points, METRICS.records, { stage: 'firmographics' })).toBe(3);
    expect(sum(points, METRICS.misses, { stage: 'firmographics' })).toBe(1);
    expect(sum(points, METRICS.records, { stage: 'company_hierarchies' })).toBe(1);
    expect(sum(points, METRICS.misses, { stage: 'company_hierarchies' })).toBe(1);
    expect(sum(points, METRICS.calls, { outcome: 'ok' })).toBe(4);
    // A method the instrumentation does not know keeps working, with the client as `this`.
    expect(calls.fetchEvents()).toBe('kept private');
  });

  test('rows written per table when a run commits; nothing outside an activity', async () => {
    const points: Point[] = [];
    const table = (name: string, rows: number): TableSummary => ({
      table: name,
      rows,
      files: [],
      columns: [],
    });
    const commitRun = countRowsWritten((runId: string) =>
      Promise.resolve({
        runId,
        tables: [table('firmographics', 275), table('matches', 294), table('failures', 0)],
      }),
    );
    const env = new MockActivityEnvironment({}, { metricMeter: recordingMeter(points) });
    const summary = await env.run<[string], { runId: string }, typeof commitRun>(commitRun, 'run-1');
    expect(summary.runId).toBe('run-1');
    expect(points.filter((p) => p.name === METRICS.rowsWritten).map((p) => [p.tags.table, p.value])).toEqual([
      ['firmographics', 275],
      ['matches', 294],
    ]);
    // Direct calls (benchmarks, tests without a worker) are not an error, only unrecorded.
    expect(() => recordRows({ table: 'firmographics', rows: 1 })).not.toThrow();
    expect(() => recordCall({ stage: 'match', outcome: 'ok', latencyMs: 1, status: 200 })).not.toThrow();
  });
});

describe('metrics settings', () => {
  test('ENRICHFLOW_METRICS_ADDRESS: off by default, host:port when set, a bad address named', async () => {
    const { loadConfig } = await import('../../config/index.js');
    const { checkMetricsAddress } = await import('../../workers/runtime.js');
    expect(loadConfig({ env: {} }).metrics.address).toBeUndefined();
    expect(loadConfig({ env: { ENRICHFLOW_METRICS_ADDRESS: '0.0.0.0:9464' } }).metrics.address).toBe(
      '0.0.0.0:9464',
    );
    for (const good of ['0.0.0.0:9464', '127.0.0.1:0', 'worker-1:9464', '[::]:9464']) {
      expect(() => checkMetricsAddress(good), good).not.toThrow();
    }
    for (const bad of ['9464', 'localhost', 'http://0.0.0.0:9464', '0.0.0.0:99999']) {
      expect(() => checkMetricsAddress(bad), bad).toThrow(/ENRICHFLOW_METRICS_ADDRESS: expected host:port/);
    }
  });
});
