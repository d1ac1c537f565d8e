// Reads an input file and decides, row by row, what can be matched: columns are mapped to match
// fields (by alias or explicitly), values normalised, unusable rows rejected with a reason, and
// identical match keys collapsed so each is sent to the service once. One streamed pass in JavaScript
// writes the planned rows and rejects (CSV) and the keys (JSON lines, the plan files' items) to a
// scratch folder, keys deduplicated by a `KeyIndex` whose memory does not grow with key length; DuckDB
// reads each file once, when a table is written. Memory stays flat whatever the size of the file.
// (Until this pass, DuckDB SQL did all of it: 65k rows/s and 715 MB peak for a million rows.)
// Here: the pass itself; `match-keys.ts` maps columns and normalises values, `plan-files.ts` writes
// the files and the DuckDB views over them.
import type { DuckDBConnection } from '@duckdb/node-api';
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import type { FileLocation } from './files.js';
import { InputFileError, openInputFile } from './input/index.js';
import {
  employerDatasets,
  isPeopleDataset,
  MATCH_FIELDS,
  PROSPECT_MATCH_FIELDS,
  type EnrichDataset,
  type InputSpec,
} from '../pipeline/run-types.js';
import { KeyIndex } from './key-index.js';
import {
  BUSINESS_ID,
  cleanValue,
  dedupKeyOf,
  detectFormat,
  lowerSimple,
  mapColumns,
  matchKeyOf,
  type ColumnMapping,
} from './match-keys.js';
import { PROSPECT_ID, prospectDedupKeyOf, prospectKeyOf } from './people-keys.js';
import { PlanFiles } from './plan-files.js';

export { InputFileError } from './input/index.js';
// Names importers have used from this module since before the split.
export { COLUMN_ALIASES, detectFormat, mapColumns, type ColumnMapping } from './match-keys.js';
export { planLines } from './plan-files.js';

export interface PlannedInput {
  inputRows: number;
  rejectedRows: number;
  uniqueKeys: number;
  idsProvided: boolean;
  /** Companies, or people (rows matched to prospects). */
  entity: 'businesses' | 'prospects';
  mapping: ColumnMapping;
  /**
   * The keys, one JSON object a line in key_id order: `{"key_id":"0","name":…,"domain":…,"url":…,
   * "network_url":…}` (the items of match plan files), or `{"business_id":…}` when ids are provided;
   * for people `{"key_id":…,"full_name":…,"company_name":…,"email":…,"phone_number":…,"network":…}`
   * or `{"prospect_id":…}`.
   */
  keysFile: string;
}

export interface PlanInputOptions {
  /** Scratch folder for the reader and the plan's files; it must outlive the tables planned. */
  tempDir: string;
  /** Called with the number of records read so far (for heartbeats). */
  onProgress?: (records: number) => void;
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
    // Rejects keep their record as the file had it.
    keepRaw: true,
  });
  const dir = await mkdtemp(path.join(options.tempDir, 'plan-'));
  const columns = [...input.columns];
  const out = new PlanFiles(dir, columns);
  const index = new KeyIndex(path.join(dir, 'keys.bin'));
  let mapping: ColumnMapping;
  let idsProvided: boolean;
  try {
    mapping = mapColumns(spec.location, columns, spec.columns, spec.entity);
    const { fields } = mapping;
    const people = mapping.entity === 'prospects';
    const idColumn = people ? fields.prospect_id : fields.business_id;
    idsProvided = idColumn !== undefined;
    const [nameColumn, domainColumn, urlColumn, networkColumn] = MATCH_FIELDS.map((f) => fields[f]);
    const [fullNameColumn, companyColumn, emailColumn, phoneColumn, profileColumn] =
      PROSPECT_MATCH_FIELDS.map((f) => fields[f]);
    const pick = (values: Record<string, string | null>, column: string | undefined) =>
      column === undefined ? null : cleanValue(values[column]);
    const idName = people ? 'prospect_id' : 'business_id';
    const idPattern = people ? PROSPECT_ID : BUSINESS_ID;
    const idLength = people ? 40 : 32;
    // A people list's `business_id` is the person's employer: checked like a company list's ids.
    const employerColumn = people ? fields.business_id : undefined;

    let seen = 0;
    for await (const chunk of input.chunks()) {
      // Rows and malformed records come apart; write rejects in row order.
      let malformed = 0;
      const rejectMalformedBefore = (rowNumber: number) => {
        for (; malformed < chunk.rejects.length; malformed++) {
          const reject = chunk.rejects[malformed]!;
          if (reject.rowNumber > rowNumber) return;
          out.addReject(
            reject.rowNumber,
            `malformed record${reject.line !== undefined ? ` at line ${reject.line}` : ''}: ${reject.reason}`,
            reject.text ?? null,
          );
        }
      };
      for (const { rowNumber, values, raw: recordText } of chunk.rows) {
        rejectMalformedBefore(rowNumber);
        if (employerColumn !== undefined) {
          const employer = pick(values, employerColumn);
          if (employer !== null && !BUSINESS_ID.test(lowerSimple(employer))) {
            out.addReject(
              rowNumber,
              `business_id (the employer) "${employer}" is not a 32-character hexadecimal id`,
              recordText ?? out.recordOf(values),
            );
            continue;
          }
        }
        if (idColumn !== undefined) {
          const raw = pick(values, idColumn);
          const id = raw === null ? null : lowerSimple(raw);
          if (id === null) out.addReject(rowNumber, `${idName} is empty`, recordText ?? out.recordOf(values));
          else if (!idPattern.test(id))
            out.addReject(
              rowNumber,
              `${idName} "${id}" is not a ${idLength}-character hexadecimal id`,
              recordText ?? out.recordOf(values),
            );
          else {
            const known = index.size;
            if (index.id(id) === known) {
              if (people) out.addProspectId(id);
              else out.addBusinessId(id);
            }
            out.addRow(rowNumber, `"${id}"`, values);
          }
          continue;
        }
        if (people) {
          const key = prospectKeyOf(
            pick(values, fullNameColumn),
            pick(values, companyColumn),
            pick(values, emailColumn),
            pick(values, phoneColumn),
            pick(values, profileColumn),
          );
          if ('reject' in key) {
            out.addReject(rowNumber, key.reject, recordText ?? out.recordOf(values));
            continue;
          }
          const known = index.size;
          const id = index.id(prospectDedupKeyOf(key));
          if (id === known) out.addProspectKey(id, key);
          out.addRow(rowNumber, String(id), values);
          continue;
        }
        const key = matchKeyOf(
          pick(values, nameColumn),
          pick(values, domainColumn),
          pick(values, urlColumn),
          pick(values, networkColumn),
        );
        if ('reject' in key) {
          out.addReject(rowNumber, key.reject, recordText ?? out.recordOf(values));
          continue;
        }
        // Names compare case-insensitively; the key keeps the first row's spelling.
        const known = index.size;
        const id = index.id(dedupKeyOf(key));
        if (id === known) out.addMatchKey(id, key);
        out.addRow(rowNumber, String(id), values);
      }
      rejectMalformedBefore(Number.POSITIVE_INFINITY);
      seen += chunk.rows.length + chunk.rejects.length;
      options.onProgress?.(seen);
    }
  } finally {
    out.close();
    index.close();
    await input.close();
  }
  const inputRows = out.inputRows;
  if (inputRows === 0) throw new InputFileError('EMPTY', spec.location, 'the file has no data rows');
  const entity = mapping.entity ?? 'businesses';
  await out.createViews(connection, idsProvided, entity);
  return {
    inputRows,
    rejectedRows: out.rejectedRows,
    uniqueKeys: out.uniqueKeys,
    idsProvided,
    entity,
    mapping,
    keysFile: out.keysFile,
  };
}

/**
 * Whether a planned input can feed the run's datasets: a company list takes no people dataset, and a
 * people list naming business datasets (its employers') needs each person's business id, from the
 * profiles or from a `business_id` column. The run and its dry run fail with the same words.
 */
export function checkRunDatasets(
  location: string,
  datasets: readonly EnrichDataset[],
  planned: Pick<PlannedInput, 'entity' | 'mapping'>,
): void {
  if (planned.entity !== 'prospects') {
    const people = datasets.filter(isPeopleDataset);
    if (people.length > 0)
      throw new InputFileError(
        'WRONG_ENTITY',
        location,
        `lists companies, but ${people.join(', ')} enrich people; pass --entity prospects (and --map for its email, phone_number, network or full_name and company_name columns)`,
      );
    return;
  }
  const employers = employerDatasets(datasets, planned.entity);
  if (employers.length > 0 && !datasets.includes('profiles') && !planned.mapping.fields.business_id)
    throw new InputFileError(
      'NO_EMPLOYER',
      location,
      `lists people; ${employers.join(', ')} enrich their employers, whose business ids come from the profiles or from a business_id column: add profiles to the datasets, or map the employer column (--map business_id=<column>)`,
    );
}
