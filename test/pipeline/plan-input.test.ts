// Input planning against real files: formats, quirks of real CSVs, column aliases, rejects with
// their row numbers and reasons, and files that cannot be used at all.
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { planFile, scratchFiles } from '../support/plan-input.js';
import { InputFileError } from '../../storage/plan-input.js';
import type { InputSpec } from '../../pipeline/run-types.js';

const { dir, file } = scratchFiles('enrichflow-plan-');
const plan = (location: string, spec: Partial<InputSpec> = {}) => planFile(location, spec);

describe('planInput', () => {
  test('CSV with BOM, CRLF, quoted commas and newlines; aliases; duplicates collapse to one key', async () => {
    const csv = file(
      'companies.csv',
      '\uFEFFCompany,Website,crm_id\r\n"Acme, Inc.",https://www.acme.com/,1\r\n"Acme, Inc.",acme.com,2\r\n"Multi\r\nLine",multi.io,3\r\n"ACME,   INC.",https://acme.com,4\r\n',
    );
    const { summary, keys, rows, rejects } = await plan(csv);
    expect(summary).toMatchObject({ inputRows: 4, rejectedRows: 0, uniqueKeys: 2, idsProvided: false });
    expect(summary.mapping.fields).toEqual({ name: 'Company', url: 'Website' });
    expect(keys).toEqual([
      { key_id: '0', name: 'Acme, Inc.', domain: null, url: 'acme.com', network_url: null },
      { key_id: '1', name: 'Multi Line', domain: null, url: 'multi.io', network_url: null },
    ]);
    expect(rows.map((r) => [r.row_number, r.key_id, r.input_crm_id])).toEqual([
      ['1', '0', '1'],
      ['2', '0', '2'],
      ['3', '1', '3'],
      ['4', '0', '4'],
    ]);
    expect(rejects).toEqual([]);
  });

  test('keys: Unicode spaces trimmed, names compared case-insensitively (İ, Σ too), URLs without scheme, www, query or slashes', async () => {
    const csv = file(
      'unicode.csv',
      'name,website\n' +
        '\u00a0İSTANBUL  ΟΔΟΣ\u3000,HTTPS://WWW.Example.com/Path/?q=1#top\n' +
        'istanbul οδοσ,example.com/path//\n' +
        'Istanbul Οδος,http://user@example.com/path#x\n',
    );
    const { summary, keys, rows } = await plan(csv);
    expect(summary).toMatchObject({ inputRows: 3, rejectedRows: 0, uniqueKeys: 2 });
    expect(keys).toEqual([
      { key_id: '0', name: 'İSTANBUL ΟΔΟΣ', domain: null, url: 'example.com/path', network_url: null },
      { key_id: '1', name: 'Istanbul Οδος', domain: null, url: 'user@example.com/path', network_url: null },
    ]);
    expect(rows.map((r) => [r.row_number, r.key_id, r.input_name])).toEqual([
      ['1', '0', '\u00a0İSTANBUL  ΟΔΟΣ\u3000'],
      ['2', '0', 'istanbul οδοσ'],
      ['3', '1', 'Istanbul Οδος'],
    ]);
  });

  test('unusable rows are rejected with their row number and a reason; malformed records too', async () => {
    const csv = file(
      'messy.csv',
      'name;domain;linkedin_url\nGood;good.com;\n;;\nBad;not a domain;\nx;y;z;too;many\nNet;;https://network.example/company/net\nWrongNet;;nowhere\n',
    );
    const { summary, rejects, rows } = await plan(csv, { delimiter: ';' });
    expect(summary.mapping.fields).toEqual({ name: 'name', domain: 'domain', network_url: 'linkedin_url' });
    expect(rejects).toEqual([
      { row_number: '2', reason: 'no usable field: name, domain, url and network_url are all empty' },
      { row_number: '3', reason: 'domain "not a domain" is not a valid domain name' },
      { row_number: '4', reason: 'malformed record at line 5: expected 3 fields, found 5' },
      { row_number: '6', reason: 'network_url "nowhere" is not a profile address' },
    ]);
    expect(rows.map((r) => r.row_number)).toEqual(['1', '5']);
    expect(summary).toMatchObject({ inputRows: 6, rejectedRows: 4 });
  });

  test('JSON Lines: malformed lines are rejected by line number, others planned', async () => {
    const jsonl = file(
      'in.jsonl',
      '{"company":"A","domain":"a.com"}\nnot json\n{"company":"B","website":"http://b.org/x?y=1"}\n[1,2]\n',
    );
    const { keys, rejects } = await plan(jsonl);
    expect(keys.map((k) => [k.name, k.domain, k.url])).toEqual([
      ['A', 'a.com', null],
      ['B', null, 'b.org/x'],
    ]);
    expect(rejects.map((r) => r.row_number)).toEqual(['2', '4']);
  });

  test('a file that already carries business_id skips matching; bad ids are rejected', async () => {
    const csv = file(
      'ids.csv',
      `business_id,note\n${'a'.repeat(32)},x\n${'a'.repeat(32)},dup\nnot-an-id,y\n${'b'.repeat(32)},z\n`,
    );
    const { summary, keys, rejects } = await plan(csv);
    expect(summary).toMatchObject({ idsProvided: true, inputRows: 4, rejectedRows: 1, uniqueKeys: 2 });
    expect(keys).toEqual([{ business_id: 'a'.repeat(32) }, { business_id: 'b'.repeat(32) }]);
    expect(rejects[0]?.reason).toContain('"not-an-id" is not a 32-character hexadecimal id');
  });

  test('an explicit column map wins over aliases and must name real columns', async () => {
    const csv = file('mapped.csv', 'Account Name,Site,Other Site\nA,a.com,b.com\n');
    const { keys } = await plan(csv, { columns: { url: 'Other Site' } });
    expect(keys[0]).toMatchObject({ name: 'A', url: 'b.com' });
    await expect(plan(csv, { columns: { domain: 'Nope' } })).rejects.toThrow(
      /column "Nope" given for domain is not in the file/,
    );
  });

  test('files that cannot be used fail with a message naming the file', async () => {
    const noColumns = file('nocols.csv', 'foo,bar\n1,2\n');
    await expect(plan(noColumns)).rejects.toThrow(InputFileError);
    await expect(plan(noColumns)).rejects.toThrow(/nocols\.csv: no usable column; .* found: foo, bar/);
    const empty = file('empty.csv', 'name,domain\n');
    await expect(plan(empty)).rejects.toThrow(/empty\.csv: the file has no data rows/);
    const binary = file('bad.parquet', Buffer.from('this is not parquet'));
    await expect(plan(binary)).rejects.toThrow(/bad\.parquet: is not a Parquet file/);
    await expect(plan(path.join(dir, 'input.xlsx'))).rejects.toThrow(/cannot tell the format/);
  });
});
