// Planning people lists: the entity recognised from the columns or given, people columns mapped by
// alias or --map, match keys normalised (emails, phones, profile addresses), duplicates collapsed, and
// unusable rows rejected with a reason that never repeats the row's personal data.
import { describe, expect, test } from 'vitest';
import { planFile, scratchFiles } from '../support/plan-input.js';
import { InputFileError } from '../../storage/plan-input.js';
import { mapColumns } from '../../storage/match-keys.js';
import { normalisePhone, prospectKeyOf } from '../../storage/people-keys.js';
import { runEntity, type InputSpec } from '../../pipeline/run-types.js';
import { toRunInput, validateJobSpec } from '../../jobs/job-spec.js';
import { formatDryRun, planDryRun } from '../../cli/dry-run.js';
import { defaultPriceTable } from '../../jobs/prices.js';
import { loadConfig } from '../../config/index.js';

const { dir, file } = scratchFiles('enrichflow-people-');
const plan = (location: string, spec: Partial<InputSpec> = {}) => planFile(location, spec, true);

describe('the entity of an input', () => {
  test('people are recognised by an email, a full name or prospect ids; a phone only without company columns', () => {
    const entity = (columns: string[]) => mapColumns('x.csv', columns).entity ?? 'businesses';
    expect(entity(['Work Email', 'Company'])).toBe('prospects');
    expect(entity(['full_name', 'company_name'])).toBe('prospects');
    expect(entity(['prospect_id'])).toBe('prospects');
    expect(entity(['Mobile'])).toBe('prospects');
    expect(entity(['Company', 'Website', 'Phone'])).toBe('businesses');
    expect(entity(['name', 'domain'])).toBe('businesses');
    // A profile address alone could be a company's page: companies unless told.
    expect(entity(['linkedin_url'])).toBe('businesses');
    expect(mapColumns('x.csv', ['linkedin_url'], {}, 'prospects')).toMatchObject({
      entity: 'prospects',
      fields: { network: 'linkedin_url' },
    });
    // --map with a people field says people.
    expect(mapColumns('x.csv', ['Contact', 'Org'], { email: 'Contact' }).entity).toBe('prospects');
  });

  test('a run plans as its datasets say unless the entity is given', () => {
    expect(runEntity(undefined, ['profiles', 'contacts_information'])).toBe('prospects');
    expect(runEntity(undefined, ['firmographics'])).toBe('businesses');
    expect(runEntity('prospects', ['profiles'])).toBe('prospects');
    expect(runEntity(undefined, [])).toBeUndefined();
  });

  test('people columns by alias, `full_name` before `name`, one column per field; --map overrides', () => {
    expect(
      mapColumns(
        'x.csv',
        ['Name', 'Full Name', 'Employer', 'E-mail', 'Phone', 'LinkedIn URL'],
        {},
        'prospects',
      ).fields,
    ).toEqual({
      full_name: 'Full Name',
      company_name: 'Employer',
      email: 'E-mail',
      phone_number: 'Phone',
      network: 'LinkedIn URL',
    });
    expect(
      mapColumns('x.csv', ['Who', 'Where', 'Mail'], { full_name: 'Who', company_name: 'Where' }, 'prospects')
        .fields,
    ).toEqual({ full_name: 'Who', company_name: 'Where', email: 'Mail' });
  });

  test('files without a usable people column, or --map of a field the entity lacks, are refused', () => {
    expect(() => mapColumns('x.csv', ['Company', 'Website'], {}, 'prospects')).toThrow(
      /no usable column for a list of people/,
    );
    expect(() => mapColumns('x.csv', ['Mail'], { email: 'Mail' }, 'businesses')).toThrow(
      /--map email= is a field of people lists/,
    );
    expect(() => mapColumns('x.csv', ['Mail'], { domain: 'Mail' }, 'prospects')).toThrow(
      /--map domain= is not a field of people lists/,
    );
    expect(() => mapColumns('x.csv', ['Mail'], { email: 'Nope' }, 'prospects')).toThrow(InputFileError);
  });
});

describe('people match keys', () => {
  test('phones: digits with the country code, 00 read as +, separators and extensions dropped', () => {
    expect(normalisePhone('+1 (555) 010-1234')).toBe('+15550101234');
    expect(normalisePhone('0044 20 7946 0018')).toBe('+442079460018');
    expect(normalisePhone('1.555.010.1234 ext. 12')).toBe('+15550101234');
    expect(normalisePhone('555-0101')).toEqual({
      reject: 'phone_number has 7 digits; expected 8 to 15 with the country code',
    });
    expect(normalisePhone('+1 555 CALL NOW')).toEqual({
      reject: 'phone_number has characters other than digits and separators',
    });
  });

  test('emails lower-cased, profile addresses without scheme, www, query or slashes, names collapsed', () => {
    expect(
      prospectKeyOf(
        'Ada   Lovelace',
        'Analytical  Engines',
        'Ada@Example.COM',
        null,
        'HTTPS://www.Network.example/in/Ada/?x=1',
      ),
    ).toEqual({
      full_name: 'Ada Lovelace',
      company_name: 'Analytical Engines',
      email: 'ada@example.com',
      phone_number: null,
      network: 'network.example/in/ada',
    });
    // A name without its company is no key (the service refuses it); beside another key it is dropped.
    expect(prospectKeyOf('Ada Lovelace', null, 'ada@example.com', null, null)).toMatchObject({
      full_name: null,
      email: 'ada@example.com',
    });
  });

  test('reasons name the field, never the value', () => {
    const reasons = [
      prospectKeyOf(null, null, 'ada.lovelace-at-example', null, null),
      prospectKeyOf(null, null, null, '+1 555', null),
      prospectKeyOf(null, null, null, null, 'ada lovelace'),
      prospectKeyOf('Ada Lovelace', null, null, null, null),
      prospectKeyOf(null, 'Analytical Engines', null, null, null),
    ].map((r) => ('reject' in r ? r.reject : 'not rejected'));
    expect(reasons).toEqual([
      'email is not an email address (name@domain)',
      'phone_number has 4 digits; expected 8 to 15 with the country code',
      'network is not a profile address (host/path)',
      'full_name is given without company_name; the service matches a name only with its company',
      'no usable field: email, phone_number, network and full_name are all empty',
    ]);
    for (const reason of reasons) expect(reason).not.toMatch(/ada|lovelace|555|analytical/i);
  });
});

describe('planInput of a people list', () => {
  test('keys normalised and deduplicated, rows fanned out to their key, unusable rows rejected', async () => {
    const csv = file(
      'people.csv',
      'Full Name,Company,Email,Phone,crm_id\n' +
        'Ada Lovelace,Analytical Engines, Ada@Example.com ,,1\n' +
        'ADA LOVELACE,analytical engines,ada@example.com,,2\n' +
        'Grace Hopper,Navy,,+1 (555) 010-1234,3\n' +
        'Grace Hopper,Navy,,001 555 010 1234,4\n' +
        'Alan Turing,,,,5\n' +
        ',,not-an-email,,6\n' +
        'Joan Clarke,Bletchley,,,7\n' +
        ',,,,8\n',
    );
    const { summary, keys, rows, rejects } = await plan(csv);
    expect(summary).toMatchObject({
      inputRows: 8,
      rejectedRows: 3,
      uniqueKeys: 3,
      idsProvided: false,
      entity: 'prospects',
    });
    expect(keys).toEqual([
      {
        key_id: '0',
        full_name: 'Ada Lovelace',
        company_name: 'Analytical Engines',
        email: 'ada@example.com',
        phone_number: null,
        network: null,
      },
      {
        key_id: '1',
        full_name: 'Grace Hopper',
        company_name: 'Navy',
        email: null,
        phone_number: '+15550101234',
        network: null,
      },
      {
        key_id: '2',
        full_name: 'Joan Clarke',
        company_name: 'Bletchley',
        email: null,
        phone_number: null,
        network: null,
      },
    ]);
    expect(rows.map((r) => [r.row_number, r.key_id, r.input_crm_id])).toEqual([
      ['1', '0', '1'],
      ['2', '0', '2'],
      ['3', '1', '3'],
      ['4', '1', '4'],
      ['7', '2', '7'],
    ]);
    expect(rejects.map((r) => [r.row_number, r.reason])).toEqual([
      ['5', 'full_name is given without company_name; the service matches a name only with its company'],
      ['6', 'email is not an email address (name@domain)'],
      ['8', 'no usable field: email, phone_number, network and full_name are all empty'],
    ]);
    // The record keeps the row as the file had it.
    expect(rejects[0]!.record).toBe('Alan Turing,,,,5');
  });

  test('a prospect_id column skips matching; ids are checked and deduplicated', async () => {
    const id = 'ab'.repeat(20);
    const csv = file('ids.csv', `prospect_id,note\n${id},a\n${id.toUpperCase()},b\nnot-an-id,c\n,d\n`);
    const { summary, keys, rows, rejects } = await plan(csv);
    expect(summary).toMatchObject({ inputRows: 4, rejectedRows: 2, uniqueKeys: 1, idsProvided: true });
    expect(keys).toEqual([{ prospect_id: id }]);
    expect(rows.map((r) => [r.row_number, r.prospect_id])).toEqual([
      ['1', id],
      ['2', id],
    ]);
    expect(rejects.map((r) => r.reason)).toEqual([
      'prospect_id "not-an-id" is not a 40-character hexadecimal id',
      'prospect_id is empty',
    ]);
  });

  test('--entity prospects with --map: a name column and a profile column', async () => {
    const csv = file('mapped.jsonl', '{"who":"Ada","org":"AE","page":"network.example/in/ada"}\n');
    const { summary, keys } = await plan(csv, {
      entity: 'prospects',
      columns: { full_name: 'who', company_name: 'org', network: 'page' },
    });
    expect(summary.mapping).toMatchObject({ entity: 'prospects' });
    expect(keys).toEqual([
      {
        key_id: '0',
        full_name: 'Ada',
        company_name: 'AE',
        email: null,
        phone_number: null,
        network: 'network.example/in/ada',
      },
    ]);
  });
});

describe('job specs and dry runs of people lists', () => {
  const spec = (input: Record<string, unknown>, datasets: string[]) =>
    validateJobSpec({ input: { location: 'people.csv', ...input }, datasets, output: dir }, 'test');

  test('people datasets, input.entity and people columns are accepted and reach the run input', () => {
    const run = toRunInput(
      spec({ entity: 'prospects', columns: { email: 'Mail', phone_number: 'Mobile' } }, [
        'profiles',
        'contacts_information',
      ]),
      'k',
    );
    expect(run.input).toEqual({
      location: 'people.csv',
      entity: 'prospects',
      columns: { email: 'Mail', phone_number: 'Mobile' },
    });
    expect(run.datasets).toEqual(['profiles', 'contacts_information']);
  });

  test("a people run may name its employers' datasets; network_posts must say whose posts", () => {
    const run = toRunInput(
      spec({}, ['profiles', 'firmographics', 'prospect_network_posts', 'business_network_posts']),
      'k',
    );
    // The employers' posts are the business dataset: its table and ledger are network_posts.
    expect(run.datasets).toEqual(['profiles', 'firmographics', 'prospect_network_posts', 'network_posts']);
    expect(toRunInput(spec({ entity: 'prospects' }, ['firmographics']), 'k').datasets).toEqual([
      'firmographics',
    ]);
    expect(() => spec({}, ['profiles', 'network_posts'])).toThrow(
      /datasets\[1\]: "network_posts" is ambiguous in a list of people: say prospect_network_posts for the people's own posts, or business_network_posts for their employers' posts/,
    );
    expect(() => spec({ entity: 'prospects' }, ['network_posts'])).toThrow(/"network_posts" is ambiguous/);
    expect(() => spec({}, ['business_network_posts'])).toThrow(
      /"business_network_posts" names the employers' posts of a list of people; for a company list say network_posts/,
    );
    expect(toRunInput(spec({}, ['network_posts']), 'k').datasets).toEqual(['network_posts']);
    expect(() => spec({ entity: 'businesses' }, ['profiles'])).toThrow(
      /profiles enrich people, but input.entity is businesses/,
    );
    expect(() => spec({ entity: 'people' }, ['profiles'])).toThrow(/input.entity/);
  });

  test('a people business_id column is the employer: a malformed one rejects its row with the reason', async () => {
    const csv = file(
      'employers.csv',
      'Email,Business Id\n' +
        'a@example.com,0123456789ABCDEF0123456789abcdef\n' +
        'b@example.com,\n' +
        'c@example.com,acme-42\n',
    );
    const { summary, rows, rejects } = await plan(csv);
    expect(summary.entity).toBe('prospects');
    expect(summary.mapping.fields).toMatchObject({ email: 'Email', business_id: 'Business Id' });
    expect(rejects.map((r) => [r.row_number, r.reason])).toEqual([
      ['3', 'business_id (the employer) "acme-42" is not a 32-character hexadecimal id'],
    ]);
    expect(summary.uniqueKeys).toBe(2);
    expect(rows.map((r) => r.input_Business_Id ?? r['input_Business Id'])).toEqual([
      '0123456789ABCDEF0123456789abcdef',
      null,
    ]);
  });

  test('a dry run plans a people list by its datasets: prospect_match, then each prospect dataset', async () => {
    const csv = file(
      'dry-people.csv',
      'Email,Phone\n' +
        Array.from({ length: 60 }, (_, i) => `person${i}@example.com,`).join('\n') +
        '\nPERSON0@example.com,\n,+1 555\n',
    );
    const plan = await planDryRun(spec({ location: csv }, ['profiles', 'contacts_information']), {
      config: loadConfig({ env: {} }),
    });
    expect(plan).toMatchObject({ inputRows: 62, rejectedRows: 1, uniqueKeys: 60, idsProvided: false });
    expect(plan.stages.map((s) => [s.stage, s.items, s.calls])).toEqual([
      ['prospect_match', 60, 2],
      ['profiles', 60, 2],
      ['contacts_information', 60, 2],
    ]);
  });

  test('a dry run of a people list with employers: at most one per person, priced as company datasets; it needs profiles or a business_id column', async () => {
    const csv = file(
      'dry-employers.csv',
      'Email\n' + Array.from({ length: 70 }, (_, i) => `person${i}@example.com`).join('\n') + '\n',
    );
    const plan = await planDryRun(
      spec({ location: csv }, ['profiles', 'firmographics', 'business_network_posts']),
      {
        config: loadConfig({ env: {} }),
      },
    );
    expect(plan.stages.map((s) => [s.stage, s.items, s.calls, s.exact, s.creditsPerRecord])).toEqual([
      ['prospect_match', 70, 2, true, null],
      ['profiles', 70, 2, false, null],
      ['firmographics', 70, 2, false, 1],
      ['network_posts', 70, 2, false, 1],
    ]);
    expect(plan.notes.join('\n')).toContain(
      "firmographics, network_posts enrich the people's employers: at most one per person",
    );
    await expect(
      planDryRun(spec({ location: csv }, ['contacts_information', 'firmographics']), {
        config: loadConfig({ env: {} }),
      }),
    ).rejects.toThrow(
      /lists people; firmographics enrich their employers, whose business ids come from the profiles or from a business_id column: add profiles to the datasets, or map the employer column \(--map business_id=<column>\)/,
    );
  });

  test('a dry run of a people list prices prospect_match and the prospect datasets from a price file, and says they are unpriced without one', async () => {
    const csv = file(
      'dry-people-priced.csv',
      'Full Name,Company,Work Email\n' +
        Array.from({ length: 120 }, (_, i) => `Person ${i},Acme,person${i}@acme.com.example`).join('\n') +
        '\nNobody,,\n',
    );
    const people = spec({ location: csv }, ['profiles', 'contacts_information']);
    // The built-in prices: the reference gives none for the prospect operations, so none is invented.
    const plain = await planDryRun(people, { config: loadConfig({ env: {} }) });
    expect(plain).toMatchObject({ inputRows: 121, rejectedRows: 1, uniqueKeys: 120 });
    expect(plain.stages.map((s) => [s.stage, s.calls, s.creditsPerRecord, s.maxCredits])).toEqual([
      ['prospect_match', 3, null, null],
      ['profiles', 3, null, null],
      ['contacts_information', 3, null, null],
    ]);
    expect(plain.unpriced).toEqual(['prospect_match', 'profiles', 'contacts_information']);
    expect(plain.maxCredits).toBe(0);
    const text = formatDryRun(plain);
    expect(text).toMatch(/prospect_match\s+120\s+50\s+3\s+no price\s+unknown/);
    expect(text).toMatch(/profiles\s+≤ 120\s+50\s+≤ 3\s+no price\s+unknown/);
    expect(text).toMatch(/total\s+≤ 9\s+0 \+ unpriced/);
    expect(text).toContain(
      "No price is known for prospect_match, profiles, contacts_information: neither the spec nor the provider's documentation gives one",
    );

    // A price file names them: each is priced, the total includes them, no note.
    const prices = file('people-prices.yaml', 'prospect_match: 0.5\nprofiles: 2\ncontacts_information: 3\n');
    const priced = await planDryRun(people, { config: loadConfig({ env: {} }), pricesFile: prices });
    expect(priced.stages.map((s) => [s.stage, s.creditsPerRecord, s.maxCredits])).toEqual([
      ['prospect_match', 0.5, 60],
      ['profiles', 2, 240],
      ['contacts_information', 3, 360],
    ]);
    expect(priced.maxCredits).toBe(660);
    expect(priced.unpriced).toBeUndefined();
    expect(formatDryRun(priced)).not.toContain('No price is known');

    // A file's default prices the prospect datasets too; prospect_match only by its own key. Company
    // runs keep their built-in prices (1 per record, match free).
    const partial = await planDryRun(people, {
      config: loadConfig({ env: {} }),
      pricesFile: file('default-prices.yaml', 'default: 1\nmatch: 0\n'),
    });
    expect(partial.stages.map((s) => [s.stage, s.maxCredits])).toEqual([
      ['prospect_match', null],
      ['profiles', 120],
      ['contacts_information', 120],
    ]);
    expect(partial.unpriced).toEqual(['prospect_match']);
    // Prospect ids in the input: no match step, and the plan says prospect ids.
    const ids = file(
      'dry-prospect-ids.csv',
      `prospect_id\n${Array.from({ length: 60 }, (_, i) => i.toString(16).padStart(40, '0')).join('\n')}\n`,
    );
    const byId = await planDryRun(spec({ location: ids }, ['profiles']), { config: loadConfig({ env: {} }) });
    expect(byId).toMatchObject({ entity: 'prospects', idsProvided: true, unpriced: ['profiles'] });
    expect(formatDryRun(byId)).toContain('prospect ids 60 unique (provided in the input; no match step)');
    expect(defaultPriceTable()).toMatchObject({ match: 0, prospectMatch: null });
    expect(defaultPriceTable().datasets).toMatchObject({
      firmographics: 1,
      profiles: null,
      contacts_information: null,
    });
  });
});
