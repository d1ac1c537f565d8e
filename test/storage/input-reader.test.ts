// Reading user inputs: CSV dialects, JSON Lines and Parquet, local and from S3, with exact row numbers,
// rejects for malformed records, and a clear InputFileError for files that cannot be read at all.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InputFileError,
  openInputFile,
  readAllInput,
  S3ObjectStore,
  type FileLocation,
  type InputFileErrorCode,
  type OpenInputOptions,
} from '../../storage/index.js';
import { writeParquetFile } from '../../bench/parquet/table-writer.js';
import { uniquePrefix, useTestS3, type TestS3 } from './s3-server.js';

const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string | Buffer): string {
  const full = path.join(dir, name);
  writeFileSync(full, content);
  return full;
}

async function readAll(location: FileLocation | string, options: OpenInputOptions = {}) {
  const input = await openInputFile(typeof location === 'string' ? { path: location } : location, options);
  const { rows, rejects } = await readAllInput(input);
  return { input, rows, rejects };
}

async function expectFileError(
  location: FileLocation | string,
  code: InputFileErrorCode,
  message: RegExp,
  options: OpenInputOptions = {},
) {
  const where = typeof location === 'string' ? { path: location } : location;
  const error = await openInputFile(where, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InputFileError);
  expect(error).toMatchObject({ code });
  expect((error as Error).message).toMatch(message);
}

describe('CSV input', () => {
  it('reads a header, quoted commas and line breaks, escaped quotes, a BOM and CRLF', async () => {
    const csv = file(
      'companies.csv',
      '\ufeffname,domain,linkedin\r\n"Acme, Inc.",acme.com,\r\n"Multi\r\nLine ""Co""",multi.io,https://network.example/m\r\n',
    );
    const { input, rows, rejects } = await readAll(csv);
    expect(input.format).toBe('csv');
    expect(input.delimiter).toBe(',');
    expect(input.columns).toEqual(['name', 'domain', 'linkedin']);
    expect(rejects).toEqual([]);
    expect(rows).toEqual([
      { rowNumber: 1, values: { name: 'Acme, Inc.', domain: 'acme.com', linkedin: null } },
      {
        rowNumber: 2,
        values: { name: 'Multi\r\nLine "Co"', domain: 'multi.io', linkedin: 'https://network.example/m' },
      },
    ]);
  });

  it('sniffs semicolons and tabs, and takes an explicit delimiter', async () => {
    const semi = await readAll(file('semi.csv', 'name;domain\n"Acme, Inc.";acme.com\n'));
    expect(semi.input.delimiter).toBe(';');
    expect(semi.rows[0]?.values).toEqual({ name: 'Acme, Inc.', domain: 'acme.com' });
    const tsv = await readAll(file('tabs.tsv', 'name\tdomain\nAcme\tacme.com\n'));
    expect(tsv.rows[0]?.values).toEqual({ name: 'Acme', domain: 'acme.com' });
    const piped = await readAll(file('piped.txt', 'name|domain\nAcme|acme.com\n'), {
      format: 'csv',
      delimiter: '|',
    });
    expect(piped.rows[0]?.values).toEqual({ name: 'Acme', domain: 'acme.com' });
  });

  it('numbers rows by data record and rejects records with the wrong field count, with line and reason', async () => {
    const csv = file(
      'ragged.csv',
      'name,domain\n' + // line 1
        'one,one.com\n' + // row 1, line 2
        '\n' + // blank: not a record
        'short\n' + // row 2, line 4 → reject
        '"two\nlines",two.com\n' + // row 3, lines 5-6
        'three,three.com,extra\n' + // row 4, line 7 → reject
        'four,four.com,,\n', // row 5, line 8: trailing empty fields are fine
    );
    const { rows, rejects } = await readAll(csv);
    expect(rows.map((r) => [r.rowNumber, r.values.name])).toEqual([
      [1, 'one'],
      [3, 'two\nlines'],
      [5, 'four'],
    ]);
    expect(rejects).toEqual([
      { rowNumber: 2, line: 4, reason: 'expected 2 fields, found 1', text: 'short' },
      { rowNumber: 4, line: 7, reason: 'expected 2 fields, found 3', text: 'three,three.com,extra' },
    ]);
  });

  it('rejects a record whose quote never closes and reads on from the next line', async () => {
    const csv = file('open-quote.csv', 'name,domain\nacme,"acme.com\nbeta,beta.com\n');
    const { rows, rejects } = await readAll(csv, { maxRecordChars: 20 });
    expect(rows).toEqual([{ rowNumber: 2, values: { name: 'beta', domain: 'beta.com' } }]);
    expect(rejects).toMatchObject([{ rowNumber: 1, line: 2, text: 'acme,"acme.com' }]);
  });

  it('names blank and repeated header cells uniquely', async () => {
    const { input } = await readAll(file('dups.csv', 'name, ,Name,name\na,b,c,d\n'));
    expect(input.columns).toEqual(['name', 'column_2', 'Name', 'name_2']);
  });

  it('keeps a column named __proto__ as an ordinary value', async () => {
    const { rows } = await readAll(file('proto.csv', 'name,__proto__\nAcme,x\n'));
    expect(Object.keys(rows[0]!.values)).toEqual(['name', '__proto__']);
    expect(rows[0]!.values.__proto__).toBe('x');
    const jsonl = await readAll(file('proto.jsonl', '{"__proto__":null,"name":"Acme"}\n'));
    expect(Object.getPrototypeOf(jsonl.rows[0]!.values)).toBe(Object.prototype);
    expect(Object.keys(jsonl.rows[0]!.values)).toEqual(['__proto__', 'name']);
  });

  it('reads UTF-16 files with a byte-order mark', async () => {
    const text = '\ufeffname,city\nZoë,Köln\n';
    const { rows } = await readAll(file('utf16.csv', Buffer.from(text, 'utf16le')));
    expect(rows[0]?.values).toEqual({ name: 'Zoë', city: 'Köln' });
  });

  it('streams a large file in chunks of the requested size with consecutive row numbers', async () => {
    const lines = ['name,domain'];
    for (let i = 1; i <= 25_000; i++) lines.push(`"Company ${i}, Ltd",c${i}.com`);
    const input = await openInputFile({ path: file('many.csv', lines.join('\n')) }, { chunkRows: 1000 });
    let expected = 1;
    let chunks = 0;
    for await (const chunk of input.chunks()) {
      chunks += 1;
      expect(chunk.rows.length).toBe(1000);
      for (const row of chunk.rows) expect(row.rowNumber).toBe(expected++);
    }
    expect(chunks).toBe(25);
    expect(expected).toBe(25_001);
  });

  it('stops reading and releases the file when the consumer stops early', async () => {
    const lines = ['name'];
    for (let i = 0; i < 10_000; i++) lines.push(`n${i}`);
    const input = await openInputFile({ path: file('early.csv', lines.join('\n')) }, { chunkRows: 100 });
    for await (const chunk of input.chunks()) {
      expect(chunk.rows[0]?.rowNumber).toBe(1);
      break;
    }
    await input.close();
  });
});

describe('JSON Lines input', () => {
  it('reads objects as text values, numbering rows by record and rejecting bad lines', async () => {
    const jsonl = file(
      'people.jsonl',
      [
        '{"name":"Acme","domain":"acme.com","employees":120,"public":true,"tags":["a"],"hq":{"city":"Paris"}}',
        '',
        '{"name":"Beta","domain":null,"extra":"later key"}',
        '{"name": "broken"',
        '[1,2]',
        '{"name":"Gamma"}\r',
      ].join('\n'),
    );
    const { input, rows, rejects } = await readAll(jsonl);
    expect(input.columns).toEqual(['name', 'domain', 'employees', 'public', 'tags', 'hq', 'extra']);
    expect(rows).toEqual([
      {
        rowNumber: 1,
        values: {
          name: 'Acme',
          domain: 'acme.com',
          employees: '120',
          public: 'true',
          tags: '["a"]',
          hq: '{"city":"Paris"}',
        },
      },
      { rowNumber: 2, values: { name: 'Beta', domain: null, extra: 'later key' } },
      { rowNumber: 5, values: { name: 'Gamma' } },
    ]);
    expect(rejects.map((r) => [r.rowNumber, r.line, r.text])).toEqual([
      [3, 4, '{"name": "broken"'],
      [4, 5, '[1,2]'],
    ]);
    expect(rejects[0]?.reason).toMatch(/^not valid JSON/);
    expect(rejects[1]?.reason).toBe('not a JSON object');
  });
});

describe('Parquet input', () => {
  it('reads every column as text, nested values as JSON, with the row count up front', async () => {
    const parquet = path.join(dir, 'input.parquet');
    await writeParquetFile(
      {
        schema: [
          { name: 'name', type: 'string' },
          { name: 'employees', type: 'int64' },
          { name: 'founded', type: 'timestamptz' },
          { name: 'tags', type: { list: 'string' } },
        ],
        destination: { path: parquet },
      },
      [
        { name: 'Acme', employees: 120, founded: new Date('2001-02-03T04:05:06Z'), tags: ['b2b', 'saas'] },
        { name: 'Beta', employees: null, founded: null, tags: null },
      ],
    );
    const { input, rows, rejects } = await readAll(parquet);
    expect(input.rowCount).toBe(2);
    expect(input.columns).toEqual(['name', 'employees', 'founded', 'tags']);
    expect(rejects).toEqual([]);
    expect(rows).toEqual([
      {
        rowNumber: 1,
        values: { name: 'Acme', employees: '120', founded: '2001-02-03 04:05:06+00', tags: '["b2b","saas"]' },
      },
      { rowNumber: 2, values: { name: 'Beta', employees: null, founded: null, tags: null } },
    ]);
  });
});

describe('files that cannot be read at all', () => {
  it('fails with a code and a message that names the file', async () => {
    await expectFileError(path.join(dir, 'nope.csv'), 'NOT_FOUND', /nope\.csv: file not found/);
    await expectFileError(file('empty.csv', ''), 'EMPTY', /empty\.csv: is empty/);
    await expectFileError(file('blank.csv', '\n\r\n\n'), 'EMPTY', /blank\.csv: has no header row/);
    await expectFileError(
      file('spaces.csv', '\n   \n'),
      'NO_HEADER',
      /spaces\.csv: the header row \(line 2\) has no column names/,
    );
    await expectFileError(
      file('no-header.csv', ',,\na,b,c\n'),
      'NO_HEADER',
      /no-header\.csv: the header row \(line 1\) has no column names/,
    );
    await expectFileError(file('blank.jsonl', '\n\n'), 'EMPTY', /blank\.jsonl: holds no records/);
    await expectFileError(
      file('actually.csv', Buffer.from('PAR1\u0000\u0001rest')),
      'WRONG_FORMAT',
      /actually\.csv: looks like a Parquet file/,
    );
    await expectFileError(
      file('binary.csv', Buffer.from([0x41, 0x00, 0x42, 0x0a])),
      'WRONG_FORMAT',
      /binary\.csv: holds binary data/,
    );
    await expectFileError(file('zipped.csv', Buffer.from([0x1f, 0x8b, 0x08, 0x00])), 'WRONG_FORMAT', /gzip/);
    await expectFileError(
      file('table.parquet', 'name,domain\na,b\n'),
      'WRONG_FORMAT',
      /table\.parquet: is not a Parquet file/,
    );
    await expectFileError(
      file('csv-really.jsonl', 'name,domain\na,b\n'),
      'WRONG_FORMAT',
      /csv-really\.jsonl: is not JSON Lines: line 1/,
    );
    await expectFileError(file('data.xlsx', 'x'), 'UNKNOWN_FORMAT', /data\.xlsx: cannot tell the format/);
    await expectFileError(file('data.csv.gz', 'x'), 'UNKNOWN_FORMAT', /decompress/);
    await expectFileError(dir, 'WRONG_FORMAT', /is a folder/, { format: 'csv' });
  });
});

describe('inputs in S3', () => {
  let s3: TestS3;
  let store: S3ObjectStore;
  const prefix = uniquePrefix('inputs');
  beforeAll(async () => {
    s3 = await useTestS3();
    store = new S3ObjectStore({
      bucket: s3.bucket,
      connection: {
        endpoint: s3.endpoint,
        region: s3.region,
        forcePathStyle: true,
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
      },
    });
  });
  afterAll(async () => {
    store.close();
    await s3.stop();
  });

  it('reads CSV, JSON Lines and Parquet objects, leaving no scratch files behind', async () => {
    const scratch = mkdtempSync(path.join(tmpdir(), 'enrichflow-input-scratch-'));
    await store.put(`${prefix}in.csv`, 'name,domain\r\nAcme,acme.com\r\n');
    await store.put(`${prefix}in.jsonl`, '{"name":"Acme"}\n');
    await writeParquetFile(
      { schema: [{ name: 'name', type: 'string' }], destination: { store, key: `${prefix}in.parquet` } },
      [{ name: 'Acme' }],
    );
    for (const [key, values] of [
      ['in.csv', { name: 'Acme', domain: 'acme.com' }],
      ['in.jsonl', { name: 'Acme' }],
      ['in.parquet', { name: 'Acme' }],
    ] as const) {
      const { rows } = await readAll({ store, key: `${prefix}${key}` }, { tempDir: scratch });
      expect(rows).toEqual([{ rowNumber: 1, values }]);
    }
    expect(readdirSync(scratch)).toEqual([]);
    rmSync(scratch, { recursive: true });
  });

  it('names the object when it is missing', async () => {
    await expectFileError(
      { store, key: `${prefix}missing.csv` },
      'NOT_FOUND',
      new RegExp(`s3://${s3.bucket}/${prefix}missing\\.csv: object not found`),
    );
    await expectFileError(
      { store, key: `${prefix}missing.parquet` },
      'NOT_FOUND',
      /missing\.parquet: object not found/,
    );
  });
});
