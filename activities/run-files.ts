// The files of one run, addressed by keys relative to the run's prefix in its object store.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import type { ObjectStore } from '../storage/object-store.js';
import type { RunLocation } from '../workflows/types.js';

/** Opens the object store behind an output location (`s3://bucket/prefix/` or a local folder). */
export type StoreResolver = (location: string) => { store: ObjectStore; prefix: string };

export class RunFiles {
  readonly root: string;

  constructor(
    readonly store: ObjectStore,
    prefix: string,
    readonly runId: string,
  ) {
    this.root = [prefix.replace(/\/+$/, ''), runId].filter(Boolean).join('/') + '/';
  }

  static open(resolve: StoreResolver, run: RunLocation): RunFiles {
    const { store, prefix } = resolve(run.output);
    return new RunFiles(store, prefix, run.runId);
  }

  key(relative: string): string {
    return this.root + relative;
  }

  /** Where a reader finds the run: `s3://bucket/prefix/run/` or `file:///…/run/`. */
  get url(): string {
    return `${this.store.url.replace(/\/+$/, '')}/${this.root}`;
  }

  async getJson<T>(relative: string): Promise<T> {
    return JSON.parse((await this.store.getBytes(this.key(relative))).toString('utf8')) as T;
  }

  async putJson(relative: string, value: unknown): Promise<void> {
    await this.store.put(this.key(relative), JSON.stringify(value), { contentType: 'application/json' });
  }

  async list(relativePrefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const info of this.store.list(this.key(relativePrefix)))
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
): Promise<string | undefined> {
  if (keys.length === 0) return undefined;
  const out = createWriteStream(target);
  const finished = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
  });
  const limit = pLimit(16);
  let gathered = 0;
  // Back-pressure: when the file's buffer is full, every writer waits for the one drain.
  let drained: Promise<void> | undefined;
  await Promise.all(
    keys.map((key) =>
      limit(async () => {
        const bytes = await files.store.getBytes(files.key(key));
        if (bytes.length > 0) {
          const whole = bytes[bytes.length - 1] === 0x0a ? bytes : Buffer.concat([bytes, Buffer.from('\n')]);
          if (!out.write(whole)) {
            drained ??= once(out, 'drain').then(() => {
              drained = undefined;
            });
            await drained;
          }
        }
        gathered += 1;
        if (gathered % 500 === 0) onProgress?.(gathered);
      }),
    ),
  );
  out.end();
  await finished;
  return target;
}

/**
 * Local copies of run files for DuckDB, in the order of `keys`; a local-folder store's files are read
 * where they are.
 */
export async function downloadAll(
  files: RunFiles,
  keys: readonly string[],
  dir: string,
  onProgress?: (downloaded: number) => void,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const limit = pLimit(16);
  let done = 0;
  return Promise.all(
    keys.map((key, i) =>
      limit(async () => {
        const inPlace = files.store.localPath(files.key(key));
        if (inPlace) return inPlace;
        const local = path.join(dir, `${String(i).padStart(7, '0')}${path.extname(key)}`);
        await files.store.downloadToFile(files.key(key), local);
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
