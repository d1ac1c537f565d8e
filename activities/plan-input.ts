// Reads an input file into DuckDB and decides, row by row, what can be matched: columns are mapped
// to match fields (by alias or explicitly), values normalised, unusable rows rejected with a reason,
// and identical match keys collapsed so each is sent to the service once. All in SQL, so planning a
// million rows is fast and memory stays within DuckDB's limit.
import type { DuckDBConnection } from '@duckdb/node-api';
import type { FileLocation } from '../storage/files.js';
import {
  detectInputFormat,
  InputFileError,
  openInputFile,
  type InputFormat,
} from '../storage/input-reader.js';
import { MATCH_FIELDS, type InputSpec, type MatchField } from '../workflows/types.js';
import { queryRows, sqlIdent, sqlString } from './duckdb-session.js';

export { InputFileError } from '../storage/input-reader.js';

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

/**
 * Streams the file into table `src` (`__line` = row number, every column as text) and the records the
 * reader could not parse into `src_rejects`. The reader numbers rows and rejects together, 1..N in file
 * order, so both tables share one numbering.
 */
async function loadSource(
  connection: DuckDBConnection,
  location: FileLocation,
  spec: InputSpec,
  options: PlanInputOptions,
): Promise<string[]> {
  const input = await openInputFile(location, {
    format: detectFormat(spec.location, spec.format),
    ...(spec.delimiter ? { delimiter: spec.delimiter } : {}),
    ...(options.tempDir ? { tempDir: options.tempDir } : {}),
  });
  try {
    const columns = [...input.columns];
    await connection.run(
      `CREATE TABLE src (__line BIGINT${columns.map((c) => `, ${sqlIdent(c)} VARCHAR`).join('')});
       CREATE TABLE src_rejects (row_number BIGINT, reason VARCHAR, record VARCHAR);`,
    );
    const rows = await connection.createAppender('src');
    const rejects = await connection.createAppender('src_rejects');
    let seen = 0;
    for await (const chunk of input.chunks()) {
      for (const row of chunk.rows) {
        rows.appendBigInt(BigInt(row.rowNumber));
        for (const column of columns) {
          const value = row.values[column];
          if (value === null || value === undefined) rows.appendNull();
          else rows.appendVarchar(value);
        }
        rows.endRow();
      }
      for (const reject of chunk.rejects) {
        rejects.appendBigInt(BigInt(reject.rowNumber));
        rejects.appendVarchar(
          `malformed record${reject.line !== undefined ? ` at line ${reject.line}` : ''}: ${reject.reason}`,
        );
        if (reject.text === undefined) rejects.appendNull();
        else rejects.appendVarchar(reject.text);
        rejects.endRow();
      }
      seen += chunk.rows.length + chunk.rejects.length;
      options.onProgress?.(seen);
    }
    rows.closeSync();
    rejects.closeSync();
    return columns;
  } finally {
    await input.close();
  }
}

export interface PlannedInput {
  inputRows: number;
  rejectedRows: number;
  uniqueKeys: number;
  idsProvided: boolean;
  mapping: ColumnMapping;
}

/**
 * Builds, in `connection`: `rows` (row_number, input_* columns, key_id or business_id), `rejects`
 * (row_number, reason, record) and `keys` (key_id plus the normalised match fields, or business_id).
 */
export interface PlanInputOptions {
  /** Scratch folder for the reader. */
  tempDir?: string;
  /** Called with the number of records read so far (for heartbeats). */
  onProgress?: (records: number) => void;
}

export async function planInput(
  connection: DuckDBConnection,
  location: FileLocation,
  spec: InputSpec,
  options: PlanInputOptions = {},
): Promise<PlannedInput> {
  const columns = await loadSource(connection, location, spec, options);
  const mapping = mapColumns(spec.location, columns, spec.columns);
  const { fields } = mapping;
  const rowNumber = '__line';
  const col = (field: InputField) =>
    fields[field] ? `nullif(trim(${sqlIdent(fields[field])}), '')` : 'NULL::VARCHAR';
  const inputColumns = columns.map((c) => `${sqlIdent(c)} AS ${sqlIdent(`input_${c}`)}`).join(', ');
  const record = `to_json({${columns.map((c) => `${sqlString(c)}: ${sqlIdent(c)}`).join(', ')}})::VARCHAR`;

  await connection.run(`
    CREATE MACRO ef_host(v) AS nullif(regexp_extract(lower(v), '^(?:[a-z][a-z0-9+.-]*://)?(?:[^@/]*@)?(?:www\\.)?([^/:?#\\s]+)', 1), '');
    CREATE MACRO ef_valid_host(h) AS h IS NOT NULL AND regexp_full_match(h, '([a-z0-9]([a-z0-9-]*[a-z0-9])?\\.)+[a-z][a-z0-9-]*[a-z0-9]');
    CREATE MACRO ef_path(v) AS rtrim(regexp_replace(regexp_replace(lower(v), '^[a-z][a-z0-9+.-]*://(www\\.)?|^www\\.', ''), '[?#].*$', ''), '/');
  `);
  const idsProvided = fields.business_id !== undefined;
  if (idsProvided) {
    await connection.run(`
      CREATE TABLE staged AS SELECT ${rowNumber} AS row_number, lower(${col('business_id')}) AS business_id,
        ${record} AS record, ${inputColumns} FROM src`);
    await connection.run(`
      CREATE TABLE rejects AS
        SELECT row_number, reason, record FROM src_rejects
        UNION ALL
        SELECT row_number,
          CASE WHEN business_id IS NULL THEN 'business_id is empty'
               ELSE 'business_id "' || business_id || '" is not a 32-character hexadecimal id' END,
          record
        FROM staged WHERE business_id IS NULL OR NOT regexp_full_match(business_id, '[a-f0-9]{32}')`);
    await connection.run(`
      CREATE TABLE rows AS SELECT * EXCLUDE (record) FROM staged
        WHERE business_id IS NOT NULL AND regexp_full_match(business_id, '[a-f0-9]{32}') ORDER BY row_number`);
    await connection.run(`
      CREATE TABLE keys AS SELECT business_id FROM rows GROUP BY business_id ORDER BY min(row_number)`);
  } else {
    await connection.run(`
      CREATE TABLE staged AS SELECT ${rowNumber} AS row_number,
        ${col('name')} AS raw_name, ${col('domain')} AS raw_domain, ${col('url')} AS raw_url, ${col('network_url')} AS raw_network_url,
        ${record} AS record, ${inputColumns} FROM src`);
    await connection.run(`
      CREATE TABLE normalised AS SELECT *,
        nullif(regexp_replace(raw_name, '\\s+', ' ', 'g'), '') AS name_n,
        ef_host(raw_domain) AS domain_n,
        ef_path(raw_url) AS url_n,
        ef_path(raw_network_url) AS network_url_n,
        CASE
          WHEN raw_name IS NULL AND raw_domain IS NULL AND raw_url IS NULL AND raw_network_url IS NULL
            THEN 'no usable field: name, domain, url and network_url are all empty'
          WHEN raw_domain IS NOT NULL AND NOT ef_valid_host(ef_host(raw_domain))
            THEN 'domain "' || raw_domain || '" is not a valid domain name'
          WHEN raw_url IS NOT NULL AND NOT ef_valid_host(ef_host(raw_url))
            THEN 'url "' || raw_url || '" has no valid host name'
          WHEN raw_network_url IS NOT NULL AND (NOT ef_valid_host(ef_host(raw_network_url)) OR strpos(ef_path(raw_network_url), '/') = 0)
            THEN 'network_url "' || raw_network_url || '" is not a profile address'
        END AS reject_reason
      FROM staged`);
    await connection.run(`
      CREATE TABLE rejects AS
        SELECT row_number, reason, record FROM src_rejects
        UNION ALL
        SELECT row_number, reject_reason, record FROM normalised WHERE reject_reason IS NOT NULL`);
    // One key per distinct normalised (name, domain, url, network_url); names compare case-insensitively.
    await connection.run(`
      CREATE TABLE keys AS
        SELECT (row_number() OVER (ORDER BY min(row_number)) - 1)::BIGINT AS key_id,
               first(name_n ORDER BY row_number) AS name, domain_n AS domain, url_n AS url, network_url_n AS network_url,
               lower(name_n) AS name_key
        FROM normalised WHERE reject_reason IS NULL
        GROUP BY lower(name_n), domain_n, url_n, network_url_n`);
    await connection.run(`
      CREATE TABLE rows AS
        SELECT n.row_number, k.key_id, ${columns.map((c) => `n.${sqlIdent(`input_${c}`)}`).join(', ')}
        FROM normalised n JOIN keys k
          ON k.name_key IS NOT DISTINCT FROM lower(n.name_n) AND k.domain IS NOT DISTINCT FROM n.domain_n
         AND k.url IS NOT DISTINCT FROM n.url_n AND k.network_url IS NOT DISTINCT FROM n.network_url_n
        WHERE n.reject_reason IS NULL ORDER BY n.row_number`);
  }
  const [counts] = await queryRows<{ input_rows: number; rejected: number; keys: number }>(
    connection,
    `SELECT (SELECT count(*) FROM rows) + (SELECT count(*) FROM rejects) AS input_rows,
            (SELECT count(*) FROM rejects) AS rejected, (SELECT count(*) FROM keys) AS keys`,
  );
  if (!counts || Number(counts.input_rows) === 0) {
    throw new InputFileError('EMPTY', spec.location, 'the file has no data rows');
  }
  return {
    inputRows: Number(counts.input_rows),
    rejectedRows: Number(counts.rejected),
    uniqueKeys: Number(counts.keys),
    idsProvided,
    mapping,
  };
}
