// Turns a location the user typed (`s3://bucket/prefix/`, `file:///dir`, `./out/`) into a store and
// the key or prefix inside it. Connection settings come from the caller (the config module).
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalObjectStore } from './local-store.js';
import { assertObjectPrefix, type ObjectStore } from './object-store.js';
import { S3ObjectStore, type S3ConnectionOptions } from './s3-store.js';

/** Thrown when a location is neither an `s3://` URL, a `file://` URL nor a local path. */
export class InvalidLocationError extends Error {
  override readonly name = 'InvalidLocationError';
  readonly code = 'INVALID_LOCATION';
}

/**
 * Kernel file systems: files there are not data, and some operations on them never return (a recursive
 * mkdir under /proc loops forever in libuv's thread pool), so they are refused up front.
 */
const VIRTUAL_FILE_SYSTEMS = ['/proc', '/sys', '/dev'];

export interface OpenObjectStoreOptions {
  /** Used for `s3://` locations. */
  s3?: S3ConnectionOptions;
  /** Part size of S3 multipart uploads, bytes. */
  partSizeBytes?: number;
}

export interface OpenedLocation {
  store: ObjectStore;
  /**
   * The key part of the location: a prefix for a folder-like location (`runs/` — ends with `/`, or
   * empty for the root), the object's key for a location naming one object (`in/companies.csv`).
   */
  prefix: string;
  /** The location as given, for messages. */
  location: string;
}

/**
 * Opens a location. For S3 the store is the bucket and `prefix` the rest. For a local path the store
 * is rooted at the folder itself when the path ends with `/` or is an existing folder (prefix `''`),
 * otherwise at its parent folder (prefix = the file name), so a store never reaches above what the
 * user named.
 */
export function openObjectStore(location: string, options: OpenObjectStoreOptions = {}): OpenedLocation {
  if (location.startsWith('s3://')) {
    const rest = location.slice('s3://'.length);
    const slash = rest.indexOf('/');
    const bucket = slash < 0 ? rest : rest.slice(0, slash);
    const prefix = slash < 0 ? '' : rest.slice(slash + 1);
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
      throw new InvalidLocationError(`${location}: "${bucket}" is not a valid S3 bucket name`);
    }
    checkPrefix(location, prefix);
    const store = new S3ObjectStore({ bucket, connection: options.s3, partSizeBytes: options.partSizeBytes });
    return { store, prefix, location };
  }
  let localPath: string;
  if (location.startsWith('file:')) {
    try {
      localPath = fileURLToPath(location);
    } catch (error) {
      throw new InvalidLocationError(`${location}: not a valid file URL (${(error as Error).message})`);
    }
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
    throw new InvalidLocationError(
      `${location}: unsupported scheme; use s3://bucket/prefix, file:///path or a path`,
    );
  } else {
    localPath = location;
  }
  if (localPath === '') throw new InvalidLocationError('empty location');
  const resolved = path.resolve(localPath);
  const virtual = VIRTUAL_FILE_SYSTEMS.find((root) => resolved === root || resolved.startsWith(`${root}/`));
  if (virtual && !resolved.startsWith('/dev/shm/')) {
    throw new InvalidLocationError(
      `${location}: ${virtual} is a virtual file system, not a place to read inputs or write tables`,
    );
  }
  const namesFolder = /[/\\]$/.test(localPath) || isDirectory(resolved);
  if (namesFolder) return { store: new LocalObjectStore(resolved), prefix: '', location };
  return { store: new LocalObjectStore(path.dirname(resolved)), prefix: path.basename(resolved), location };
}

function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

function checkPrefix(location: string, prefix: string): void {
  try {
    assertObjectPrefix(prefix);
  } catch (error) {
    throw new InvalidLocationError(`${location}: ${(error as Error).message}`);
  }
}
