// The files of one run, addressed by keys relative to the run's prefix in its object store. A signal
// given when the run's files are opened (or to one call) reaches every request, stream and copy below.
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, readSync, writeSync } from 'node:fs';
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
 * `appendFiles` for files already on this machine (a local-folder store). They are small (a batch's
 * results, a few to a few hundred KB) and many: read and written with synchronous calls, a few
 * microseconds each, where a promise per open, read, write and close cost ~0.4 ms of the event loop
 * per file (850 match results of a people run: 260-600 ms gathered asynchronously). The loop yields
 * to the event loop every few milliseconds, so heartbeats and other activities' calls go on meanwhile.
 * One buffer, grown as needed, takes every file in turn: a fresh Buffer per file would leave about the
 * table's size of dead Buffers for V8 to collect whenever it gets to it, on top of the DuckDB session
 * that comes next.
 */
async function appendLocal(
  sources: readonly string[],
  nextFile: () => string,
  partBytes: number,
  onProgress: ((gathered: number) => void) | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  let fd: number | undefined;
  let written = 0;
  let buffer = Buffer.allocUnsafe(256 * 1024);
  try {
    let sliceStart = performance.now();
    for (const [i, source] of sources.entries()) {
      if (performance.now() - sliceStart > SYNC_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
      signal?.throwIfAborted();
      let length = 0;
      const input = openSync(source, 'r');
      try {
        for (;;) {
          if (length === buffer.length) {
            const larger = Buffer.allocUnsafe(buffer.length * 2);
            buffer.copy(larger, 0, 0, length);
            buffer = larger;
          }
          const read = readSync(input, buffer, length, buffer.length - length, null);
          if (read === 0) break;
          length += read;
        }
      } finally {
        closeSync(input);
      }
      if (length > 0) {
        if (fd === undefined || written >= partBytes) {
          if (fd !== undefined) closeSync(fd);
          fd = undefined;
          fd = openSync(nextFile(), 'w');
          written = 0;
        }
        written += writeSync(fd, buffer, 0, length);
        if (buffer[length - 1] !== 0x0a) written += writeSync(fd, NEWLINE);
      }
      if ((i + 1) % 500 === 0) onProgress?.(i + 1);
    }
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** How long a synchronous stretch of `appendLocal` runs before it lets the event loop turn. */
const SYNC_SLICE_MS = 5;

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
