// ObjectStore over a local folder: keys are paths under the root. Whole-object writes go to a
// temporary name in the same folder and are renamed into place, so readers never see a partial file.
// Unlike S3, a key cannot be both an object and a folder of other objects (`a` and `a/b`). Copies go
// through streams rather than `copyFile`, which cannot be interrupted, so an abort stops them midway.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import {
  assertObjectKey,
  assertObjectPrefix,
  destroyOnAbort,
  ObjectNotFoundError,
  ObjectStoreError,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type TransferOptions,
} from './object-store.js';

/** Temporary names carry this marker; listings skip them. */
const TEMP_MARKER = '.enrichflow-tmp-';

function tempNameFor(file: string): string {
  return path.join(
    path.dirname(file),
    `.${path.basename(file)}${TEMP_MARKER}${randomBytes(6).toString('hex')}`,
  );
}

function isTempName(name: string): boolean {
  return name.startsWith('.') && name.includes(TEMP_MARKER);
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Writes a file atomically: `write` fills a temporary sibling, which is then renamed over `file`.
 * The temporary file is removed when `write` fails. The folder, the rename and the clean-up are
 * synchronous calls (microseconds each): a run writes thousands of small result files, and a promise
 * for each open, write, close and rename cost more of the worker's event loop than the writes (2.3 s of
 * CPU in a 50,000-row people run); `write` itself may be synchronous for a small body.
 */
export async function writeFileAtomically(
  file: string,
  write: (tempPath: string) => void | Promise<void>,
  /** False when `write` cannot run twice (it consumes a stream): the folder is then made every time. */
  rerunnable = true,
): Promise<void> {
  const dir = path.dirname(file);
  if (rerunnable) ensureDir(dir);
  else mkdirSync(dir, { recursive: true });
  const temp = tempNameFor(file);
  try {
    try {
      await write(temp);
    } catch (error) {
      // The folder was removed since it was made (a run deleted, a test's scratch): make it again.
      if (!rerunnable || errnoCode(error) !== 'ENOENT') throw error;
      madeDirs.delete(dir);
      ensureDir(dir);
      await write(temp);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** Bodies up to this many bytes (or characters) are written synchronously. */
const SMALL_WRITE = 1 << 20;

// Folders this process made: a run writes thousands of result files into a few folders, and a
// recursive mkdir before each write cost more CPU than the write (1.5 s of a 50,000-row people run).
const madeDirs = new Set<string>();
const MADE_DIRS_KEPT = 4_096;

function ensureDir(dir: string): void {
  if (madeDirs.has(dir)) return;
  mkdirSync(dir, { recursive: true });
  if (madeDirs.size >= MADE_DIRS_KEPT) madeDirs.clear();
  madeDirs.add(dir);
}

/** Copies a file through streams (1 MiB pieces), stopping when `signal` fires. */
function copyStreaming(source: string, target: string, signal: AbortSignal | undefined): Promise<void> {
  return pipeline(createReadStream(source, { highWaterMark: 1 << 20 }), createWriteStream(target), {
    signal,
  });
}

export class LocalObjectStore implements ObjectStore {
  readonly root: string;
  readonly url: string;

  constructor(root: string) {
    this.root = path.resolve(root);
    this.url = pathToFileURL(this.root).href;
  }

  private fileFor(key: string): string {
    assertObjectKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  private where(key: string): string {
    return `${this.url.replace(/\/$/, '')}/${key}`;
  }

  /**
   * Rethrows as an `ObjectStoreError` (`ObjectNotFoundError` for a missing file); once `signal` has
   * fired, as the signal's reason instead (Node's own AbortErrors carry it only as their cause). A
   * write refused with ENOTDIR or EISDIR (a file in the way) keeps its code: the key is not missing,
   * the path cannot be made.
   */
  private wrap(error: unknown, key: string, operation: string, signal?: AbortSignal): never {
    signal?.throwIfAborted();
    const code = errnoCode(error);
    const writing = operation === 'put' || operation === 'putFile';
    if (code === 'ENOENT' || (!writing && (code === 'ENOTDIR' || code === 'EISDIR'))) {
      throw new ObjectNotFoundError(this.where(key), { cause: error });
    }
    if (error instanceof ObjectStoreError) throw error;
    throw new ObjectStoreError(
      `${operation} ${this.where(key)} failed: ${(error as Error).message}`,
      code ?? 'UNKNOWN',
      this.where(key),
      { cause: error },
    );
  }

  async put(key: string, body: Uint8Array | string | Readable, options: PutOptions = {}): Promise<void> {
    const file = this.fileFor(key);
    try {
      const whole = typeof body === 'string' || body instanceof Uint8Array;
      options.signal?.throwIfAborted();
      await writeFileAtomically(
        file,
        (temp) => {
          if (typeof body === 'string' || body instanceof Uint8Array) {
            if (body.length <= SMALL_WRITE) return writeFileSync(temp, body);
            return fs.writeFile(temp, body, { signal: options.signal });
          }
          return pipeline(body, createWriteStream(temp), { signal: options.signal });
        },
        whole,
      );
    } catch (error) {
      if (typeof body !== 'string' && !(body instanceof Uint8Array) && !body.destroyed) body.destroy();
      this.wrap(error, key, 'put', options.signal);
    }
  }

  async putFile(key: string, filePath: string, options: PutOptions = {}): Promise<void> {
    const file = this.fileFor(key);
    try {
      options.signal?.throwIfAborted();
      await writeFileAtomically(file, (temp) => copyStreaming(filePath, temp, options.signal));
    } catch (error) {
      options.signal?.throwIfAborted();
      if (errnoCode(error) === 'ENOENT') {
        throw new ObjectStoreError(`putFile: local file ${filePath} does not exist`, 'ENOENT', filePath, {
          cause: error,
        });
      }
      this.wrap(error, key, 'putFile');
    }
  }

  async getStream(key: string, options: TransferOptions = {}): Promise<Readable> {
    const file = this.fileFor(key);
    try {
      options.signal?.throwIfAborted();
      // Opening first turns a missing file into an error here, not a later stream 'error' event.
      const handle = await fs.open(file, 'r');
      const stat = await handle.stat();
      if (!stat.isFile() || options.signal?.aborted) {
        await handle.close();
        options.signal?.throwIfAborted();
        throw new ObjectNotFoundError(this.where(key));
      }
      return destroyOnAbort(handle.createReadStream({ highWaterMark: 1 << 20 }), options.signal);
    } catch (error) {
      this.wrap(error, key, 'get', options.signal);
    }
  }

  async getBytes(key: string, options: TransferOptions = {}): Promise<Buffer> {
    try {
      return await fs.readFile(this.fileFor(key), { signal: options.signal });
    } catch (error) {
      this.wrap(error, key, 'get', options.signal);
    }
  }

  async downloadToFile(key: string, filePath: string, options: TransferOptions = {}): Promise<void> {
    const source = this.fileFor(key);
    try {
      options.signal?.throwIfAborted();
      await writeFileAtomically(path.resolve(filePath), (temp) =>
        copyStreaming(source, temp, options.signal),
      );
    } catch (error) {
      this.wrap(error, key, 'download', options.signal);
    }
  }

  async head(key: string, options: TransferOptions = {}): Promise<ObjectInfo | undefined> {
    options.signal?.throwIfAborted();
    try {
      const stat = await fs.stat(this.fileFor(key));
      return stat.isFile() ? { key, size: stat.size, lastModified: stat.mtime } : undefined;
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      this.wrap(error, key, 'head');
    }
  }

  async exists(key: string, options: TransferOptions = {}): Promise<boolean> {
    return (await this.head(key, options)) !== undefined;
  }

  async *list(prefix: string, options: TransferOptions = {}): AsyncIterable<ObjectInfo> {
    assertObjectPrefix(prefix);
    const { signal } = options;
    // Walk only the folder the prefix names, then filter by the plain string prefix, as S3 does.
    const slash = prefix.lastIndexOf('/');
    const baseKey = slash >= 0 ? prefix.slice(0, slash) : '';
    const baseDir = baseKey ? path.join(this.root, ...baseKey.split('/')) : this.root;
    const keys: string[] = [];
    const walk = async (dir: string, keyPrefix: string): Promise<void> => {
      signal?.throwIfAborted();
      let entries;
      try {
        entries = await fs.readdir(dir, { withFileTypes: true });
      } catch (error) {
        const code = errnoCode(error);
        if (code === 'ENOENT' || code === 'ENOTDIR') return;
        throw error;
      }
      for (const entry of entries) {
        if (isTempName(entry.name)) continue;
        const key = keyPrefix ? `${keyPrefix}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          // Descend only where the prefix can still match.
          const asDir = `${key}/`;
          if (asDir.startsWith(prefix) || prefix.startsWith(asDir))
            await walk(path.join(dir, entry.name), key);
        } else if (entry.isFile() && key.startsWith(prefix)) {
          keys.push(key);
        }
      }
    };
    await walk(baseDir, baseKey);
    keys.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const key of keys) {
      const info = await this.head(key, options);
      if (info) yield info; // deleted since the walk: skip, as a later S3 page would
    }
  }

  async delete(key: string, options: TransferOptions = {}): Promise<void> {
    const file = this.fileFor(key);
    options.signal?.throwIfAborted();
    try {
      await fs.rm(file, { force: true });
    } catch (error) {
      this.wrap(error, key, 'delete');
    }
    await this.pruneEmptyFolders(path.dirname(file));
  }

  async deletePrefix(prefix: string, options: TransferOptions = {}): Promise<number> {
    if (prefix === '')
      throw new ObjectStoreError('deletePrefix refuses an empty prefix', 'EMPTY_PREFIX', this.url);
    let count = 0;
    for await (const info of this.list(prefix, options)) {
      await this.delete(info.key, options);
      count += 1;
    }
    return count;
  }

  localPath(key: string): string | undefined {
    return this.fileFor(key);
  }

  close(): void {
    // Nothing to release.
  }

  /** S3 has no folders: remove the ones a delete left empty, up to (not including) the root. */
  private async pruneEmptyFolders(dir: string): Promise<void> {
    let current = dir;
    while (current.startsWith(this.root + path.sep)) {
      try {
        await fs.rmdir(current);
      } catch {
        return; // not empty (or already gone): stop climbing
      }
      current = path.dirname(current);
    }
  }
}
