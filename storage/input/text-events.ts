// What the CSV and JSON Lines readers share once text is decoded: a push parser turns the text into
// events (records and malformed records) as it arrives; the reader looks at the first events for its
// columns, then every event goes, in order, through the reader's own `handle` into chunks of rows and
// rejects. Only the parser and `handle` differ between the two formats.
import {
  ChunkBuilder,
  DEFAULT_CHUNK_ROWS,
  type InputChunk,
  type InputFile,
  type InputFormat,
  type OpenInputOptions,
} from './input-file.js';
import type { TextSource } from './text-source.js';

/** A parser fed text piece by piece: each call returns the events that text completed. */
export interface PushParser<E> {
  push(text: string): E[];
  /** The events the end of the text completes (a last line without its newline). */
  end(): E[];
}

/** Turns events into rows and rejects, numbering rows as it goes. */
export type EventHandler<E> = (events: E[], chunks: ChunkBuilder) => void;

export class TextEvents<E> {
  private finished = false;
  private constructor(
    private readonly text: TextSource,
    private readonly parser: PushParser<E>,
    private readonly rest: AsyncIterator<string>,
    /** Events parsed and not yet handed on; a reader may drop what it has used (a header). */
    public pending: E[],
  ) {}

  /** Parses the sample, and further until there is a first event or the text ends. */
  static async start<E>(text: TextSource, parser: PushParser<E>): Promise<TextEvents<E>> {
    const events = new TextEvents(
      text,
      parser,
      text.rest()[Symbol.asyncIterator](),
      parser.push(text.sample),
    );
    // The first record may lie beyond the sample (leading blank lines, a huge header).
    while (events.pending.length === 0 && !events.finished) {
      const next = await events.rest.next();
      if (next.done) {
        events.pending = parser.end();
        events.finished = true;
      } else {
        events.pending = parser.push(next.value);
      }
    }
    return events;
  }

  /** The input file whose chunks are every event from the pending ones on, through `handle`. */
  inputFile(
    file: Pick<InputFile, 'name' | 'format' | 'columns' | 'delimiter'> & { format: InputFormat },
    options: OpenInputOptions,
    handle: EventHandler<E>,
  ): InputFile {
    let closed = false;
    const close = async () => {
      closed = true;
      await this.text.close();
    };
    let started = false;
    const chunksOf = (builder: ChunkBuilder) => this.chunksOf(builder, handle, () => closed);
    return {
      ...file,
      rowCount: undefined,
      close,
      async *chunks() {
        if (started) throw new Error(`${file.name}: chunks() can be iterated once`);
        started = true;
        try {
          yield* chunksOf(new ChunkBuilder(options.chunkRows ?? DEFAULT_CHUNK_ROWS));
        } finally {
          await close();
        }
      },
    };
  }

  private async *chunksOf(
    builder: ChunkBuilder,
    handle: EventHandler<E>,
    closed: () => boolean,
  ): AsyncGenerator<InputChunk> {
    handle(this.pending, builder);
    this.pending = [];
    yield* builder.take();
    if (!this.finished) {
      for (;;) {
        if (closed()) return;
        const next = await this.rest.next();
        if (next.done) break;
        handle(this.parser.push(next.value), builder);
        yield* builder.take();
      }
      handle(this.parser.end(), builder);
    }
    builder.cut();
    yield* builder.take();
  }
}
