// A people list end to end, on the real Temporal dev server, S3 server and sandbox over HTTP: people the
// sandbox knows (taken from its own prospects, by email, phone, profile address or name and company),
// people it does not know, and unusable rows. The tables must equal what the service serves for the
// matched ids, and no email, phone or name of the input may appear in the run's workflow histories.
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { validateJobSpec } from '../../jobs/job-spec.js';
import { startRun } from '../../cli/start-run.js';
import type { RunSummary } from '../../pipeline/run-types.js';
import { PEOPLE_DATASETS, prospectDatasetOf } from '../../pipeline/run-types.js';
import { stageWorkflowId } from '../../workflows/enrich-run.js';
import {
  readTable,
  s3Location,
  setFaults,
  startPipelineStack,
  uploadFile,
  type PipelineStack,
} from '../support/pipeline-harness.js';

let stack: PipelineStack;

beforeAll(async () => {
  stack = await startPipelineStack();
});

afterAll(async () => stack?.stop());

const csvField = (value: string) => (/[",\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);

const TABLES = [
  'contacts_information',
  'failures',
  'firmographics',
  'profiles',
  'prospect_matches',
  'prospect_network_posts',
  'rejects',
];

interface Person {
  prospect_id: string;
  full_name: string;
  company_name: string;
  network: string;
  email: string | null;
  phone: string | null;
  /** The employer the profile names. */
  business_id: string | null;
}

/** People the sandbox serves, with the contact information it has for them. */
async function knownPeople(count: number): Promise<Person[]> {
  const { service } = stack;
  const { body } = await service.fetchProspects({ mode: 'full', size: count, page_size: count });
  const people = body.data.map((p) => ({
    prospect_id: p.prospect_id,
    full_name: p.full_name!,
    company_name: p.company_name!,
    network: p.network!,
    business_id: p.business_id ?? null,
  }));
  const contacts = new Map<
    string,
    { professions_email?: string | null; phone_numbers?: { phone_number?: string }[] | null }
  >();
  for (let i = 0; i < people.length; i += 50) {
    const { body: found } = await service.bulkEnrichProspects('contacts_information', {
      prospect_ids: people.slice(i, i + 50).map((p) => p.prospect_id),
    });
    for (const item of found.data) contacts.set(item.prospect_id, item.data);
  }
  return people.map((p) => {
    const c = contacts.get(p.prospect_id);
    return { ...p, email: c?.professions_email ?? null, phone: c?.phone_numbers?.[0]?.phone_number ?? null };
  });
}

/** Writes the lines as `<job>.csv`, uploads it, runs the job into the people output, and waits for it. */
async function runPeople(job: string, lines: string[], datasets: string[]): Promise<RunSummary> {
  const local = path.join(mkdtempSync(path.join(tmpdir(), 'enrichflow-people-e2e-')), `${job}.csv`);
  writeFileSync(local, lines.join('\n') + '\n');
  const input = `${s3Location('inputs')}${job}.csv`;
  await uploadFile(stack.config, input, local);
  const { runId } = await startRun(
    stack.client,
    stack.config,
    validateJobSpec(
      { job_name: job, input: { location: input }, datasets, output: s3Location('people') },
      'test',
    ),
  );
  return (await stack.client.workflow.getHandle(runId).result()) as RunSummary;
}

describe('enrich: a people list, matched and enriched in bulk', () => {
  let summary: RunSummary;
  let people: Person[];
  /** Input row number → the prospect id the row names (null: unknown). */
  const expected = new Map<number, string | null>();
  /** Personal values the input holds, as written. */
  const personal: string[] = [];
  /** Row number → the reason its reject must give. */
  const rejects = new Map<number, RegExp>();
  /** Row number → the employer business id its own business_id column gives. */
  const givenEmployer = new Map<number, string>();

  beforeAll(async () => {
    people = await knownPeople(60);
    const withEmail = people.filter((p) => p.email);
    const withPhone = people.filter((p) => p.phone && !p.email);
    expect(withEmail.length).toBeGreaterThan(10);
    expect(withPhone.length + people.filter((p) => p.phone).length).toBeGreaterThan(2);
    const rows: string[][] = [];
    const add = (row: string[], id: string | null) => {
      rows.push(row);
      expected.set(rows.length, id);
    };
    // Header: Full Name, Company, Work Email, Phone, LinkedIn URL, crm_id, Business Id (the employer).
    people.forEach((p, i) => {
      const crm = `c${i}`;
      if (i % 4 === 0 && p.email) {
        // An email as people type it: spaces and capitals; and the same person again (a duplicate).
        add(['', '', `  ${p.email.toUpperCase()} `, '', '', crm], p.prospect_id);
        add(['', '', p.email, '', '', `${crm}-dup`], p.prospect_id);
        // With the name and company too: another key, the same person.
        add([p.full_name, p.company_name, p.email, '', '', `${crm}-named`], p.prospect_id);
        personal.push(p.email, p.email.toUpperCase());
      } else if (i % 4 === 1 && p.phone) {
        const digits = p.phone.replace(/\D/g, '');
        const spaced = `+${digits.slice(0, 1)} (${digits.slice(1, 4)}) ${digits.slice(4)}`;
        add(['', '', '', spaced, '', crm], p.prospect_id);
        personal.push(p.phone, spaced);
      } else if (i % 4 === 2) {
        add(['', '', '', '', `https://www.${p.network}/`, crm], p.prospect_id);
      } else {
        // Every other one with an employer of its own, unlike the profile's: the row's wins.
        const other = people.find((q) => q.business_id && q.business_id !== p.business_id)!.business_id!;
        add(
          [p.full_name, p.company_name, '', '', '', crm, i % 8 === 3 ? other.toUpperCase() : ''],
          p.prospect_id,
        );
        if (i % 8 === 3) givenEmployer.set(rows.length, other);
      }
      personal.push(p.full_name);
    });
    // Unknown people: valid keys the sandbox has no one for.
    add(['', '', 'nobody.known@unknown-people.example', '', '', 'u1'], null);
    add(['Zebediah Quillfeather', 'Nonexistent Holdings', '', '', '', 'u2'], null);
    personal.push('nobody.known@unknown-people.example', 'Zebediah Quillfeather');
    // Unusable rows.
    add(['Orphaned Name', '', '', '', '', 'r1'], null);
    rejects.set(rows.length, /full_name is given without company_name/);
    add(['', '', 'broken-address', '', '', 'r2'], null);
    rejects.set(rows.length, /email is not an email address/);
    add(['', '', '', '+1 555', '', 'r3'], null);
    rejects.set(rows.length, /phone_number has 4 digits/);
    add(['', '', '', '', '', 'r4'], null);
    rejects.set(rows.length, /no usable field/);
    add([people[0]!.full_name, people[0]!.company_name, '', '', '', 'r5', 'acme-123'], null);
    rejects.set(rows.length, /business_id \(the employer\) "acme-123" is not a 32-character hexadecimal id/);
    personal.push('Orphaned Name');
    for (const n of rejects.keys()) expected.delete(n);

    summary = await runPeople(
      'people',
      [
        'Full Name,Company,Work Email,Phone,LinkedIn URL,crm_id,Business Id',
        ...rows.map((r) => [...r, '', ''].slice(0, 7).map(csvField).join(',')),
      ],
      [...PEOPLE_DATASETS, 'firmographics'],
    );
  });

  test('the run completes; prospect_matches has every usable row with its prospect id and status', async () => {
    expect(summary.status).toBe('completed');
    expect(summary.plan).toMatchObject({ entity: 'prospects', idsProvided: false });
    expect(summary.stages.map((s) => s.stage)).toEqual([
      'prospect_match',
      'profiles',
      'contacts_information',
      'prospect_network_posts',
      'firmographics',
    ]);
    const matches = await readTable<{
      row_number: string;
      input_crm_id: string;
      prospect_id: string | null;
      match_status: string;
    }>(stack.config, summary.outputPrefix, 'prospect_matches', 'SELECT * FROM t ORDER BY row_number');
    expect(matches.types.prospect_id).toBe('VARCHAR');
    expect(new Map(matches.rows.map((r) => [Number(r.row_number), r.prospect_id]))).toEqual(expected);
    for (const row of matches.rows)
      expect(row.match_status).toBe(row.prospect_id === null ? 'unmatched' : 'matched');
    // Duplicates are matched once: the match stage sent fewer keys than there are usable rows.
    expect(summary.plan.uniqueKeys).toBeLessThan(matches.rows.length);
    const rejected = await readTable<{ row_number: string; reason: string; record: string }>(
      stack.config,
      summary.outputPrefix,
      'rejects',
    );
    expect(rejected.rows.map((r) => Number(r.row_number)).sort((a, b) => a - b)).toEqual([...rejects.keys()]);
    for (const row of rejected.rows) expect(row.reason).toMatch(rejects.get(Number(row.row_number))!);
  });

  test("each prospect dataset table equals the service's records for the matched ids, keyed by prospect_id", async () => {
    const ids = [...new Set([...expected.values()].filter((id): id is string => id !== null))];
    expect(ids.length).toBe(summary.enrichPlan.uniqueIds);
    for (const dataset of PEOPLE_DATASETS) {
      const truth = new Map<string, Record<string, unknown>>();
      for (let i = 0; i < ids.length; i += 50) {
        const { body } = await stack.service.bulkEnrichProspects(prospectDatasetOf(dataset), {
          prospect_ids: ids.slice(i, i + 50),
        });
        for (const item of body.data) truth.set(item.prospect_id, item.data);
      }
      const table = await readTable<Record<string, unknown>>(stack.config, summary.outputPrefix, dataset);
      expect(table.types.prospect_id, dataset).toBe('VARCHAR');
      const got = table.rows.map((r) => r.prospect_id as string);
      expect(new Set(got).size, `${dataset}: duplicate ids`).toBe(got.length);
      expect(new Set(got), dataset).toEqual(new Set(truth.keys()));
      const fields =
        dataset === 'profiles'
          ? ['full_name', 'company_name', 'network', 'business_id']
          : dataset === 'contacts_information'
            ? ['professions_email', 'mobile_phone']
            : ['post_url', 'display_name'];
      for (const row of table.rows) {
        const record = truth.get(row.prospect_id as string)!;
        for (const field of fields)
          expect(row[field] ?? null, `${dataset}.${field}`).toEqual(record[field] ?? null);
      }
    }
    expect(summary.tables.map((t) => t.table).sort()).toEqual([...TABLES].sort());
  });

  test("employers: each matched row links to its own business_id, else its profile's; their firmographics are the service's", async () => {
    const profileEmployer = new Map(people.map((p) => [p.prospect_id, p.business_id]));
    const matches = await readTable<{
      row_number: string;
      prospect_id: string | null;
      business_id: string | null;
    }>(stack.config, summary.outputPrefix, 'prospect_matches');
    expect(matches.types.business_id).toBe('VARCHAR');
    expect(givenEmployer.size).toBeGreaterThan(0);
    for (const row of matches.rows) {
      const n = Number(row.row_number);
      const want =
        row.prospect_id === null
          ? null
          : (givenEmployer.get(n) ?? profileEmployer.get(row.prospect_id) ?? null);
      expect(row.business_id, `row ${n}`).toBe(want);
    }
    const employers = [...new Set(matches.rows.map((r) => r.business_id).filter((id): id is string => !!id))];
    expect(summary.enrichPlan.employers).toMatchObject({
      uniqueIds: employers.length,
      rowsFromInput: givenEmployer.size,
    });
    const truth = new Map<string, Record<string, unknown>>();
    for (let i = 0; i < employers.length; i += 50) {
      const { body } = await stack.service.bulkEnrich('firmographics', {
        business_ids: employers.slice(i, i + 50),
      });
      for (const item of body.data) truth.set(item.business_id, item.data);
    }
    const table = await readTable<Record<string, unknown>>(
      stack.config,
      summary.outputPrefix,
      'firmographics',
    );
    expect(table.types.business_id).toBe('VARCHAR');
    expect(table.rows.length).toBe(new Set(table.rows.map((r) => r.business_id)).size);
    expect(new Set(table.rows.map((r) => r.business_id))).toEqual(new Set(truth.keys()));
    for (const row of table.rows)
      expect(row.name ?? null).toEqual(truth.get(row.business_id as string)!.name ?? null);
  });

  test('manifest, report and _SUCCESS are written as for company runs', async () => {
    const { store, prefix } = (await import('../../workers/worker.js')).storeResolverFor(stack.config)(
      summary.outputPrefix,
    );
    expect(await store.exists(`${prefix}_SUCCESS`)).toBe(true);
    expect(await store.exists(`${prefix}report.md`)).toBe(true);
    const manifest = JSON.parse((await store.getBytes(`${prefix}manifest.json`)).toString('utf8')) as {
      tables: { name: string; rows: number }[];
    };
    expect(manifest.tables.map((t) => t.name).sort()).toEqual([...TABLES].sort());
    const report = (await store.getBytes(`${prefix}report.md`)).toString('utf8');
    expect(report).toContain('prospect_match');
    expect(report).toContain('unique prospect ids for which the dataset has a record');
  });

  test("no email, phone or name of the input appears in the run's workflow histories", async () => {
    const workflowIds = [
      summary.runId,
      ...summary.stages.map((s) => stageWorkflowId(summary.runId, s.stage)),
    ];
    const text: string[] = [];
    for (const workflowId of workflowIds) {
      const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
      // Payloads are bytes (JSON text): decode them so the search sees what was stored.
      text.push(
        JSON.stringify(history, (_key, value: unknown) =>
          value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : value,
        ),
      );
    }
    const all = text.join('\n').toLowerCase();
    // The search works: the run id and a stage name are in there.
    expect(all).toContain(summary.runId.toLowerCase());
    expect(all).toContain('prospect_match');
    const leaked = personal.filter((value) => all.includes(value.toLowerCase()));
    expect(leaked).toEqual([]);
  });
});

describe('enrich: a people match batch the service refuses', () => {
  let summary: RunSummary;
  let people: Person[];

  afterAll(async () => setFaults(stack.sandbox, []));

  beforeAll(async () => {
    people = (await knownPeople(40)).filter((p) => p.email).slice(0, 8);
    expect(people.length).toBe(8);
    // The refused person's employer is theirs alone: only a retry can bring it to the run.
    expect(people.filter((p) => p.business_id === people[2]!.business_id)).toHaveLength(1);
    // The service refuses any request holding the third person's email, with a 422 that quotes it.
    await setFaults(stack.sandbox, [
      { match: 'matchProspects', kind: 'reject', bodyContains: people[2]!.email! },
    ]);
    summary = await runPeople(
      'people-refused',
      ['email', ...people.map((p) => p.email!)],
      ['profiles', 'firmographics'],
    );
  });

  test('bisection isolates the refused key; its failure names the key id, not the email', async () => {
    expect(summary.status).toBe('completed_with_failures');
    const matches = await readTable<{ row_number: string; prospect_id: string | null; match_status: string }>(
      stack.config,
      summary.outputPrefix,
      'prospect_matches',
      'SELECT * FROM t ORDER BY row_number',
    );
    expect(matches.rows.map((r) => r.match_status)).toEqual([
      'matched',
      'matched',
      'match_failed',
      'matched',
      'matched',
      'matched',
      'matched',
      'matched',
    ]);
    const failures = await readTable<{ stage: string; error_type: string; message: string; items: string[] }>(
      stack.config,
      summary.outputPrefix,
      'failures',
    );
    expect(failures.rows).toHaveLength(1);
    expect(failures.rows[0]).toMatchObject({
      stage: 'prospect_match',
      error_type: 'ValidationError',
      items: ['key_id 2'],
    });
    expect(failures.rows[0]!.message).not.toContain(people[2]!.email!);
    // The employers of the people matched: the refused one's is not among them yet.
    expect(summary.enrichPlan.employers?.uniqueIds).toBe(
      new Set(people.filter((_, i) => i !== 2).map((p) => p.business_id)).size,
    );
    const histories: string[] = [];
    for (const workflowId of [summary.runId, stageWorkflowId(summary.runId, 'prospect_match')]) {
      const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
      histories.push(
        JSON.stringify(history, (_key, value: unknown) =>
          value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : value,
        ),
      );
    }
    const all = histories.join('\n').toLowerCase();
    expect(all).toContain('validationerror');
    expect(people.filter((p) => all.includes(p.email!.toLowerCase())).map((p) => p.email)).toEqual([]);
  });

  test('runs retry matches the refused key once the service takes it, enriches its person, and completes', async () => {
    await setFaults(stack.sandbox, []);
    const done = (await stack.client.workflow.execute('retryRunWorkflow', {
      workflowId: `${summary.runId}.retry-1`,
      taskQueue: stack.config.temporal.taskQueue,
      args: [{ previous: summary, apiTaskQueue: stack.config.temporal.apiTaskQueue }],
    })) as RunSummary;
    expect(done.status).toBe('completed');
    const matches = await readTable<{ prospect_id: string | null; match_status: string }>(
      stack.config,
      done.outputPrefix,
      'prospect_matches',
      'SELECT * FROM t ORDER BY row_number',
    );
    expect(matches.rows.map((r) => r.prospect_id)).toEqual(people.map((p) => p.prospect_id));
    const profiles = await readTable<{ prospect_id: string }>(stack.config, done.outputPrefix, 'profiles');
    expect(new Set(profiles.rows.map((r) => r.prospect_id))).toEqual(
      new Set(people.map((p) => p.prospect_id)),
    );
    // The person matched now brought their employer: planned, enriched and linked by the retry.
    const linked = await readTable<{ business_id: string | null }>(
      stack.config,
      done.outputPrefix,
      'prospect_matches',
      'SELECT business_id FROM t ORDER BY row_number',
    );
    expect(linked.rows.map((r) => r.business_id)).toEqual(people.map((p) => p.business_id));
    const employers = [...new Set(people.map((p) => p.business_id!))];
    const { body } = await stack.service.bulkEnrich('firmographics', { business_ids: employers });
    const firmographics = await readTable<{ business_id: string }>(
      stack.config,
      done.outputPrefix,
      'firmographics',
    );
    expect(new Set(firmographics.rows.map((r) => r.business_id))).toEqual(
      new Set(body.data.map((d) => d.business_id)),
    );
    expect(body.data.map((d) => d.business_id)).toContain(people[2]!.business_id);
    expect(done.stages.find((s) => s.stage === 'firmographics')?.failedBatches).toBe(0);
  });
});
