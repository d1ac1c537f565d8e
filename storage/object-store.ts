// The object-store seam: the few operations the pipeline needs on S3 or a local folder, behind one
// interface, so activities never see which one they run against.
import type { Readable } from 'node:stream';

/** Metadata of one stored object. */
export interface ObjectInfo {
  key: string;
  /** Bytes. */
  size: number;
  lastModified: Date;
}

/** What every operation that can wait takes (the name is older than the operations beyond transfers). */
export interface TransferOptions {
  /**
   * Aborts the operation: it rejects promptly with the signal's reason, whatever was under way (a request,
   * a stream, a listing), and a write leaves no partial object behind.
   */
  signal?: AbortSignal;
}

export interface PutOptions extends TransferOptions {
  contentType?: string;
}

/**
 * Keys are relative, `/`-separated paths (`runs/acme/firmographics/part-00001.parquet`): no leading
 * `/`, no empty, `.` or `..` segments, at most 1,024 bytes. Both implementations enforce the same rules
 * so that a run that works on a local folder works on S3.
 *
 * Every write of a whole object is atomic from a reader's point of view: a reader sees the old object,
 * no object, or the complete new one — never a partial body.
 */
export interface ObjectStore {
  /** Where the store points, for messages: `s3://bucket` or `file:///abs/dir`. */
  readonly url: string;

  /** Writes a whole object from bytes, text (UTF-8) or a byte stream (streams are sent in parts). */
  put(key: string, body: Uint8Array | string | Readable, options?: PutOptions): Promise<void>;
  /** Writes a local file as an object; large files go up in parts (S3 multipart upload). */
  putFile(key: string, filePath: string, options?: PutOptions): Promise<void>;

  /** The object's bytes as a stream. Throws `ObjectNotFoundError` when it does not exist. */
  getStream(key: string, options?: TransferOptions): Promise<Readable>;
  /** The whole object in memory; for small objects (manifests, markers). */
  getBytes(key: string, options?: TransferOptions): Promise<Buffer>;
  /** Copies the object to a local file, which appears complete or not at all. */
  downloadToFile(key: string, filePath: string, options?: TransferOptions): Promise<void>;

  /** Metadata, or undefined when there is no such object. */
  head(key: string, options?: TransferOptions): Promise<ObjectInfo | undefined>;
  exists(key: string, options?: TransferOptions): Promise<boolean>;
  /** Every object whose key starts with `prefix` (a plain string prefix, as in S3), in key order. */
  list(prefix: string, options?: TransferOptions): AsyncIterable<ObjectInfo>;

  /** Deletes one object; deleting a missing object is not an error. */
  delete(key: string, options?: TransferOptions): Promise<void>;
  /**
   * Deletes every object under `prefix`; returns how many were deleted. An empty prefix is refused.
   * Aborted midway, the objects deleted so far stay deleted.
   */
  deletePrefix(prefix: string, options?: TransferOptions): Promise<number>;

  /**
   * The object's file on this machine when the store is a local folder (so DuckDB can read it in
   * place), otherwise undefined. Reading it is fine; writing must go through the store.
   */
  localPath(key: string): string | undefined;

  /** Releases what the store holds (an S3 client's sockets); the store is unusable afterwards. */
  close(): void;
}

/**
 * Destroys `stream` with the signal's reason when the signal fires, so whoever is reading it rejects with
 * that reason at once instead of waiting on the next bytes.
 */
export function destroyOnAbort<T extends Readable>(stream: T, signal: AbortSignal | undefined): T {
  if (!signal) return stream;
  const onAbort = () => stream.destroy(signal.reason as Error);
  if (signal.aborted) {
    onAbort();
    return stream;
  }
  signal.addEventListener('abort', onAbort, { once: true });
  stream.once('close', () => signal.removeEventListener('abort', onAbort));
  return stream;
}

/** Thrown when an object store operation fails; `code` is the S3 error name or the Node error code. */
export class ObjectStoreError extends Error {
  override readonly name: string = 'ObjectStoreError';
  constructor(
    message: string,
    readonly code: string,
    readonly location: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Thrown when reading an object that does not exist. */
export class ObjectNotFoundError extends ObjectStoreError {
  override readonly name = 'ObjectNotFoundError';
  constructor(location: string, options?: { cause?: unknown }) {
    super(`${location} does not exist`, 'OBJECT_NOT_FOUND', location, options);
  }
}

/** Thrown for a key the stores refuse (absolute, `..`, empty segments, too long). */
export class InvalidObjectKeyError extends ObjectStoreError {
  override readonly name = 'InvalidObjectKeyError';
  constructor(key: string, reason: string) {
    super(`invalid object key ${JSON.stringify(key)}: ${reason}`, 'INVALID_OBJECT_KEY', key);
  }
}

const MAX_KEY_BYTES = 1024;

/** Validates an object key (see `ObjectStore`) and returns it unchanged. */
export function assertObjectKey(key: string): string {
  if (key.length === 0) throw new InvalidObjectKeyError(key, 'empty');
  if (Buffer.byteLength(key) > MAX_KEY_BYTES)
    throw new InvalidObjectKeyError(key, `longer than ${MAX_KEY_BYTES} bytes`);
  if (key.includes('\0')) throw new InvalidObjectKeyError(key, 'contains a NUL character');
  if (key.includes('\\')) throw new InvalidObjectKeyError(key, 'contains a backslash');
  for (const segment of key.split('/')) {
    if (segment === '') throw new InvalidObjectKeyError(key, 'leading, trailing or doubled "/"');
    if (segment === '.' || segment === '..') throw new InvalidObjectKeyError(key, `"${segment}" segment`);
  }
  return key;
}

/** Validates a listing prefix: like a key, except that it may be empty or end with `/`. */
export function assertObjectPrefix(prefix: string): string {
  if (prefix === '') return prefix;
  assertObjectKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
  return prefix;
}

/** Joins key parts with `/`, dropping empty parts and stray slashes at the joins. */
export function joinKey(...parts: string[]): string {
  return parts
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter((part) => part.length > 0)
    .join('/');
}
