// The files a planning pass writes to its scratch folder, and the DuckDB views over them: planned rows
// and rejects as CSV, the unique keys as JSON lines (the plan files' items). Lines are formatted here,
// as DuckDB reads them back, so the planning pass only decides what goes in which file.
import type { DuckDBConnection } from '@duckdb/node-api';
import { closeSync, createReadStream, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { sqlIdent, sqlString } from './duckdb.js';
import type { MatchKey } from './match-keys.js';
import type { ProspectKey } from './people-keys.js';

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
export class LineFile {
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
 * The plan's three files in one folder: `rows.csv` (row number, key id or quoted business id, the input
 * values), `rejects.csv` (row number, reason, the record as JSON) and `keys.jsonl` (first-seen order).
 */
export class PlanFiles {
  private readonly rowsOut: LineFile;
  private readonly rejectsOut: LineFile;
  private readonly keysOut: LineFile;
  /** `{"column":` (or `,"column":`) for each input column, the record's JSON keys. */
  private readonly recordKeys: string[];

  constructor(
    dir: string,
    private readonly columns: string[],
  ) {
    this.rowsOut = new LineFile(path.join(dir, 'rows.csv'));
    this.rejectsOut = new LineFile(path.join(dir, 'rejects.csv'));
    this.keysOut = new LineFile(path.join(dir, 'keys.jsonl'));
    this.recordKeys = columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c)}:`);
  }

  /** Rows planned and rejected so far. */
  get inputRows(): number {
    return this.rowsOut.lines + this.rejectsOut.lines;
  }
  get rejectedRows(): number {
    return this.rejectsOut.lines;
  }
  get uniqueKeys(): number {
    return this.keysOut.lines;
  }
  /** The keys file (`PlannedInput.keysFile`). */
  get keysFile(): string {
    return this.keysOut.file;
  }

  /** A planned row: its number, its key (a key id, or a quoted business id) and the input values. */
  addRow(rowNumber: number, key: string, values: Record<string, string | null>): void {
    let line = `${rowNumber},${key}`;
    for (const column of this.columns) line += ',' + csvValue(values[column] ?? null);
    this.rowsOut.add(line + '\n');
  }

  addReject(rowNumber: number, reason: string, record: string | null): void {
    this.rejectsOut.add(`${rowNumber},${csvValue(reason)},${csvValue(record)}\n`);
  }

  /** A row's values as the JSON object a reject keeps. */
  recordOf(values: Record<string, string | null>): string {
    const { columns, recordKeys } = this;
    let record = '';
    for (let i = 0; i < columns.length; i++)
      record += recordKeys[i] + jsonOrNull(values[columns[i]!] ?? null);
    record = columns.length === 0 ? '{}' : record + '}';
    return record.includes('\\u00') ? upperCaseEscapes(record) : record;
  }

  /** A new match key, with its id. */
  addMatchKey(id: number, key: MatchKey): void {
    this.keysOut.add(
      `{"key_id":"${id}","name":${jsonOrNull(key.name)},"domain":${jsonOrNull(key.domain)},"url":${jsonOrNull(key.url)},"network_url":${jsonOrNull(key.network_url)}}\n`,
    );
  }

  /** A new people match key, with its id. */
  addProspectKey(id: number, key: ProspectKey): void {
    this.keysOut.add(
      `{"key_id":"${id}","full_name":${jsonOrNull(key.full_name)},"company_name":${jsonOrNull(key.company_name)},"email":${jsonOrNull(key.email)},"phone_number":${jsonOrNull(key.phone_number)},"network":${jsonOrNull(key.network)}}\n`,
    );
  }

  /** A new prospect id (already checked to be 40 hexadecimal characters). */
  addProspectId(prospectId: string): void {
    this.keysOut.add(`{"prospect_id":"${prospectId}"}\n`);
  }

  /** A new business id (already checked to be 32 hexadecimal characters). */
  addBusinessId(businessId: string): void {
    this.keysOut.add(`{"business_id":"${businessId}"}\n`);
  }

  close(): void {
    this.rowsOut.close();
    this.rejectsOut.close();
    this.keysOut.close();
  }

  /**
   * Views over the closed files in `connection`: `rows` (row_number, key_id or business_id, input_*
   * columns), `rejects` (row_number, reason, record) and `keys` (key_id and the match fields, or
   * business_id). For people, the prospect match fields and `prospect_id`.
   */
  async createViews(
    connection: DuckDBConnection,
    idsProvided: boolean,
    entity: 'businesses' | 'prospects' = 'businesses',
  ): Promise<void> {
    const idColumn = entity === 'prospects' ? 'prospect_id' : 'business_id';
    const { rowsOut, rejectsOut, keysOut } = this;
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
    const inputColumns = Object.fromEntries(this.columns.map((c, i) => [`c${i}`, 'VARCHAR']));
    const inputSelect = this.columns.map((c, i) => `, c${i} AS ${sqlIdent(`input_${c}`)}`).join('');
    await connection.run(
      idsProvided
        ? `CREATE VIEW rows AS SELECT r AS row_number, b AS ${idColumn}${inputSelect}
             FROM ${csv(rowsOut, { r: 'BIGINT', b: 'VARCHAR', ...inputColumns })}`
        : `CREATE VIEW rows AS SELECT r AS row_number, k AS key_id${inputSelect}
             FROM ${csv(rowsOut, { r: 'BIGINT', k: 'BIGINT', ...inputColumns })}`,
    );
    await connection.run(
      `CREATE VIEW rejects AS SELECT r AS row_number, reason, record
         FROM ${csv(rejectsOut, { r: 'BIGINT', reason: 'VARCHAR', record: 'VARCHAR' })}`,
    );
    const keyColumns = idsProvided
      ? `{${idColumn}: 'VARCHAR'}`
      : entity === 'prospects'
        ? "{key_id: 'BIGINT', full_name: 'VARCHAR', company_name: 'VARCHAR', email: 'VARCHAR', phone_number: 'VARCHAR', network: 'VARCHAR'}"
        : "{key_id: 'BIGINT', name: 'VARCHAR', domain: 'VARCHAR', url: 'VARCHAR', network_url: 'VARCHAR'}";
    await connection.run(
      `CREATE VIEW keys AS SELECT * FROM read_json(${sqlString(keysOut.file)}, format = 'newline_delimited',
         columns = ${keyColumns}, maximum_object_size = ${Math.max(16 << 20, keysOut.longest * 3 + 2)})`,
    );
  }
}
