// Search exports end to end on the real Temporal dev server, S3 server and sandbox over HTTP: what lands
// in Parquet must be exactly the records the service holds for the filters — each once — and whatever
// the cap keeps out must be reported, never dropped silently. The offset cap is lowered to 1,000 so a
// small world exercises the splitting.
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { buildProgram } from '../../cli/main.js';
import type { EnrichflowConfig } from '../../config/index.js';
import { startExport } from '../../cli/export-run.js';
import type { ExportSpec } from '../../jobs/export-spec.js';
import type { RunningSandbox } from '../../sandbox/serve.js';
import { storeResolverFor } from '../../workers/worker.js';
import type { ExportPlanResult, ExportSummary } from '../../pipeline/export-types.js';
import {
  readJson,
  readTable,
  s3Location,
  startTestWorker,
  temporalClient,
  testConfig,
  type TestWorker,
} from '../support/pipeline-harness.js';
import {
  exportToEnd,
  prospectIds,
  startCountingProxy,
  startExportSandbox,
  type CountingProxy,
} from './support.js';

let sandbox: RunningSandbox;
let proxy: CountingProxy;
let config: EnrichflowConfig;
let worker: TestWorker;
let client: Client;

beforeAll(async () => {
  sandbox = await startExportSandbox('export');
  proxy = await startCountingProxy(sandbox.url);
  config = testConfig(proxy.url);
  worker = await startTestWorker(config);
  client = await temporalClient();
});

afterAll(async () => {
  await worker?.stop();
  await client?.connection.close();
  await proxy?.close();
  await sandbox?.close();
});

const CAP = 1_000;

function spec(filters: Record<string, unknown>, extra: Partial<ExportSpec> = {}): ExportSpec {
  return { target: 'prospects', filters, output: s3Location('exports'), offsetCap: CAP, ...extra };
}

async function exportedIds(
  summary: ExportSummary,
  table = 'prospects',
  id = 'prospect_id',
): Promise<string[]> {
  const { rows } = await readTable<{ id: string }>(
    config,
    summary.outputPrefix,
    table,
    `SELECT ${id} AS id FROM t`,
  );
  return rows.map((r) => r.id);
}

function expectSameIds(got: string[], want: string[]) {
  expect(new Set(got).size, 'no duplicates').toBe(got.length);
  expect(got.length).toBe(want.length);
  expect(new Set(got)).toEqual(new Set(want));
}

describe('prospect exports', () => {
  test('a search under the cap: one slice, every record once, typed as the contract says', async () => {
    const summary = await exportToEnd(client, config, spec({ company_size: { values: ['1-10'] } }));
    expect(summary.status).toBe('completed');
    expect(summary.plan.slices).toHaveLength(1);
    const want = await prospectIds(sandbox, `b.size_range = '1-10'`);
    expectSameIds(await exportedIds(summary), want);
    const { types } = await readTable(config, summary.outputPrefix, 'prospects', 'SELECT * FROM t LIMIT 1');
    expect(types).toMatchObject({
      prospect_id: 'VARCHAR',
      experience: 'VARCHAR[]',
      skills: 'VARCHAR[]',
      job_seniority_level: 'VARCHAR[]',
      network_url_array: 'VARCHAR[]',
      business_id: 'VARCHAR',
    });
    const manifest = await readJson<{
      status: string;
      counts: Record<string, unknown>;
      tables: { name: string; files: { sha256: string }[] }[];
    }>(config, `${summary.outputPrefix}manifest.json`);
    expect(manifest.status).toBe('completed');
    expect(manifest.counts).toMatchObject({
      search_total: want.length,
      written: want.length,
      slices_match_search: true,
    });
    expect(manifest.tables.map((t) => t.name).sort()).toEqual(['failures', 'prospects']);
    await expect(readJson(config, `${summary.outputPrefix}_SUCCESS`)).resolves.toMatchObject({
      run_id: summary.runId,
    });
  });

  test('a search that matches nothing completes with an empty, typed table', async () => {
    const summary = await exportToEnd(client, config, spec({ business_id: { values: ['0'.repeat(32)] } }));
    expect(summary.status).toBe('completed');
    expect(summary.counts).toMatchObject({ searchTotal: 0, written: 0 });
    const { rows, types } = await readTable(config, summary.outputPrefix, 'prospects');
    expect(rows).toEqual([]);
    expect(types.experience).toBe('VARCHAR[]');
  });

  test('a search over the cap is split into disjoint slices that add up to the true count', async () => {
    const summary = await exportToEnd(
      client,
      config,
      spec({ company_size: { values: ['51-200', '1001-5000'] } }),
    );
    const want = await prospectIds(sandbox, `b.size_range IN ('51-200', '1001-5000')`);
    expect(want.length).toBeGreaterThan(3 * CAP);
    expect(summary.status).toBe('completed');
    expect(summary.plan.slices.length).toBeGreaterThanOrEqual(4);
    expect(summary.plan.slices.every((s) => s.method === 'offset' && s.count <= CAP)).toBe(true);
    expect(summary.plan.total).toEqual({ n: want.length, exact: true });
    expect(summary.plan.sliceSum).toBe(want.length);
    expect(summary.counts).toMatchObject({ fetched: want.length, duplicates: 0, written: want.length });
    expectSameIds(await exportedIds(summary), want);
  });

  test('a slice no filter can split is fetched to the cap and reported truncated, loudly', async () => {
    const summary = await exportToEnd(
      client,
      config,
      spec({ company_size: { values: ['51-200'] } }, { splitBy: ['company_size'], cursor: false }),
    );
    const all = await prospectIds(sandbox, `b.size_range = '51-200'`);
    expect(summary.status).toBe('completed_truncated');
    expect(summary.plan.slices).toEqual([
      expect.objectContaining({ method: 'truncated', count: all.length, planned: CAP }),
    ]);
    expect(summary.counts).toMatchObject({
      written: CAP,
      truncatedSlices: 1,
      missingFromTruncated: all.length - CAP,
    });
    expect(summary.warnings.join('\n')).toMatch(
      new RegExp(`TRUNCATED: slice 0 .* ${all.length - CAP} of its records are NOT in the output`),
    );
    const ids = await exportedIds(summary);
    expect(new Set(ids).size).toBe(CAP);
    expect(ids.every((id) => all.includes(id))).toBe(true);
    const manifest = await readJson<{
      status: string;
      warnings: string[];
      plan: { slices: { truncated: boolean }[] };
    }>(config, `${summary.outputPrefix}manifest.json`);
    expect(manifest.status).toBe('completed_truncated');
    expect(manifest.plan.slices[0]?.truncated).toBe(true);
    expect(manifest.warnings[0]).toMatch(/^TRUNCATED/);
  });

  test('with cursor mode, a slice no filter can split is fetched whole by its cursor chain', async () => {
    const summary = await exportToEnd(
      client,
      config,
      spec({ company_size: { values: ['51-200'] } }, { splitBy: ['company_size'] }),
    );
    const want = await prospectIds(sandbox, `b.size_range = '51-200'`);
    expect(summary.status).toBe('completed');
    expect(summary.plan.slices).toEqual([expect.objectContaining({ method: 'cursor', count: want.length })]);
    expectSameIds(await exportedIds(summary), want);
  });

  test('exclude leaves the listed ids out, sent to the service or removed when writing', async () => {
    const want = await prospectIds(sandbox, `b.size_range = '1-10'`);
    const excluded = want.slice(0, 10);
    const store = storeResolverFor(config);
    const few = `${s3Location('exclude')}few.txt`;
    const many = `${s3Location('exclude')}many.txt`;
    await store(few).store.put(store(few).prefix, `prospect_id\n${excluded.join('\n')}\n`);
    // 1,001 ids: over the service's limit of 1,000, so they are removed when the table is written.
    const filler = Array.from({ length: 991 }, (_, i) => (i + 1).toString(16).padStart(40, '0'));
    await store(many).store.put(store(many).prefix, [...excluded, ...filler].join('\n'));
    const filters = { company_size: { values: ['1-10'] } };
    const sent = await exportToEnd(client, config, spec(filters, { exclude: few }));
    expect(sent.plan.exclude).toEqual({ ids: 10, sent: true });
    expectSameIds(await exportedIds(sent), want.slice(10));
    const removed = await exportToEnd(client, config, spec(filters, { exclude: many }));
    expect(removed.plan.exclude).toEqual({ ids: 1_001, sent: false });
    expect(removed.counts.excluded).toBe(10);
    expectSameIds(await exportedIds(removed), want.slice(10));
  });

  test('size stops after N records; a dry run plans without fetching a page', async () => {
    const filters = { company_size: { values: ['51-200', '1001-5000'] } };
    const sized = await exportToEnd(client, config, spec(filters, { size: 250 }));
    expect(sized.counts.written).toBe(250);
    expect(sized.plan.plannedPages).toBe(3);
    expect(new Set(await exportedIds(sized)).size).toBe(250);

    const before = proxy.calls.length;
    const dry = spec(filters, { dryRun: true });
    const result = await exportToEnd<ExportPlanResult>(client, config, dry);
    expect(result.kind).toBe('export-plan');
    expect(result.plan.slices.length).toBeGreaterThanOrEqual(4);
    expect(result.calls.pages).toBe(result.plan.plannedPages);
    const made = proxy.calls.slice(before);
    expect(made).toHaveLength(result.calls.probes);
    expect(made.every((c) => c.body?.page_size === 1)).toBe(true);
    const { store, prefix } = storeResolverFor(config)(`${dry.output}${result.runId}/`);
    const written: string[] = [];
    for await (const info of store.list(prefix)) written.push(info.key.slice(prefix.length));
    expect(written.some((k) => k.includes('pages/') || k === 'manifest.json' || k === '_SUCCESS')).toBe(
      false,
    );
  });

  test('with posts: one posts record per prospect that has posts, the rest counted as misses', async () => {
    const [employer] = await sandbox.app.sandbox.store.query(
      `SELECT b.business_id AS id FROM prospects p JOIN businesses b ON b.bix = p.bix GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`,
    );
    const businessId = String(employer?.id);
    const summary = await exportToEnd(
      client,
      config,
      spec({ business_id: { values: [businessId] } }, { withPosts: true }),
    );
    const want = await prospectIds(sandbox, `b.business_id = '${businessId}'`);
    const withPosts = await sandbox.app.sandbox.store.query(
      `SELECT pp.prospect_id AS id FROM prospect_posts pp JOIN prospects p ON p.pix = pp.pix JOIN businesses b ON b.bix = p.bix WHERE b.business_id = '${businessId}'`,
    );
    expect(summary.status).toBe('completed');
    expect(summary.posts).toMatchObject({
      prospects: want.length,
      records: withPosts.length,
      misses: want.length - withPosts.length,
      failed: 0,
    });
    expect(withPosts.length).toBeGreaterThan(0);
    const posts = await readTable<{ prospect_id: string }>(config, summary.outputPrefix, 'prospect_posts');
    expectSameIds(
      posts.rows.map((r) => r.prospect_id),
      withPosts.map((r) => String(r.id)),
    );
    expect(posts.types).toMatchObject({ post_text: 'VARCHAR', created_at: 'TIMESTAMP WITH TIME ZONE' });
  });
});

describe('operators', () => {
  test('runs list and runs show know export runs', async () => {
    const summary = await exportToEnd(
      client,
      config,
      spec({ company_size: { values: ['1-10'] } }, { size: 120 }),
    );
    const env = {
      ENRICHFLOW_TEMPORAL_ADDRESS: config.temporal.address,
      ENRICHFLOW_TEMPORAL_NAMESPACE: config.temporal.namespace,
    };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    const printed: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    try {
      await buildProgram().parseAsync(['node', 'enrichflow', 'runs', 'list', '--limit', '100']);
      expect(printed.join('')).toMatch(new RegExp(`${summary.runId}\\s+COMPLETED.*prospects`));
      printed.length = 0;
      await buildProgram().parseAsync(['node', 'enrichflow', 'runs', 'show', summary.runId]);
      const shown = printed.join('');
      expect(shown).toContain(`export ${summary.runId}: completed`);
      expect(shown).toMatch(/prospects\s+120 rows/);
    } finally {
      write.mockRestore();
      process.env = saved;
    }
  });
});

describe('business exports', () => {
  test('every business, split with stats past a cap of 500, each once', async () => {
    const summary = await exportToEnd(client, config, {
      target: 'businesses',
      filters: {},
      output: s3Location('exports'),
      offsetCap: 500,
    });
    const rows = await sandbox.app.sandbox.store.query('SELECT business_id AS id FROM businesses');
    expect(summary.status).toBe('completed');
    expect(summary.plan.slices.length).toBeGreaterThanOrEqual(4);
    expect(summary.plan.sliceSum).toBe(rows.length);
    expectSameIds(
      await exportedIds(summary, 'businesses', 'business_id'),
      rows.map((r) => String(r.id)),
    );
  });
});

describe('filters that cannot be used', () => {
  test.each([
    [{ job_levle: { values: ['manager'] } }, /filters\.job_levle: unknown filter/],
    [
      { job_level: { values: ['boss'] } },
      /filters\.job_level\.values\[0\]: value is not a valid enumeration member/,
    ],
    [
      { total_experience_months: { gte: 24, lte: 12 } },
      /filters\.total_experience_months: 'gte' must be less than or equal to 'lte'/,
    ],
  ])('%j is refused before any call, naming the filter', async (filters, message) => {
    const before = proxy.calls.length;
    await expect(startExport(client, config, spec(filters))).rejects.toThrow(message);
    expect(proxy.calls.length).toBe(before);
  });
});
