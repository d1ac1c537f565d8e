// The files of one run, addressed by keys relative to the run's prefix in its object store. A signal
// given when the run's files are opened (or to one call) reaches every request, stream and copy below.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import type { ObjectStore, TransferOptions } from './object-store.js';
import type { RunLocation } from '../pipeline/run-types.js';

/** Opens the object store behind an output location (`s3://bucket/prefix/` or a local folder). */
export type StoreResolver = (location: string) => { store: ObjectStore; prefix: string };

export class RunFiles {
  readonly root: string;
  /** Aborts every operation on these files that is not given a signal of its own. */
  readonly signal: AbortSignal | undefined;

  constructor(
    readonly store: ObjectStore,
    prefix: string,
    readonly runId: string,
    options: TransferOptions = {},
  ) {
    this.root = [prefix.replace(/\/+$/, ''), runId].filter(Boolean).join('/') + '/';
    this.signal = options.signal;
  }

  static open(resolve: StoreResolver, run: RunLocation, options: TransferOptions = {}): RunFiles {
    const { store, prefix } = resolve(run.output);
    return new RunFiles(store, prefix, run.runId, options);
  }

  /** The signal an operation runs under: its own, else the one these files were opened with. */
  signalFor(options: TransferOptions = {}): TransferOptions {
    return { signal: options.signal ?? this.signal };
  }

  key(relative: string): string {
    return this.root + relative;
  }

  /** Where a reader finds the run: `s3://bucket/prefix/run/` or `file:///…/run/`. */
  get url(): string {
    return `${this.store.url.replace(/\/+$/, '')}/${this.root}`;
  }

  async getJson<T>(relative: string, options?: TransferOptions): Promise<T> {
    const bytes = await this.store.getBytes(this.key(relative), this.signalFor(options));
    return JSON.parse(bytes.toString('utf8')) as T;
  }

  async putJson(relative: string, value: unknown, options?: TransferOptions): Promise<void> {
    await this.store.put(this.key(relative), JSON.stringify(value), {
      contentType: 'application/json',
      ...this.signalFor(options),
    });
  }

  async list(relativePrefix: string, options?: TransferOptions): Promise<string[]> {
    const keys: string[] = [];
    for await (const info of this.store.list(this.key(relativePrefix), this.signalFor(options)))
      keys.push(info.key.slice(this.root.length));
    return keys;
  }
}

/**
 * Concatenates many small JSON-lines objects of a run into one local file, in no particular order
 * (undefined when there are none). DuckDB gives every file of a `read_json` list its own buffers, so
 * thousands of batch files cost far more time and memory than one file of the same lines.
 */
export async function gatherLines(
  files: RunFiles,
  keys: readonly string[],
  target: string,
  onProgress?: (gathered: number) => void,
  options?: TransferOptions,
): Promise<string | undefined> {
  if (keys.length === 0) return undefined;
  let opened = false;
  const only = () => {
    opened = true;
    return target;
  };
  await appendFiles(files, keys, only, Infinity, onProgress, files.signalFor(options).signal);
  // Only empty objects: the target is still there, empty.
  if (!opened) await (await open(target, 'w')).close();
  return target;
}

/**
 * Like `gatherLines`, into files of about `partBytes` each (`<dir>/part-00000.jsonl`, …; none when there
 * are no keys). DuckDB's JSON reader holds more memory for one large file than for a few smaller ones:
 * 100,000 firmographics results (94 MB) cost +52 MB to write as Parquet from one file, +26 MB from
 * 20 files of ~5 MB, at the same speed.
 */
export async function gatherLineParts(
  files: RunFiles,
  keys: readonly string[],
  dir: string,
  partBytes: number,
  onProgress?: (gathered: number) => void,
  options?: TransferOptions,
): Promise<string[]> {
  if (keys.length === 0) return [];
  const { signal } = files.signalFor(options);
  signal?.throwIfAborted();
  await mkdir(dir, { recursive: true });
  const parts: string[] = [];
  await appendFiles(
    files,
    keys,
    () => {
      const part = path.join(dir, `part-${String(parts.length).padStart(5, '0')}.jsonl`);
      parts.push(part);
      return part;
    },
    partBytes,
    onProgress,
    signal,
  );
  return parts;
}

/** Appends the objects of `keys` to files from `nextFile`, a new one once `partBytes` are written. */
async function appendFiles(
  files: RunFiles,
  keys: readonly string[],
  nextFile: () => string,
  partBytes: number,
  onProgress: ((gathered: number) => void) | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  signal?.throwIfAborted();
  const inPlace = keys.map((key) => files.store.localPath(files.key(key)));
  if (inPlace.every((file): file is string => file !== undefined)) {
    await appendLocal(inPlace, nextFile, partBytes, onProgress, signal);
    return;
  }
  const out = new PartWriter(nextFile, partBytes);
  const limit = pLimit(16);
  let gathered = 0;
  try {
    await Promise.all(
      keys.map((key) =>
        limit(async () => {
          // Queued behind the limit, a key is not fetched once the signal has fired.
          signal?.throwIfAborted();
          const bytes = await files.store.getBytes(files.key(key), { signal });
          await out.append(bytes, bytes.length);
          if (++gathered % 500 === 0) onProgress?.(gathered);
        }),
      ),
    );
  } finally {
    await out.close();
  }
}

/**
 * `appendFiles` for a local-folder store: eight files read at a time, each through a buffer of its
 * own that is reused for the next file, and appended in turn. Reading each into a fresh Buffer (as for
 * S3) leaves about the table's size of dead Buffers for V8 to collect whenever it gets to it, on top of
 * the DuckDB session that comes next.
 */
async function appendLocal(
  sources: readonly string[],
  nextFile: () => string,
  partBytes: number,
  onProgress: ((gathered: number) => void) | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  const out = new PartWriter(nextFile, partBytes);
  let next = 0;
  let gathered = 0;
  const reader = async () => {
    let buffer = Buffer.allocUnsafe(256 * 1024);
    while (next < sources.length) {
      const source = sources[next++]!;
      const input = await open(source, 'r');
      let length = 0;
      try {
        for (;;) {
          // File handles take no signal: look between reads.
          signal?.throwIfAborted();
          if (length === buffer.length) {
            const larger = Buffer.allocUnsafe(buffer.length * 2);
            buffer.copy(larger, 0, 0, length);
            buffer = larger;
          }
          const { bytesRead } = await input.read(buffer, length, buffer.length - length, null);
          if (bytesRead === 0) break;
          length += bytesRead;
        }
      } finally {
        await input.close();
      }
      // The buffer is free again once its file's lines are written.
      await out.append(buffer, length);
      if (++gathered % 500 === 0) onProgress?.(gathered);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(8, sources.length) }, reader));
  } finally {
    await out.close();
  }
}

/** Appends whole objects, one after another, to a file; a new file from `nextFile` past `partBytes`. */
class PartWriter {
  private handle: FileHandle | undefined;
  private written = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly nextFile: () => string,
    private readonly partBytes: number,
  ) {}

  /** Resolves once `bytes[0, length)` (and a newline, when they lack one) are written. */
  append(bytes: Buffer, length: number): Promise<void> {
    if (length === 0) return Promise.resolve();
    const write = this.queue.then(async () => {
      if (!this.handle || this.written >= this.partBytes) {
        await this.handle?.close();
        this.handle = await open(this.nextFile(), 'w');
        this.written = 0;
      }
      await this.handle.write(bytes, 0, length);
      this.written += length;
      if (bytes[length - 1] !== 0x0a) {
        await this.handle.write(NEWLINE);
        this.written += 1;
      }
    });
    this.queue = write.catch(() => undefined);
    return write;
  }

  async close(): Promise<void> {
    await this.queue;
    await this.handle?.close();
    this.handle = undefined;
  }
}

const NEWLINE = Buffer.from('\n');

/**
 * Local copies of run files for DuckDB, in the order of `keys`; a local-folder store's files are read
 * where they are.
 */
export async function downloadAll(
  files: RunFiles,
  keys: readonly string[],
  dir: string,
  onProgress?: (downloaded: number) => void,
  options?: TransferOptions,
): Promise<string[]> {
  const { signal } = files.signalFor(options);
  signal?.throwIfAborted();
  await mkdir(dir, { recursive: true });
  const limit = pLimit(16);
  let done = 0;
  return Promise.all(
    keys.map((key, i) =>
      limit(async () => {
        const inPlace = files.store.localPath(files.key(key));
        if (inPlace) return inPlace;
        signal?.throwIfAborted();
        const local = path.join(dir, `${String(i).padStart(7, '0')}${path.extname(key)}`);
        await files.store.downloadToFile(files.key(key), local, { signal });
        if (++done % 200 === 0) onProgress?.(done);
        return local;
      }),
    ),
  );
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
