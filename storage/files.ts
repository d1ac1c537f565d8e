// Where a data file lives (a local path or an object in a store) and the helpers that bring one to
// local disk for DuckDB, which reads local files only (its S3 extension cannot be installed offline).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ObjectStore } from './object-store.js';

/** A file on local disk or an object in a store. */
export type FileLocation = { path: string } | { store: ObjectStore; key: string };

/** The location as a user would write it: a path, `s3://bucket/key` or `file:///…`. */
export function describeLocation(location: FileLocation): string {
  if ('path' in location) return location.path;
  return `${location.store.url.replace(/\/$/, '')}/${location.key}`;
}

/** A fresh scratch folder under `tempDir` (the OS temp folder by default); the caller removes it. */
export function makeScratchDir(tempDir?: string): Promise<string> {
  return mkdtemp(path.join(tempDir ?? tmpdir(), 'enrichflow-'));
}

/**
 * Runs `use` with a local path holding the file: the path itself, the store's own file when the store
 * is a local folder, or a temporary download that is deleted afterwards.
 */
export async function withLocalCopy<T>(
  location: FileLocation,
  options: { tempDir?: string; signal?: AbortSignal },
  use: (localPath: string) => Promise<T>,
): Promise<T> {
  if ('path' in location) return use(location.path);
  const direct = location.store.localPath(location.key);
  if (direct !== undefined) return use(direct);
  const dir = await makeScratchDir(options.tempDir);
  try {
    const file = path.join(dir, path.basename(location.key) || 'object');
    await location.store.downloadToFile(location.key, file, { signal: options.signal });
    return await use(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A JSON value from DuckDB's JSON conversion as text (strings as they are). */
export function jsonText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** SHA-256 of a file's bytes, hex. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
