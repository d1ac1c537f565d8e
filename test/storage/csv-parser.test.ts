// The CSV parser: RFC 4180 records with physical line numbers, recovery from a quote left open, and the
// same result however the text is split into chunks.
import { describe, expect, it } from 'vitest';
import { CsvParser, sniffCsvDelimiter, type CsvParseOutput } from '../../storage/input/csv-parser.js';

function parse(pieces: string[], delimiter = ',', maxRecordChars?: number): CsvParseOutput {
  const parser = new CsvParser({ delimiter, maxRecordChars });
  const all: CsvParseOutput = { records: [], malformed: [] };
  for (const out of [...pieces.map((p) => parser.push(p)), parser.end()]) {
    all.records.push(...out.records);
    all.malformed.push(...out.malformed);
  }
  return all;
}

const TRICKY =
  'name,domain,note\r\n' +
  '"Acme, Inc.",acme.com,"said ""hi"""\r\n' +
  '"Multi\nline\r\nname",multi.com,\n' +
  '\n' +
  'plain,plain.com,x"y\r' +
  '"after quote"tail,z.com,\n' +
  ',,\n' +
  'last,last.com,"end"';

describe('CsvParser', () => {
  it('parses quoted delimiters, escaped quotes, embedded line breaks, CRLF, lone CR and blank lines', () => {
    const { records, malformed } = parse([TRICKY]);
    expect(malformed).toEqual([]);
    expect(records).toEqual([
      { fields: ['name', 'domain', 'note'], line: 1 },
      { fields: ['Acme, Inc.', 'acme.com', 'said "hi"'], line: 2 },
      { fields: ['Multi\nline\r\nname', 'multi.com', ''], line: 3 },
      { fields: ['plain', 'plain.com', 'x"y'], line: 7 },
      { fields: ['after quotetail', 'z.com', ''], line: 8 },
      { fields: ['', '', ''], line: 9 },
      { fields: ['last', 'last.com', 'end'], line: 10 },
    ]);
  });

  it('gives the same records whatever the chunk boundaries', () => {
    const whole = parse([TRICKY]);
    for (let cut = 0; cut <= TRICKY.length; cut++) {
      expect(parse([TRICKY.slice(0, cut), TRICKY.slice(cut)]), `cut at ${cut}`).toEqual(whole);
    }
    expect(parse([...TRICKY])).toEqual(whole);
  });

  it('reports a quote left open and resumes on the next line', () => {
    const text = 'a,b\n1,"open\n2,two\n3,three\n';
    const { records, malformed } = parse([text], ',', 10);
    expect(malformed.map((m) => [m.line, m.text])).toEqual([[2, '1,"open']]);
    expect(malformed[0]?.reason).toMatch(/longer than 10 characters/);
    expect(records.map((r) => [r.line, r.fields])).toEqual([
      [1, ['a', 'b']],
      [3, ['2', 'two']],
      [4, ['3', 'three']],
    ]);
  });

  it('reports a quoted field still open at the end of the file', () => {
    const { records, malformed } = parse(['a,b\n1,ok\n2,"never closed\n']);
    expect(records.map((r) => r.fields)).toEqual([
      ['a', 'b'],
      ['1', 'ok'],
    ]);
    expect(malformed).toEqual([
      { line: 3, reason: 'a quoted field is not closed before the end of the file', text: '2,"never closed' },
    ]);
  });

  it('splits a line over the length limit off and goes on with the next line, across chunks', () => {
    const long = 'x'.repeat(50);
    const pieces = ['h\nshort\n', long.slice(0, 20), long.slice(20), '\nafter\n'];
    const { records, malformed } = parse(pieces, ',', 30);
    expect(records.map((r) => [r.line, r.fields[0]])).toEqual([
      [1, 'h'],
      [2, 'short'],
      [4, 'after'],
    ]);
    expect(malformed.map((m) => m.line)).toEqual([3]);
  });

  it('uses the delimiter it is given', () => {
    expect(parse(['a;b\n"x;y";z\n'], ';').records.map((r) => r.fields)).toEqual([
      ['a', 'b'],
      ['x;y', 'z'],
    ]);
  });
});

describe('sniffCsvDelimiter', () => {
  it('picks the separator that splits the header and agrees with the rows', () => {
    expect(sniffCsvDelimiter('name,domain\nAcme,acme.com\n')).toBe(',');
    expect(sniffCsvDelimiter('name;domain;city\n"Acme, Inc.";acme.com;Paris\nB;b.com;Lyon\n')).toBe(';');
    expect(sniffCsvDelimiter('name\tdomain\nAcme\tacme.com\n')).toBe('\t');
    expect(sniffCsvDelimiter('name|domain\nAcme|acme.com\n')).toBe('|');
    expect(sniffCsvDelimiter('name\nAcme\n')).toBe(',');
  });
});
