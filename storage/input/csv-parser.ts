// Incremental RFC 4180 CSV parsing for the input reader: text in, records out, with the physical line
// each record starts on, so every data row and every malformed record can be numbered exactly.
//
// Lenient where real files are sloppy (a quote inside an unquoted field is kept as text; text after a
// closing quote is appended), strict where data would be lost: a quoted field still open at the end of
// the file, or a record longer than the limit, is reported as malformed and parsing resumes on the
// line after the one it started on, so one stray quote cannot swallow the rest of the file.

/** One parsed record: its fields, the 1-based physical line it starts on, and its raw text. */
export interface CsvRecord {
  fields: string[];
  line: number;
  /** With `keepRaw`: the record as written, quotes and delimiters included, without its line break. */
  raw?: string;
}

/** A record the parser could not delimit; `text` is the start of its raw text (for the rejects file). */
export interface CsvMalformedRecord {
  line: number;
  reason: string;
  text: string;
}

export interface CsvParserOptions {
  /** Field separator, one character. */
  delimiter: string;
  /** Longest record, in characters, before it counts as malformed (runaway quote); default 1 MiB. */
  maxRecordChars?: number;
  /** Give each record its raw text (`raw`). */
  keepRaw?: boolean;
}

export interface CsvParseOutput {
  records: CsvRecord[];
  malformed: CsvMalformedRecord[];
}

const QUOTE = 34; // "
const LF = 10;
const CR = 13;
const RAW_TEXT_LIMIT = 2_000;

/**
 * Feed decoded text with `push`, then call `end`; each call returns the records completed so far.
 * Blank lines produce no record (they still count for line numbers).
 */
export class CsvParser {
  private readonly delimiter: number;
  private readonly maxRecordChars: number;
  private readonly keepRaw: boolean;
  /** Unparsed text: the tail of the previous chunk from the start of an unfinished record. */
  private pending = '';
  /** Physical line on which `pending` starts. */
  private pendingLine = 1;
  /** The rest of the current physical line belongs to a record already reported as malformed. */
  private discardingLine = false;
  /** The previous chunk ended with a CR that ended a line: a LF opening the next chunk is part of it. */
  private skipLeadingLf = false;

  constructor(options: CsvParserOptions) {
    if (options.delimiter.length !== 1 || options.delimiter === '"' || /[\r\n]/.test(options.delimiter)) {
      throw new TypeError('CSV delimiter must be one character other than a quote or a line break');
    }
    this.delimiter = options.delimiter.charCodeAt(0);
    this.maxRecordChars = options.maxRecordChars ?? 1 << 20;
    this.keepRaw = options.keepRaw ?? false;
  }

  push(text: string): CsvParseOutput {
    return this.parse(text, false);
  }

  end(): CsvParseOutput {
    return this.parse('', true);
  }

  private parse(chunk: string, final: boolean): CsvParseOutput {
    const out: CsvParseOutput = { records: [], malformed: [] };
    const text = this.pending.length > 0 ? this.pending + chunk : chunk;
    const n = text.length;
    let pos = 0;
    let line = this.pendingLine;
    if (this.skipLeadingLf) {
      if (n > 0 && text.charCodeAt(0) === LF) pos = 1;
      if (n > 0) this.skipLeadingLf = false;
    }
    if (this.discardingLine) pos = this.skipRestOfLine(text, pos);
    while (pos < n && !this.discardingLine) {
      const result = this.parseRecord(text, pos, final);
      if (result === undefined) break; // incomplete: wait for more text
      if (result.kind === 'runaway') {
        const lineEnd = findLineBreak(text, pos);
        out.malformed.push({
          line,
          reason: result.reason,
          text: text.slice(pos, Math.min(lineEnd < 0 ? n : lineEnd, pos + RAW_TEXT_LIMIT)),
        });
        // Resume on the line after the one the record started on.
        line += 1;
        this.discardingLine = true;
        pos = this.skipRestOfLine(text, pos);
        continue;
      }
      const { fields, end, newlines } = result;
      const blankLine = fields.length === 1 && fields[0] === '' && end - pos <= 2;
      if (!blankLine && !this.keepRaw) out.records.push({ fields, line });
      else if (!blankLine) {
        let rawEnd = end;
        if (rawEnd > pos && text.charCodeAt(rawEnd - 1) === LF) rawEnd -= 1;
        if (rawEnd > pos && text.charCodeAt(rawEnd - 1) === CR) rawEnd -= 1;
        out.records.push({ fields, line, raw: text.slice(pos, rawEnd) });
      }
      line += newlines;
      pos = end;
    }
    this.pending = pos < n && !this.discardingLine ? text.slice(pos) : '';
    this.pendingLine = line;
    return out;
  }

  /** Skips to the start of the next physical line; keeps `discardingLine` set if the text ends first. */
  private skipRestOfLine(text: string, from: number): number {
    const brk = findLineBreak(text, from);
    if (brk < 0) return text.length;
    this.discardingLine = false;
    if (text.charCodeAt(brk) === CR) {
      if (brk + 1 >= text.length) {
        this.skipLeadingLf = true;
        return text.length;
      }
      return text.charCodeAt(brk + 1) === LF ? brk + 2 : brk + 1;
    }
    return brk + 1;
  }

  /**
   * Parses one record starting at `start`. Returns undefined when the text ends before the record does
   * (and more may come), or a runaway marker when the record can't be delimited within the limits.
   */
  private parseRecord(text: string, start: number, final: boolean): ParsedRecord | Runaway | undefined {
    const delimiter = this.delimiter;
    const n = text.length;
    const limit = start + this.maxRecordChars;
    const fields: string[] = [];
    let newlines = 0;
    let i = start;
    for (;;) {
      // At the start of a field.
      let c = i < n ? text.charCodeAt(i) : -1;
      if (c === QUOTE) {
        // Quoted field: find the closing quote, unescaping "" on the way.
        let value = '';
        let segment = i + 1;
        let j = i + 1;
        for (;;) {
          const q = text.indexOf('"', j);
          if (q < 0 || q >= limit) {
            if (q < 0 && n < limit && !final) return undefined;
            return {
              kind: 'runaway',
              reason:
                q < 0 && n < limit
                  ? 'a quoted field is not closed before the end of the file'
                  : `record is longer than ${this.maxRecordChars} characters (is a quoted field left open?)`,
            };
          }
          newlines += countLineBreaks(text, j, q);
          if (q + 1 >= n && !final) return undefined; // can't tell "" from a closing quote yet
          if (text.charCodeAt(q + 1) === QUOTE) {
            value += text.slice(segment, q + 1);
            segment = q + 2;
            j = q + 2;
            continue;
          }
          value += text.slice(segment, q);
          i = q + 1;
          break;
        }
        // After the closing quote comes a delimiter or a line end; stray text is kept as part of the value.
        const k = this.fieldEnd(text, i);
        if (k > i) {
          if (k >= n && !final) return k >= limit ? this.tooLong() : undefined;
          value += text.slice(i, k);
          i = k;
        }
        fields.push(value);
      } else {
        const k = this.fieldEnd(text, i);
        if (k >= n && !final) return k >= limit ? this.tooLong() : undefined;
        fields.push(text.slice(i, k));
        i = k;
      }
      // After a field.
      if (i >= n) {
        if (!final) return undefined;
        return { kind: 'record', fields, end: n, newlines };
      }
      c = text.charCodeAt(i);
      if (c === delimiter) {
        i++;
        continue;
      }
      if (c === LF) return { kind: 'record', fields, end: i + 1, newlines: newlines + 1 };
      // CR: a CRLF pair or a lone CR both end the record.
      if (i + 1 >= n && !final) return undefined;
      const end = text.charCodeAt(i + 1) === LF ? i + 2 : i + 1;
      return { kind: 'record', fields, end, newlines: newlines + 1 };
    }
  }

  /** Index of the delimiter or line break ending an unquoted stretch that starts at `from`. */
  private fieldEnd(text: string, from: number): number {
    const delimiter = this.delimiter;
    let k = from;
    const n = text.length;
    while (k < n) {
      const d = text.charCodeAt(k);
      if (d === delimiter || d === LF || d === CR) break;
      k++;
    }
    return k;
  }

  private tooLong(): Runaway {
    return { kind: 'runaway', reason: `record is longer than ${this.maxRecordChars} characters` };
  }
}

interface ParsedRecord {
  kind: 'record';
  fields: string[];
  /** Index just past the record's line break. */
  end: number;
  /** Physical line breaks consumed, including the one ending the record. */
  newlines: number;
}

interface Runaway {
  kind: 'runaway';
  reason: string;
}

/** Line breaks (LF, CRLF or lone CR) in text[from, to). */
function countLineBreaks(text: string, from: number, to: number): number {
  let count = 0;
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k);
    if (c === LF) count++;
    else if (c === CR && text.charCodeAt(k + 1) !== LF) count++;
  }
  return count;
}

/** Index of the first CR or LF at or after `from`, or -1. */
function findLineBreak(text: string, from: number): number {
  for (let k = from; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c === LF || c === CR) return k;
  }
  return -1;
}

const DELIMITER_CANDIDATES = [',', ';', '\t', '|'];
const SNIFF_RECORDS = 200;

/**
 * Picks the delimiter of a CSV sample (its first kilobytes): the candidate that splits the first record
 * into the most fields while the following records agree with it. A comma when nothing splits.
 */
export function sniffCsvDelimiter(sample: string): string {
  let best = ',';
  let bestScore = 0;
  // The first 200 records are judged: cut the sample after its 201st line, so that each candidate
  // parses those rather than all 64 KiB (four parses of the whole sample cost ~35 ms an open).
  let cut = -1;
  for (let lines = 0; lines < SNIFF_RECORDS + 1; lines++) {
    cut = sample.indexOf('\n', cut + 1);
    if (cut < 0) break;
  }
  if (cut >= 0) sample = sample.slice(0, cut + 1);
  for (const candidate of DELIMITER_CANDIDATES) {
    const parser = new CsvParser({ delimiter: candidate, maxRecordChars: sample.length + 1 });
    // The sample may end mid-record: only records `push` completed are judged.
    const records = parser.push(sample).records.slice(0, SNIFF_RECORDS);
    const header = records[0];
    if (!header || header.fields.length < 2) continue;
    const width = header.fields.length;
    const rest = records.slice(1);
    const agreeing = rest.filter((r) => r.fields.length === width).length;
    const consistency = rest.length === 0 ? 1 : agreeing / rest.length;
    // Consistency first, then width: "a;b" split by ',' gives 1 field and is skipped above.
    const score = consistency * 1000 + Math.min(width, 999);
    if (score > bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}
