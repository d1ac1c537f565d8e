// Preflight: what can be known about a run's input and output before any work starts. The CLI runs it
// before it starts a workflow (and in `--dry-run`), the planning activities at their start, so a
// schedule whose input or output broke since it was created fails at once, with the same words.
// Input: the file exists, is readable, its format is known, it has a usable column (and every explicit
// column exists) and at least one record. Output: a probe object is written and deleted there.
import { randomUUID } from 'node:crypto';
import { mkdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { InputSpec } from '../pipeline/run-types.js';
import { describeLocation, type FileLocation } from './files.js';
import { InputFileError, openInputFile } from './input/index.js';
import { joinKey, ObjectStoreError, type ObjectStore } from './object-store.js';
import { detectFormat, mapColumns, type ColumnMapping } from './plan-input.js';

export type OutputLocationErrorCode =
  | 'NOT_A_FOLDER'
  | 'PERMISSION_DENIED'
  | 'READ_ONLY'
  | 'NO_SPACE'
  | 'VIRTUAL_FILE_SYSTEM'
  | 'BUCKET_NOT_FOUND'
  | 'ACCESS_DENIED'
  | 'ENDPOINT_UNREACHABLE'
  | 'NOT_WRITABLE';

/** Thrown when an output location cannot be written; the message starts with the location as given. */
export class OutputLocationError extends Error {
  override readonly name = 'OutputLocationError';
  constructor(
    readonly code: OutputLocationErrorCode,
    readonly location: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${location}: ${detail}`, options);
  }
}

/** A store and the key (input) or prefix (output) inside it, with the location as the user wrote it. */
export interface CheckedLocation {
  store: ObjectStore;
  prefix: string;
  location: string;
}

export interface InputCheck {
  mapping: ColumnMapping;
  idsProvided: boolean;
}

/** Bounds every S3 request of a check: a black-holed endpoint is reported, not waited for. */
const S3_CHECK_TIMEOUT_MS = 15_000;

/**
 * Checks an input file without reading more than its first records: exists, readable, known format,
 * a usable column (every explicit column present), at least one record. Throws `InputFileError` with
 * the words the planner uses for the same faults.
 */
export async function checkInput(
  source: CheckedLocation,
  spec: InputSpec,
  options: { tempDir?: string; signal?: AbortSignal } = {},
): Promise<InputCheck> {
  const format = detectFormat(spec.location, spec.format);
  let info;
  try {
    info = await bounded(options.signal, source.store, (signal) =>
      source.store.head(source.prefix, { signal }),
    );
  } catch (error) {
    throw inputStoreError(error, source, spec.location);
  }
  if (!info) throw new InputFileError('NOT_FOUND', spec.location, 'no such file');
  const location: FileLocation = { store: source.store, key: source.prefix };
  let input;
  try {
    input = await openInputFile(location, {
      format,
      ...(spec.delimiter ? { delimiter: spec.delimiter } : {}),
      ...(options.tempDir ? { tempDir: options.tempDir } : {}),
      chunkRows: 1,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    throw inputStoreError(error, source, describeLocation(location));
  }
  try {
    const mapping = mapColumns(spec.location, [...input.columns], spec.columns);
    let records = input.rowCount;
    if (records === undefined) {
      records = 0;
      for await (const chunk of input.chunks()) {
        records += chunk.rows.length + chunk.rejects.length;
        if (records > 0) break;
      }
    }
    if (records === 0) throw new InputFileError('EMPTY', spec.location, 'the file has no data rows');
    return { mapping, idsProvided: mapping.fields.business_id !== undefined };
  } finally {
    await input.close();
  }
}

function inputStoreError(error: unknown, source: CheckedLocation, name: string): unknown {
  if (error instanceof InputFileError) {
    // The readers name the store's object (file:///…); the user wrote the location as given.
    if (error.file === source.location || !error.message.startsWith(`${error.file}: `)) return error;
    return new InputFileError(error.code, source.location, error.message.slice(error.file.length + 2), {
      cause: error.cause,
    });
  }
  const s3 = s3Fault(error, source.store);
  if (s3) return new InputFileError('UNREADABLE', source.location, s3.detail, { cause: error });
  if (error instanceof Error && !(error instanceof ObjectStoreError)) return error;
  return new InputFileError('UNREADABLE', name, `cannot read: ${(error as Error).message}`, { cause: error });
}

export interface OutputCheckOptions {
  signal?: AbortSignal;
  /**
   * Remove the local folders the check created (a dry run writes nothing); by default a missing output
   * folder is created and kept, since the run writes there next.
   */
  removeCreatedFolders?: boolean;
}

/** The probe's name: a leading underscore, so loaders skip it should a crash leave it behind. */
const probeName = () => `_enrichflow-preflight-${randomUUID()}`;

/**
 * Checks that a run can write under an output prefix: for a local folder, creates it and writes and
 * removes a probe file there; for S3, puts and deletes a probe object under the prefix, telling a
 * missing bucket, denied access and an unreachable endpoint apart. Throws `OutputLocationError`.
 */
export async function checkOutput(output: CheckedLocation, options: OutputCheckOptions = {}): Promise<void> {
  const probe = joinKey(output.prefix, probeName());
  const localFile = output.store.localPath(probe);
  if (localFile !== undefined) {
    await checkLocalFolder(path.dirname(localFile), output.location, options);
    return;
  }
  try {
    await bounded(options.signal, output.store, async (signal) => {
      await output.store.put(probe, 'enrichflow preflight probe\n', { signal });
      await output.store.delete(probe, { signal });
    });
  } catch (error) {
    const s3 = s3Fault(error, output.store);
    if (s3) throw new OutputLocationError(s3.code, output.location, s3.detail, { cause: error });
    throw new OutputLocationError(
      'NOT_WRITABLE',
      output.location,
      `cannot write there: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

const VIRTUAL_ROOTS = ['/proc', '/sys', '/dev'];

async function checkLocalFolder(dir: string, location: string, options: OutputCheckOptions): Promise<void> {
  // The nearest folder that exists, with symbolic links resolved: where the writes really land.
  const existing = await nearestExisting(dir);
  const real = await realpath(existing).catch(() => existing);
  const virtual = VIRTUAL_ROOTS.find((root) => real === root || real.startsWith(`${root}/`));
  if (virtual && !real.startsWith('/dev/shm')) {
    throw new OutputLocationError(
      'VIRTUAL_FILE_SYSTEM',
      location,
      `${real} is on ${virtual}, a virtual file system, not a place to write tables`,
    );
  }
  let created: string | undefined;
  try {
    created = await mkdir(dir, { recursive: true });
    const probe = path.join(dir, probeName());
    await writeFile(probe, 'enrichflow preflight probe\n', { signal: options.signal });
    await rm(probe, { force: true });
  } catch (error) {
    throw await localOutputError(error, location, dir, existing);
  } finally {
    if (created && options.removeCreatedFolders) await rm(created, { recursive: true, force: true });
  }
}

async function nearestExisting(dir: string): Promise<string> {
  let current = dir;
  for (;;) {
    try {
      await stat(current);
      return current;
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return current;
      current = parent;
    }
  }
}

async function localOutputError(
  error: unknown,
  location: string,
  dir: string,
  existing: string,
): Promise<OutputLocationError> {
  const code = (error as NodeJS.ErrnoException).code;
  const cause = { cause: error };
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    const isFile = await stat(existing).then(
      (s) => !s.isDirectory(),
      () => false,
    );
    return new OutputLocationError(
      'NOT_A_FOLDER',
      location,
      `${isFile ? existing : dir} is a file, not a folder (${code}); choose another output`,
      cause,
    );
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new OutputLocationError(
      'PERMISSION_DENIED',
      location,
      `permission denied writing in ${existing} (${code}); choose another output or grant write access`,
      cause,
    );
  }
  if (code === 'EROFS') {
    return new OutputLocationError(
      'READ_ONLY',
      location,
      `${existing} is on a read-only file system (EROFS)`,
      cause,
    );
  }
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new OutputLocationError(
      'NO_SPACE',
      location,
      `no space left on the device of ${existing} (${code})`,
      cause,
    );
  }
  return new OutputLocationError(
    'NOT_WRITABLE',
    location,
    `cannot write in ${dir}: ${(error as Error).message}`,
    cause,
  );
}

interface S3Fault {
  code: 'BUCKET_NOT_FOUND' | 'ACCESS_DENIED' | 'ENDPOINT_UNREACHABLE';
  detail: string;
}

const ACCESS_CODES = new Set([
  'AccessDenied',
  'Forbidden',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'InvalidToken',
  'CredentialsProviderError',
]);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'TimeoutError',
]);

/** The S3 faults a user can act on, found anywhere in the error's cause chain. */
function s3Fault(error: unknown, store: ObjectStore): S3Fault | undefined {
  if (!store.url.startsWith('s3://')) return undefined;
  const bucket = store.url.slice('s3://'.length);
  for (let e = error as Record<string, unknown> | undefined, depth = 0; e && depth < 8; depth++) {
    const names = [e.name, e.code, e.Code].filter((n): n is string => typeof n === 'string');
    const status = (e.$metadata as { httpStatusCode?: number } | undefined)?.httpStatusCode;
    if (names.includes('NoSuchBucket')) {
      return { code: 'BUCKET_NOT_FOUND', detail: `the bucket "${bucket}" does not exist` };
    }
    if (names.some((n) => ACCESS_CODES.has(n)) || status === 403) {
      return {
        code: 'ACCESS_DENIED',
        detail: `access denied to the bucket "${bucket}" (${names.find((n) => ACCESS_CODES.has(n)) ?? 'HTTP 403'}); check ENRICHFLOW_S3_ACCESS_KEY_ID / ENRICHFLOW_S3_SECRET_ACCESS_KEY and the bucket's policy`,
      };
    }
    const network = names.find((n) => NETWORK_CODES.has(n));
    if (network) {
      return {
        code: 'ENDPOINT_UNREACHABLE',
        detail: `cannot reach the S3 endpoint (${network}); check ENRICHFLOW_S3_ENDPOINT and that the server runs`,
      };
    }
    e = e.cause as Record<string, unknown> | undefined;
  }
  return undefined;
}

/**
 * Runs `work` with the caller's signal, bounded for S3 so an unreachable endpoint is a fault, not a
 * hang. A plain timer, not `AbortSignal.timeout` under `AbortSignal.any` (which holds it weakly: it can
 * be collected before it fires).
 */
async function bounded<T>(
  signal: AbortSignal | undefined,
  store: ObjectStore,
  work: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  if (!store.url.startsWith('s3://')) return work(signal);
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('no answer from the S3 endpoint', 'TimeoutError')),
    S3_CHECK_TIMEOUT_MS,
  );
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await work(controller.signal);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Resolves a location to its store and key or prefix (workers/worker.ts `storeResolverFor`). */
export type LocationResolver = (location: string) => { store: ObjectStore; prefix: string };

/**
 * The whole preflight of an enrichment run: its input, then its output. The CLI calls it before it
 * starts a run and in a dry run; the planning activity at its start.
 */
export async function checkRun(
  run: { input: InputSpec; output: string },
  resolve: LocationResolver,
  options: OutputCheckOptions & { tempDir?: string } = {},
): Promise<InputCheck> {
  const checked = await checkInput(
    { ...resolve(run.input.location), location: run.input.location },
    run.input,
    options,
  );
  await checkOutput({ ...resolve(run.output), location: run.output }, options);
  return checked;
}
