// Reads an input file and decides, row by row, what can be matched: columns are mapped to match
// fields (by alias or explicitly), values normalised, unusable rows rejected with a reason, and
// identical match keys collapsed so each is sent to the service once. One streamed pass in JavaScript
// writes the planned rows and rejects (CSV) and the keys (JSON lines, the plan files' items) to a
// scratch folder, keys deduplicated by a `KeyIndex` whose memory does not grow with key length; DuckDB
// reads each file once, when a table is written. Memory stays flat whatever the size of the file.
// (Until this pass, DuckDB SQL did all of it: 65k rows/s and 715 MB peak for a million rows.)
import type { DuckDBConnection } from '@duckdb/node-api';
import { closeSync, createReadStream, openSync, writeSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import type { FileLocation } from './files.js';
import { detectInputFormat, InputFileError, openInputFile, type InputFormat } from './input/index.js';
import { MATCH_FIELDS, type InputSpec, type MatchField } from '../pipeline/run-types.js';
import { sqlIdent, sqlString } from './duckdb.js';
import { KeyIndex } from './key-index.js';

export { InputFileError } from './input/index.js';

type InputField = MatchField | 'business_id';

/** Column names recognised for each field, compared after lower-casing and dropping spaces, `_` and `-`. */
export const COLUMN_ALIASES: Record<InputField, string[]> = {
  name: [
    'name',
    'company',
    'companyname',
    'businessname',
    'organization',
    'organisation',
    'account',
    'accountname',
    'legalname',
  ],
  domain: ['domain', 'companydomain', 'domainname', 'websitedomain', 'emaildomain'],
  url: ['url', 'website', 'companywebsite', 'websiteurl', 'companyurl', 'homepage', 'site', 'web'],
  network_url: [
    'networkurl',
    'network',
    'companynetwork',
    'networkprofile',
    'linkedin',
    'linkedinurl',
    'companylinkedin',
    'companylinkedinurl',
  ],
  business_id: ['businessid'],
};

const squash = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, '');

/** The format of an input: given, or from its extension; fails before any work when neither says. */
export function detectFormat(location: string, explicit?: InputFormat): InputFormat {
  const format = explicit ?? detectInputFormat(location);
  if (!format) {
    throw new InputFileError(
      'UNKNOWN_FORMAT',
      location,
      'cannot tell the format from the file name; name it .csv, .jsonl or .parquet, or pass --format',
    );
  }
  return format;
}

export interface ColumnMapping {
  fields: Partial<Record<InputField, string>>;
  columns: string[];
}

export function mapColumns(
  location: string,
  columns: string[],
  explicit: InputSpec['columns'] = {},
): ColumnMapping {
  const fields: Partial<Record<InputField, string>> = {};
  for (const [field, column] of Object.entries(explicit) as [InputField, string][]) {
    if (!columns.includes(column)) {
      throw new InputFileError(
        'UNKNOWN_COLUMN',
        location,
        `column "${column}" given for ${field} is not in the file (columns: ${columns.join(', ')})`,
      );
    }
    fields[field] = column;
  }
  for (const field of [...MATCH_FIELDS, 'business_id'] as InputField[]) {
    if (fields[field]) continue;
    const found = columns.find((c) => COLUMN_ALIASES[field].includes(squash(c)));
    if (found) fields[field] = found;
  }
  if (!fields.business_id && MATCH_FIELDS.every((f) => !fields[f])) {
    throw new InputFileError(
      'NO_USABLE_COLUMN',
      location,
      'no usable column; expected business_id or one of name, domain, url, network_url ' +
        `(or aliases such as company, website, linkedin_url), found: ${columns.join(', ') || '(none)'}`,
    );
  }
  return { fields, columns };
}

// ---------------------------------------------------------------------------------------------------
// Normalisation. DuckDB SQL did this before; these functions keep its exact results: `trim` drops
// Unicode space separators (category Zs) at both ends, `lower` maps code point by code point, and the
// patterns follow RE2 (`\s` is [\t\n\f\r ] and `.` is anything but a newline).

function isSpaceSeparator(code: number): boolean {
  return (
    code === 0x20 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

/** A value as planning sees it: trimmed, and null when nothing is left. */
function cleanValue(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  let start = 0;
  let end = value.length;
  while (start < end && isSpaceSeparator(value.charCodeAt(start))) start++;
  while (end > start && isSpaceSeparator(value.charCodeAt(end - 1))) end--;
  if (start === end) return null;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

const FULL_CASE_ONLY = /[\u0130\u03a3]/;

/**
 * Lower case by simple (one to one) case mapping. JavaScript's full mapping differs only for U+0130
 * (İ, which it turns into two code points) and a final Σ (ς); both map as DuckDB maps them.
 */
function lowerSimple(value: string): string {
  const lowered = value.toLowerCase();
  if (!FULL_CASE_ONLY.test(value)) return lowered;
  return value
    .replace(/\u0130/g, 'i')
    .replace(/\u03a3/g, '\u03c3')
    .toLowerCase();
}

const HOST = /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:[^@/]*@)?(?:www\.)?([^/:?#\t\n\f\r ]+)/;

/** The host of a lower-case domain, URL or address: without scheme, user, `www.`, port or path. */
function hostOf(lowered: string): string | null {
  return HOST.exec(lowered)?.[1] ?? null;
}

function isAlnum(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39);
}

/** Dot-separated labels of [a-z0-9-] that start and end alphanumeric; the last (≥ 2) starts with a letter. */
function isValidHost(host: string | null): boolean {
  if (host === null) return false;
  let labelStart = 0;
  let labels = 0;
  for (let i = 0; i <= host.length; i++) {
    const code = i < host.length ? host.charCodeAt(i) : 0x2e;
    if (code !== 0x2e) {
      if (!isAlnum(code) && code !== 0x2d) return false;
      continue;
    }
    const last = i === host.length;
    if (i === labelStart) return false;
    if (!isAlnum(host.charCodeAt(labelStart)) || !isAlnum(host.charCodeAt(i - 1))) return false;
    if (
      last &&
      (i - labelStart < 2 || !(host.charCodeAt(labelStart) >= 0x61 && host.charCodeAt(labelStart) <= 0x7a))
    )
      return false;
    labels += 1;
    labelStart = i + 1;
  }
  return labels >= 2;
}

const SCHEME_OR_WWW = /^[a-z][a-z0-9+.-]*:\/\/(?:www\.)?|^www\./;

/** A lower-case URL as a key: without scheme, `www.`, query, fragment or trailing slashes. */
function pathOf(lowered: string): string {
  let text = lowered.replace(SCHEME_OR_WWW, '');
  // The query or fragment runs to the end of the text, on the last line (RE2's `[?#].*$`).
  for (let i = text.lastIndexOf('\n') + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x3f || code === 0x23) {
      text = text.slice(0, i);
      break;
    }
  }
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f) end--;
  return end === text.length ? text : text.slice(0, end);
}

const WHITESPACE_RUNS = /[\t\n\f\r ]+/g;

const BUSINESS_ID = /^[a-f0-9]{32}$/;

interface MatchKey {
  name: string | null;
  domain: string | null;
  url: string | null;
  network_url: string | null;
}

/** The normalised match fields of one row's (cleaned) values, or the reason the row cannot be matched. */
function matchKeyOf(
  name: string | null,
  domain: string | null,
  url: string | null,
  networkUrl: string | null,
): MatchKey | { reject: string } {
  if (name === null && domain === null && url === null && networkUrl === null)
    return { reject: 'no usable field: name, domain, url and network_url are all empty' };
  const domainHost = domain === null ? null : hostOf(lowerSimple(domain));
  if (domain !== null && !isValidHost(domainHost))
    return { reject: `domain "${domain}" is not a valid domain name` };
  const urlLower = url === null ? null : lowerSimple(url);
  if (url !== null && !isValidHost(hostOf(urlLower!)))
    return { reject: `url "${url}" has no valid host name` };
  const networkLower = networkUrl === null ? null : lowerSimple(networkUrl);
  const networkPath = networkLower === null ? null : pathOf(networkLower);
  if (networkUrl !== null && (!isValidHost(hostOf(networkLower!)) || !networkPath!.includes('/')))
    return { reject: `network_url "${networkUrl}" is not a profile address` };
  return {
    name: name === null ? null : name.replace(WHITESPACE_RUNS, ' ') || null,
    domain: domainHost,
    url: urlLower === null ? null : pathOf(urlLower),
    network_url: networkPath,
  };
}

// ---------------------------------------------------------------------------------------------------
// The planning pass

export interface PlannedInput {
  inputRows: number;
  rejectedRows: number;
  uniqueKeys: number;
  idsProvided: boolean;
  mapping: ColumnMapping;
  /**
   * The keys, one JSON object a line in key_id order: `{"key_id":"0","name":…,"domain":…,"url":…,
   * "network_url":…}` (the items of match plan files), or `{"business_id":…}` when ids are provided.
   */
  keysFile: string;
}

export interface PlanInputOptions {
  /** Scratch folder for the reader and the plan's files; it must outlive the tables planned. */
  tempDir: string;
  /** Called with the number of records read so far (for heartbeats). */
  onProgress?: (records: number) => void;
}

// eslint-disable-next-line no-control-regex -- the characters JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * JSON text of a string that DuckDB accepts: lone surrogates become U+FFFD, as DuckDB's own conversion
 * does. Most values need no escaping and are quoted as they are.
 */
function jsonString(value: string): string {
  if (!NEEDS_ESCAPE.test(value)) return `"${value}"`;
  return JSON.stringify((value as unknown as { toWellFormed(): string }).toWellFormed());
}

/** One field of a dedup key: `-` for null, else its length, `:` and the text (so fields never run together). */
const keyText = (value: string | null) => (value === null ? '-' : `${value.length}:${value}`);

const jsonOrNull = (value: string | null) => (value === null ? 'null' : jsonString(value));

/** `\u001b` → `\u001B`: DuckDB's `to_json`, which wrote reject records before, writes escapes in upper case. */
function upperCaseEscapes(json: string): string {
  return json.replace(/(\\+)u00([01][0-9a-f])/g, (match, slashes: string, code: string) =>
    slashes.length % 2 === 1 ? `${slashes}u00${code.toUpperCase()}` : match,
  );
}

/** The lines of a plan file (`PlannedInput.keysFile`), without their newlines, a few thousand at a time. */
export async function* planLines(file: string): AsyncIterable<string[]> {
  let rest = '';
  for await (const piece of createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 18 })) {
    const text = rest + (piece as string);
    const lines = text.split('\n');
    rest = lines.pop()!;
    yield lines;
  }
  if (rest) yield [rest];
}

/** A CSV field: null as nothing, text always quoted (so '' and null differ). */
const csvValue = (value: string | null) =>
  value === null ? '' : value.includes('"') ? `"${value.replaceAll('"', '""')}"` : `"${value}"`;

/**
 * A file of lines (CSV records, JSON lines), written about 64 KiB at a time: lines wait in a short array, so they die young
 * instead of piling up in the old generation.
 */
class LineFile {
  private readonly fd: number;
  private pending: string[] = [];
  private pendingChars = 0;
  lines = 0;
  /** Characters in the longest line so far. */
  longest = 0;
  constructor(readonly file: string) {
    this.fd = openSync(file, 'w');
  }
  /** Adds one line, its newline included. */
  add(line: string): void {
    this.pending.push(line);
    this.pendingChars += line.length;
    if (line.length > this.longest) this.longest = line.length;
    this.lines += 1;
    if (this.pendingChars >= 1 << 16) this.flush();
  }
  close(): void {
    this.flush();
    closeSync(this.fd);
  }
  private flush(): void {
    if (this.pending.length > 0) writeSync(this.fd, this.pending.join(''));
    this.pending = [];
    this.pendingChars = 0;
  }
}

/**
 * Plans the input in one pass and leaves, in `connection`, views over the plan's files: `rows`
 * (row_number, key_id or business_id, input_* columns; row order), `rejects` (row_number, reason,
 * record; row order) and `keys` (key_id plus the normalised match fields, or business_id; first-seen
 * order).
 */
export async function planInput(
  connection: DuckDBConnection,
  location: FileLocation,
  spec: InputSpec,
  options: PlanInputOptions,
): Promise<PlannedInput> {
  const input = await openInputFile(location, {
    format: detectFormat(spec.location, spec.format),
    ...(spec.delimiter ? { delimiter: spec.delimiter } : {}),
    tempDir: options.tempDir,
  });
  const dir = await mkdtemp(path.join(options.tempDir, 'plan-'));
  const rowsOut = new LineFile(path.join(dir, 'rows.csv'));
  const rejectsOut = new LineFile(path.join(dir, 'rejects.csv'));
  const keysOut = new LineFile(path.join(dir, 'keys.jsonl'));
  const index = new KeyIndex(path.join(dir, 'keys.bin'));
  let mapping: ColumnMapping;
  let idsProvided: boolean;
  try {
    const columns = [...input.columns];
    mapping = mapColumns(spec.location, columns, spec.columns);
    const { fields } = mapping;
    idsProvided = fields.business_id !== undefined;
    const recordKeys = columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c)}:`);
    const idColumn = fields.business_id;
    const [nameColumn, domainColumn, urlColumn, networkColumn] = MATCH_FIELDS.map((f) => fields[f]);
    const pick = (values: Record<string, string | null>, column: string | undefined) =>
      column === undefined ? null : cleanValue(values[column]);

    /** Writes a rows record: the row number, its key (id, or quoted business id) and the input values. */
    const addRow = (rowNumber: number, key: string, values: Record<string, string | null>) => {
      let line = `${rowNumber},${key}`;
      for (const column of columns) line += ',' + csvValue(values[column] ?? null);
      rowsOut.add(line + '\n');
    };
    const addReject = (rowNumber: number, reason: string, record: string | null) =>
      rejectsOut.add(`${rowNumber},${csvValue(reason)},${csvValue(record)}\n`);
    const recordOf = (values: Record<string, string | null>) => {
      let record = '';
      for (let i = 0; i < columns.length; i++)
        record += recordKeys[i] + jsonOrNull(values[columns[i]!] ?? null);
      record = columns.length === 0 ? '{}' : record + '}';
      return record.includes('\\u00') ? upperCaseEscapes(record) : record;
    };

    let seen = 0;
    for await (const chunk of input.chunks()) {
      // Rows and malformed records come apart; write rejects in row order.
      let malformed = 0;
      const rejectMalformedBefore = (rowNumber: number) => {
        for (; malformed < chunk.rejects.length; malformed++) {
          const reject = chunk.rejects[malformed]!;
          if (reject.rowNumber > rowNumber) return;
          addReject(
            reject.rowNumber,
            `malformed record${reject.line !== undefined ? ` at line ${reject.line}` : ''}: ${reject.reason}`,
            reject.text ?? null,
          );
        }
      };
      for (const { rowNumber, values } of chunk.rows) {
        rejectMalformedBefore(rowNumber);
        if (idColumn !== undefined) {
          const raw = pick(values, idColumn);
          const businessId = raw === null ? null : lowerSimple(raw);
          if (businessId === null) addReject(rowNumber, 'business_id is empty', recordOf(values));
          else if (!BUSINESS_ID.test(businessId))
            addReject(
              rowNumber,
              `business_id "${businessId}" is not a 32-character hexadecimal id`,
              recordOf(values),
            );
          else {
            const known = index.size;
            if (index.id(businessId) === known) keysOut.add(`{"business_id":"${businessId}"}\n`);
            addRow(rowNumber, `"${businessId}"`, values);
          }
          continue;
        }
        const key = matchKeyOf(
          pick(values, nameColumn),
          pick(values, domainColumn),
          pick(values, urlColumn),
          pick(values, networkColumn),
        );
        if ('reject' in key) {
          addReject(rowNumber, key.reject, recordOf(values));
          continue;
        }
        // Names compare case-insensitively; the key keeps the first row's spelling.
        const known = index.size;
        const id = index.id(
          keyText(key.name === null ? null : lowerSimple(key.name)) +
            keyText(key.domain) +
            keyText(key.url) +
            keyText(key.network_url),
        );
        if (id === known) {
          keysOut.add(
            `{"key_id":"${id}","name":${jsonOrNull(key.name)},"domain":${jsonOrNull(key.domain)},"url":${jsonOrNull(key.url)},"network_url":${jsonOrNull(key.network_url)}}\n`,
          );
        }
        addRow(rowNumber, String(id), values);
      }
      rejectMalformedBefore(Number.POSITIVE_INFINITY);
      seen += chunk.rows.length + chunk.rejects.length;
      options.onProgress?.(seen);
    }
  } finally {
    rowsOut.close();
    rejectsOut.close();
    keysOut.close();
    index.close();
    await input.close();
  }
  const inputRows = rowsOut.lines + rejectsOut.lines;
  if (inputRows === 0) throw new InputFileError('EMPTY', spec.location, 'the file has no data rows');

  // Rows and rejects are CSV, not JSON lines: DuckDB's CSV reader streams through a buffer sized to
  // the longest line (~2 MB for most inputs) where its JSON reader holds 32 MB or more.
  const csv = (out: LineFile, columns: Record<string, string>) => {
    let maxLine = 1 << 20;
    while (maxLine < out.longest * 3 + 2) maxLine *= 2;
    return `read_csv(${sqlString(out.file)}, columns = {${Object.entries(columns)
      .map(([name, type]) => `${name}: '${type}'`)
      .join(', ')}}, header = false, auto_detect = false, delim = ',', quote = '"', escape = '"',
      new_line = '\\n', allow_quoted_nulls = false, strict_mode = true, max_line_size = ${maxLine},
      buffer_size = ${maxLine * 2})`;
  };
  const inputColumns = Object.fromEntries(mapping.columns.map((c, i) => [`c${i}`, 'VARCHAR']));
  const inputSelect = mapping.columns.map((c, i) => `, c${i} AS ${sqlIdent(`input_${c}`)}`).join('');
  await connection.run(
    idsProvided
      ? `CREATE VIEW rows AS SELECT r AS row_number, b AS business_id${inputSelect}
           FROM ${csv(rowsOut, { r: 'BIGINT', b: 'VARCHAR', ...inputColumns })}`
      : `CREATE VIEW rows AS SELECT r AS row_number, k AS key_id${inputSelect}
           FROM ${csv(rowsOut, { r: 'BIGINT', k: 'BIGINT', ...inputColumns })}`,
  );
  await connection.run(
    `CREATE VIEW rejects AS SELECT r AS row_number, reason, record
       FROM ${csv(rejectsOut, { r: 'BIGINT', reason: 'VARCHAR', record: 'VARCHAR' })}`,
  );
  const keyColumns = idsProvided
    ? "{business_id: 'VARCHAR'}"
    : "{key_id: 'BIGINT', name: 'VARCHAR', domain: 'VARCHAR', url: 'VARCHAR', network_url: 'VARCHAR'}";
  await connection.run(
    `CREATE VIEW keys AS SELECT * FROM read_json(${sqlString(keysOut.file)}, format = 'newline_delimited',
       columns = ${keyColumns}, maximum_object_size = ${Math.max(16 << 20, keysOut.longest * 3 + 2)})`,
  );
  return {
    inputRows,
    rejectedRows: rejectsOut.lines,
    uniqueKeys: keysOut.lines,
    idsProvided,
    mapping,
    keysFile: keysOut.file,
  };
}
