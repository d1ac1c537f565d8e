// The files of one run, addressed by keys relative to the run's prefix in its object store.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
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

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
