// CSV input, parsed in JavaScript as it streams: DuckDB's CSV reader numbers rejected lines counting
// blank lines but gives good rows no number, so the two could not be reconciled, and its sniffer fails a
// whole file over one stray quote. A quoted field may span lines, so a reject's `line` and its
// `rowNumber` can differ.
import { CsvParser, sniffCsvDelimiter, type CsvParseOutput } from './csv-parser.js';
import {
  InputFileError,
  type ChunkBuilder,
  RAW_TEXT_LIMIT,
  setValue,
  type InputFile,
  type OpenInputOptions,
} from './input-file.js';
import { TextEvents } from './text-events.js';
import type { TextSource } from './text-source.js';

type CsvEvent =
  | { kind: 'record'; fields: string[]; line: number; raw: string | undefined }
  | { kind: 'malformed'; line: number; reason: string; text: string };

/** The parser reports records and malformed records separately; interleave them by line. */
function eventsByLine(out: CsvParseOutput): CsvEvent[] {
  if (out.malformed.length === 0)
    return out.records.map((r) => ({ kind: 'record', fields: r.fields, line: r.line, raw: r.raw }));
  const events: CsvEvent[] = [
    ...out.records.map((r): CsvEvent => ({ kind: 'record', fields: r.fields, line: r.line, raw: r.raw })),
    ...out.malformed.map((m): CsvEvent => ({
      kind: 'malformed',
      line: m.line,
      reason: m.reason,
      text: m.text,
    })),
  ];
  return events.sort((a, b) => a.line - b.line);
}

/** A record's fields joined again, when its raw text was not kept (at most 2,000 characters). */
function rawRecord(fields: string[], delimiter: string): string {
  const text = fields.join(delimiter);
  return text.length > RAW_TEXT_LIMIT ? text.slice(0, RAW_TEXT_LIMIT) : text;
}

/** Header cells → unique, non-empty column names. */
function columnNames(cells: string[]): string[] {
  const seen = new Map<string, number>();
  return cells.map((cell, index) => {
    const base = cell.trim() || `column_${index + 1}`;
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    return count === 1 ? base : `${base}_${count}`;
  });
}

/**
 * A copy of `value` that does not pin the text it was cut from. V8 represents a substring of 13+
 * characters as a view into its parent, so a caller keeping one value (a domain in a dedup map) would
 * otherwise keep the whole text chunk it came from alive. Prepending forces a flat copy.
 */
function detached(value: string): string {
  return value.length < 13 ? value : (' ' + value).slice(1);
}

export async function openCsvInput(
  text: TextSource,
  name: string,
  options: OpenInputOptions,
): Promise<InputFile> {
  const delimiter = options.delimiter ?? sniffCsvDelimiter(text.sample);
  let parser: CsvParser;
  try {
    parser = new CsvParser({
      delimiter,
      maxRecordChars: options.maxRecordChars,
      keepRaw: options.keepRaw ?? false,
    });
  } catch (error) {
    throw new InputFileError('UNREADABLE', name, (error as Error).message);
  }
  const events = await TextEvents.start(text, {
    push: (piece) => eventsByLine(parser.push(piece)),
    end: () => eventsByLine(parser.end()),
  });
  const first = events.pending[0];
  if (first === undefined)
    throw new InputFileError('EMPTY', name, 'has no header row (the file holds only blank lines)');
  if (first.kind === 'malformed') {
    throw new InputFileError(
      'WRONG_FORMAT',
      name,
      `the header row (line ${first.line}) cannot be read: ${first.reason}`,
    );
  }
  if (first.fields.every((cell) => cell.trim() === '')) {
    throw new InputFileError('NO_HEADER', name, `the header row (line ${first.line}) has no column names`);
  }
  const columns = columnNames(first.fields);
  const width = columns.length;
  events.pending = events.pending.slice(1);

  let rowNumber = 0;
  const handle = (batch: CsvEvent[], chunks: ChunkBuilder) => {
    for (const event of batch) {
      rowNumber += 1;
      if (event.kind === 'malformed') {
        chunks.addReject({ rowNumber, line: event.line, reason: event.reason, text: event.text });
        continue;
      }
      const fields = event.fields;
      // Extra fields that are all empty come from trailing delimiters (common in spreadsheet exports).
      if (fields.length !== width && !(fields.length > width && fields.slice(width).every((f) => f === ''))) {
        chunks.addReject({
          rowNumber,
          line: event.line,
          reason: `expected ${width} fields, found ${fields.length}`,
          text: event.raw ?? rawRecord(fields, delimiter),
        });
        continue;
      }
      const values: Record<string, string | null> = {};
      for (let i = 0; i < width; i++) {
        const value = fields[i];
        setValue(values, columns[i]!, value === undefined || value === '' ? null : detached(value));
      }
      chunks.addRow(event.raw === undefined ? { rowNumber, values } : { rowNumber, values, raw: event.raw });
    }
  };

  return events.inputFile({ name, format: 'csv', columns, delimiter }, options, handle);
}
