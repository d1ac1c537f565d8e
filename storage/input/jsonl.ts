// JSON Lines input, parsed in JavaScript as it streams: one object a line, blank lines skipped, a line
// that is not a JSON object (or is over-long) a reject carrying its line number.
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

function textValue(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value === '' ? null : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

type JsonLineEvent =
  | { kind: 'object'; line: number; value: Record<string, unknown>; text: string }
  | { kind: 'bad'; line: number; reason: string; text: string };

/** Splits decoded text into JSON lines, remembering line numbers and skipping over-long lines. */
class JsonLineSplitter {
  private pending = '';
  private line = 1;
  private discarding = false;
  constructor(private readonly maxChars: number) {}

  push(chunk: string, final: boolean): JsonLineEvent[] {
    const events: JsonLineEvent[] = [];
    let text = this.pending + chunk;
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      if (this.discarding) this.discarding = false;
      else this.parseLine(text.slice(start, nl), events);
      this.line += 1;
      start = nl + 1;
    }
    text = text.slice(start);
    if (final) {
      if (!this.discarding && text.length > 0) this.parseLine(text, events);
      this.pending = '';
    } else if (this.discarding) {
      this.pending = '';
    } else if (text.length > this.maxChars) {
      events.push({
        kind: 'bad',
        line: this.line,
        reason: `line is longer than ${this.maxChars} characters`,
        text: text.slice(0, RAW_TEXT_LIMIT),
      });
      this.discarding = true;
      this.pending = '';
    } else {
      this.pending = text;
    }
    return events;
  }

  private parseLine(raw: string, events: JsonLineEvent[]): void {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (text.trim() === '') return;
    if (text.length > this.maxChars) {
      events.push({
        kind: 'bad',
        line: this.line,
        reason: `line is longer than ${this.maxChars} characters`,
        text: text.slice(0, RAW_TEXT_LIMIT),
      });
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      events.push({
        kind: 'bad',
        line: this.line,
        reason: `not valid JSON: ${(error as Error).message}`,
        text,
      });
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      events.push({
        kind: 'bad',
        line: this.line,
        reason: 'not a JSON object',
        text,
      });
      return;
    }
    events.push({ kind: 'object', line: this.line, value: value as Record<string, unknown>, text });
  }
}

export async function openJsonLinesInput(
  text: TextSource,
  name: string,
  options: OpenInputOptions,
): Promise<InputFile> {
  const splitter = new JsonLineSplitter(options.maxRecordChars ?? 1 << 20);
  const events = await TextEvents.start(text, {
    push: (piece) => splitter.push(piece, false),
    end: () => splitter.push('', true),
  });
  const first = events.pending[0];
  if (first === undefined) throw new InputFileError('EMPTY', name, 'holds no records (only blank lines)');
  if (first.kind === 'bad') {
    throw new InputFileError(
      'WRONG_FORMAT',
      name,
      `is not JSON Lines: line ${first.line} is ${first.reason.startsWith('not') ? first.reason : `unreadable (${first.reason})`}`,
    );
  }
  const columnSet = new Set<string>();
  for (const event of events.pending)
    if (event.kind === 'object') for (const key of Object.keys(event.value)) columnSet.add(key);
  const columns = [...columnSet];

  let rowNumber = 0;
  const handle = (batch: JsonLineEvent[], chunks: ChunkBuilder) => {
    for (const event of batch) {
      rowNumber += 1;
      if (event.kind === 'bad') {
        chunks.addReject({ rowNumber, line: event.line, reason: event.reason, text: event.text });
        continue;
      }
      const values: Record<string, string | null> = {};
      for (const [key, value] of Object.entries(event.value)) setValue(values, key, textValue(value));
      chunks.addRow(options.keepRaw ? { rowNumber, values, raw: event.text } : { rowNumber, values });
    }
  };

  return events.inputFile({ name, format: 'jsonl', columns, delimiter: undefined }, options, handle);
}
