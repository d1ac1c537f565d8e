// `--dry-run`: the plan of a run — rows, rejects, unique keys, calls and estimated credits per dataset —
// counted by the run's own planner, priced from a price table, without calling the Data Service or
// Temporal.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { formatDryRun, planDryRun, type DryRunPlan } from '../../cli/dry-run.js';
import { loadConfig, type EnrichflowConfig } from '../../config/index.js';
import { validateJobSpec, type JobSpec } from '../../jobs/job-spec.js';
import { PriceTableError } from '../../jobs/prices.js';
import { InputFileError } from '../../storage/plan-input.js';
import { s3Location, testConfig, uploadFile } from '../support/pipeline-harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-dry-run-'));

function file(name: string, content: string): string {
  const full = path.join(dir, name);
  writeFileSync(full, content);
  return full;
}

/** 120 companies, three of them repeated in other spellings, one row with nothing, one bad domain. */
const companiesCsv = file(
  'companies.csv',
  [
    'Company,Website',
    ...Array.from({ length: 120 }, (_, i) => `Company ${i},company-${i}.com`),
    'company 0,https://www.company-0.com/', // same key as row 1
    'COMPANY 1,company-1.com', // same key as row 2
    'Company 2,http://company-2.com', // same key as row 3
    ',', // rejected: nothing usable
    'Broken,not a domain', // rejected: bad domain
  ].join('\n') + '\n',
);

/** 60 distinct business ids, one given twice, and one that is not an id. */
const idsCsv = file(
  'ids.csv',
  [
    'business_id,note',
    ...Array.from({ length: 60 }, (_, i) => `${i.toString(16).padStart(32, '0')},row ${i}`),
    `${(5).toString(16).padStart(32, '0')},again`,
    'not-an-id,bad',
  ].join('\n') + '\n',
);

const config: EnrichflowConfig = loadConfig({ env: {} });

function spec(input: string, datasets: string[], extra: Record<string, unknown> = {}): JobSpec {
  return validateJobSpec(
    { input: { location: input }, datasets, output: path.join(dir, 'out/'), ...extra },
    'test',
  );
}

function stage(plan: DryRunPlan, name: string) {
  const found = plan.stages.find((s) => s.stage === name);
  if (!found) throw new Error(`no stage ${name} in the plan`);
  return found;
}

describe('planDryRun', () => {
  test('counts rows, rejects and unique keys as a run does; calls per dataset at most keys / 50, hierarchies one per id; default prices', async () => {
    const plan = await planDryRun(
      spec(companiesCsv, ['firmographics', 'technographics', 'company_hierarchies']),
      { config },
    );
    expect(plan).toMatchObject({ inputRows: 125, rejectedRows: 2, uniqueKeys: 120, idsProvided: false });
    expect(stage(plan, 'match')).toMatchObject({ items: 120, calls: 3, exact: true, maxCredits: 0 });
    expect(stage(plan, 'firmographics')).toMatchObject({
      items: 120,
      calls: 3,
      exact: false,
      creditsPerRecord: 1,
      maxCredits: 120,
    });
    expect(stage(plan, 'technographics')).toMatchObject({ calls: 3, maxCredits: 120 });
    expect(stage(plan, 'company_hierarchies')).toMatchObject({ batchSize: 1, calls: 120, maxCredits: 120 });
    expect(plan.maxCalls).toBe(3 + 3 + 3 + 120);
    expect(plan.maxCredits).toBe(360);
    expect(plan.prices.source).toBe('built-in defaults');
    // Nothing written where the run's output would go.
    expect(existsSync(path.join(dir, 'out'))).toBe(false);

    const text = formatDryRun(plan);
    expect(text).toContain('input rows   125');
    expect(text).toContain('rejected     2');
    expect(text).toContain('match keys   120 unique');
    expect(text).toMatch(/company_hierarchies\s+≤ 120\s+1\s+≤ 120\s+1\s+120/);
    expect(text).toMatch(/total\s+≤ 129\s+360/);
    expect(text).toContain('upper bound');
    expect(text).toContain('errors and empty results are not billed');
  });

  test('a price file sets credits per record per dataset, a default for the rest, and a match price', async () => {
    const prices = file('prices.yaml', 'default: 2\nmatch: 0.5\ncompany_hierarchies: 5\n');
    const plan = await planDryRun(spec(companiesCsv, ['firmographics', 'company_hierarchies']), {
      config,
      pricesFile: prices,
    });
    expect(stage(plan, 'match')).toMatchObject({ creditsPerRecord: 0.5, maxCredits: 60 });
    expect(stage(plan, 'firmographics')).toMatchObject({ creditsPerRecord: 2, maxCredits: 240 });
    expect(stage(plan, 'company_hierarchies')).toMatchObject({ creditsPerRecord: 5, maxCredits: 600 });
    expect(plan.maxCredits).toBe(900);
    expect(plan.prices.source).toBe(prices);

    // The same file through the setting; the flag wins over the setting.
    const fromSetting = loadConfig({ env: { ENRICHFLOW_PRICE_TABLE: prices } });
    expect(
      (await planDryRun(spec(companiesCsv, ['firmographics']), { config: fromSetting })).maxCredits,
    ).toBe(60 + 240);
    const cheap = file('cheap.json', JSON.stringify({ firmographics: 0.1 }));
    const flagWins = await planDryRun(spec(companiesCsv, ['firmographics']), {
      config: fromSetting,
      pricesFile: cheap,
    });
    expect(stage(flagWins, 'firmographics').maxCredits).toBeCloseTo(12);
    expect(stage(flagWins, 'match').maxCredits).toBe(0);
  });

  test('a bad price file is refused naming the entry at fault, before the input is read', async () => {
    const bad = file('bad-prices.yaml', 'firmographix: 2\ntechnographics: cheap\nmatch: -1\n');
    const error = await planDryRun(spec(path.join(dir, 'missing.csv'), ['firmographics']), {
      config,
      pricesFile: bad,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PriceTableError);
    const message = (error as Error).message;
    expect(message).toContain(`${bad} is not a valid price table`);
    expect(message).toContain('firmographix: not a dataset');
    expect(message).toContain('technographics: expected a number of credits ≥ 0, got "cheap"');
    expect(message).toContain('match: expected a number of credits ≥ 0, got -1');

    const notJson = file('prices.json', '{"firmographics": 1,');
    await expect(
      planDryRun(spec(companiesCsv, ['firmographics']), { config, pricesFile: notJson }),
    ).rejects.toThrow(`${notJson}: not valid JSON`);
    await expect(
      planDryRun(spec(companiesCsv, ['firmographics']), {
        config,
        pricesFile: file('list.yaml', '- 1\n- 2\n'),
      }),
    ).rejects.toThrow('a price table must be a mapping of dataset names');
  });

  test('an input carrying business_id gives exact calls and no match step', async () => {
    const plan = await planDryRun(spec(idsCsv, ['firmographics', 'company_hierarchies']), { config });
    expect(plan).toMatchObject({ inputRows: 62, rejectedRows: 1, uniqueKeys: 60, idsProvided: true });
    expect(plan.stages.map((s) => s.stage)).toEqual(['firmographics', 'company_hierarchies']);
    expect(stage(plan, 'firmographics')).toMatchObject({ items: 60, calls: 2, exact: true, maxCredits: 60 });
    expect(stage(plan, 'company_hierarchies')).toMatchObject({ calls: 60, exact: true });
    const text = formatDryRun(plan);
    expect(text).toContain('business ids 60 unique (provided in the input; no match step)');
    expect(text).toMatch(/total\s+62\s+120/);
    expect(text).not.toContain('≤');
  });

  test('max_calls shows whether the plan fits the budget; max_age notes that fresh ids may be skipped', async () => {
    const fits = await planDryRun(spec(idsCsv, ['firmographics'], { max_calls: 2 }), { config });
    expect(fits.budget).toEqual({ maxCalls: 2, fits: true });
    expect(formatDryRun(fits)).toContain('Budget: max_calls 2; the plan fits');

    const over = await planDryRun(
      spec(companiesCsv, ['company_hierarchies'], { max_calls: 50, max_age: '30d' }),
      {
        config,
      },
    );
    expect(over.budget).toEqual({ maxCalls: 50, fits: false });
    const text = formatDryRun(over);
    expect(text).toContain('Budget: max_calls 50; the plan does NOT fit (up to 123 calls)');
    expect(text).toContain('the run would stop at budget after 50 calls');
    expect(text).toContain('Incremental run (max_age 30d)');
  });

  test('a bad input fails with the same InputFileError as a run', async () => {
    const error = await planDryRun(
      spec(companiesCsv, ['firmographics'], {
        input: { location: companiesCsv, columns: { domain: 'Domain' } },
      }),
      { config },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as Error).message).toContain('column "Domain" given for domain is not in the file');
    await expect(
      planDryRun(spec(file('empty.csv', 'name,domain\n'), ['firmographics']), { config }),
    ).rejects.toThrow('the file has no data rows');
  });

  test('reads an input from S3 like a run does', async () => {
    const s3Config = testConfig('http://127.0.0.1:9');
    const input = `${s3Location('dry-run')}companies.csv`;
    await uploadFile(s3Config, input, companiesCsv);
    const plan = await planDryRun(spec(input, ['firmographics']), { config: s3Config });
    expect(plan).toMatchObject({ input, inputRows: 125, rejectedRows: 2, uniqueKeys: 120 });
  });
});

describe('enrichflow enrich|run --dry-run', () => {
  let server: Server;
  let requests = 0;
  let serviceUrl: string;
  let closedPort: number;

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests += 1;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    serviceUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // A port nobody listens on, for Temporal: the dry run must not need it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function enrichflow(
    args: string[],
    env: Record<string, string> = {},
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'bin/enrichflow-src.ts', ...args], {
        cwd: ROOT,
        env: {
          ...process.env,
          ENRICHFLOW_API_BASE_URL: serviceUrl,
          ENRICHFLOW_API_KEY: 'test-key',
          ENRICHFLOW_TEMPORAL_ADDRESS: `127.0.0.1:${closedPort}`,
          ...env,
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });
  }

  test('enrich --dry-run --json prints the plan with no server running and no call to the service', async () => {
    const out = path.join(dir, 'cli-out/');
    const result = await enrichflow([
      'enrich',
      '--input',
      companiesCsv,
      '--datasets',
      'firmographics,company_hierarchies',
      '--output',
      out,
      '--max-calls',
      '500',
      '--dry-run',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const plan = JSON.parse(result.stdout) as DryRunPlan;
    expect(plan).toMatchObject({
      dryRun: true,
      inputRows: 125,
      rejectedRows: 2,
      uniqueKeys: 120,
      maxCalls: 3 + 3 + 120,
      maxCredits: 240,
      budget: { maxCalls: 500, fits: true },
    });
    expect(requests).toBe(0);
    expect(existsSync(out)).toBe(false);
  });

  test('run job.yaml --dry-run prints the plan as text, prices from ENRICHFLOW_PRICE_TABLE', async () => {
    const job = file(
      'job.yaml',
      'input:\n  location: ids.csv\ndatasets: [firmographics, technographics]\noutput: job-out/\n',
    );
    const prices = file('job-prices.yaml', 'firmographics: 3\n');
    const result = await enrichflow(['run', job, '--dry-run'], { ENRICHFLOW_PRICE_TABLE: prices });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Dry run of job ids');
    expect(result.stdout).toContain('input rows   62');
    expect(result.stdout).toMatch(/firmographics\s+60\s+50\s+2\s+3\s+180/);
    expect(result.stdout).toMatch(/technographics\s+60\s+50\s+2\s+1\s+60/);
    expect(result.stdout).toContain(`Prices: ${prices}.`);
    expect(result.stdout).toContain('upper bound');
    expect(requests).toBe(0);
  });

  test('a bad price file or input stops the dry run with exit 2 and the reason', async () => {
    const bad = file('cli-bad-prices.yaml', 'firmographics: lots\n');
    const badPrices = await enrichflow([
      'enrich',
      '--input',
      companiesCsv,
      '--datasets',
      'firmographics',
      '--output',
      path.join(dir, 'x/'),
      '--dry-run',
      '--prices',
      bad,
    ]);
    expect(badPrices.code).toBe(2);
    expect(badPrices.stderr).toContain('firmographics: expected a number of credits ≥ 0, got "lots"');

    const badInput = await enrichflow([
      'enrich',
      '--input',
      companiesCsv,
      '--datasets',
      'firmographics',
      '--output',
      path.join(dir, 'x/'),
      '--map',
      'domain=Domain',
      '--dry-run',
    ]);
    expect(badInput.code).toBe(2);
    expect(badInput.stderr).toContain('column "Domain" given for domain is not in the file');
    expect(requests).toBe(0);
  });
});
