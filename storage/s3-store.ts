// ObjectStore over an S3 bucket (AWS or an S3-compatible server such as versitygw) with the AWS SDK.
// Streams and files go up through lib-storage's Upload (multipart when larger than one part); the SDK's
// default checksum behaviour is kept, so every upload is integrity-checked end to end. Every request
// carries the caller's abort signal, so a cancelled operation stops on the wire, not after it.
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  paginateListObjectsV2,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createReadStream, createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { writeFileAtomically } from './local-store.js';
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

/** Connection settings of an S3 endpoint; the shape of the `s3` section of the config module. */
export interface S3ConnectionOptions {
  /** An S3-compatible endpoint (`http://127.0.0.1:7070`); unset for AWS. */
  endpoint?: string;
  /** Default `us-east-1`. */
  region?: string;
  /** Path-style addressing (`endpoint/bucket/key`), which most local S3 servers need. Default false. */
  forcePathStyle?: boolean;
  /** Static credentials; when unset the SDK's default credential chain applies. */
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /**
   * Milliseconds to establish a TCP connection before the attempt fails (retried by the SDK).
   * Default 10,000.
   */
  connectionTimeoutMs?: number;
  /**
   * Milliseconds a socket may sit idle (no bytes either way) before the request fails. There is no
   * whole-request timeout, because a large download may rightly take minutes. Default 60,000.
   */
  socketTimeoutMs?: number;
  /** Attempts per request, including the first (the SDK's standard retry mode). Default 3. */
  maxAttempts?: number;
}

export interface S3ObjectStoreOptions {
  bucket: string;
  /** An existing client; otherwise one is built from `connection` and destroyed by `close()`. */
  client?: S3Client;
  connection?: S3ConnectionOptions;
  /** Part size of multipart uploads, bytes (S3's minimum is 5 MiB). Default 8 MiB. */
  partSizeBytes?: number;
  /** Parts uploaded at once; memory use is at most partSize × queueSize per upload. Default 4. */
  uploadQueueSize?: number;
  /** Keys per ListObjectsV2 page (S3's maximum is 1,000). Default 1,000. */
  listPageSize?: number;
}

/** Builds an S3 client; the SDK's default checksum settings are deliberately left alone. */
export function createS3Client(options: S3ConnectionOptions = {}): S3Client {
  const config: S3ClientConfig = {
    region: options.region ?? 'us-east-1',
    forcePathStyle: options.forcePathStyle ?? false,
    maxAttempts: options.maxAttempts ?? 3,
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? 10_000,
      socketTimeout: options.socketTimeoutMs ?? 60_000,
    },
  };
  if (options.endpoint) config.endpoint = options.endpoint;
  if (options.accessKeyId && options.secretAccessKey) {
    config.credentials = {
      accessKeyId: options.accessKeyId,
      secretAccessKey: options.secretAccessKey,
      ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}),
    };
  }
  return new S3Client(config);
}

interface SdkError {
  name?: string;
  message?: string;
  Code?: string;
  $metadata?: { httpStatusCode?: number };
}

function isNotFound(error: unknown): boolean {
  const e = error as SdkError | undefined;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

const DELETE_BATCH = 1000; // S3's limit per DeleteObjects request

/**
 * The client as lib-storage's `Upload` should see it: every request it sends carries `signal`, which
 * `Upload` itself does not pass on (its `abort()` only stops waiting). The one exception is the request
 * that aborts the multipart upload, which has to go out after the signal has fired.
 */
function clientAbortingWith(client: S3Client, signal: AbortSignal): S3Client {
  return new Proxy(client, {
    get(target, property) {
      if (property !== 'send') return Reflect.get(target, property, target) as unknown;
      return (command: Parameters<S3Client['send']>[0], options?: { abortSignal?: AbortSignal }) =>
        command instanceof AbortMultipartUploadCommand
          ? target.send(command, options)
          : target.send(command, { ...options, abortSignal: signal });
    },
  });
}

export class S3ObjectStore implements ObjectStore {
  readonly bucket: string;
  readonly client: S3Client;
  readonly url: string;
  private readonly ownsClient: boolean;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly listPageSize: number;

  constructor(options: S3ObjectStoreOptions) {
    this.bucket = options.bucket;
    this.ownsClient = options.client === undefined;
    this.client = options.client ?? createS3Client(options.connection);
    this.url = `s3://${options.bucket}`;
    this.partSize = Math.max(options.partSizeBytes ?? 8 * 1024 * 1024, 5 * 1024 * 1024);
    this.queueSize = options.uploadQueueSize ?? 4;
    this.listPageSize = Math.min(Math.max(options.listPageSize ?? 1000, 1), 1000);
  }

  private where(key: string): string {
    return `${this.url}/${key}`;
  }

  /** Rethrows as an `ObjectStoreError`; once `signal` has fired, as the signal's reason instead. */
  private wrap(error: unknown, key: string, operation: string, signal?: AbortSignal): never {
    signal?.throwIfAborted();
    if (error instanceof ObjectStoreError) throw error;
    if (isNotFound(error) && (error as SdkError).name !== 'NoSuchBucket') {
      throw new ObjectNotFoundError(this.where(key), { cause: error });
    }
    const e = error as SdkError;
    const code = e.name ?? e.Code ?? 'UNKNOWN';
    throw new ObjectStoreError(
      `${operation} ${this.where(key)} failed: ${code}: ${e.message ?? ''}`,
      code,
      this.where(key),
      {
        cause: error,
      },
    );
  }

  /** Creates the bucket when it does not exist (for the local stack and tests). */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (error) {
      if ((error as SdkError).$metadata?.httpStatusCode !== 404) this.wrap(error, '', 'head bucket');
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      const name = (error as SdkError).name;
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists')
        this.wrap(error, '', 'create bucket');
    }
  }

  async put(key: string, body: Uint8Array | string | Readable, options: PutOptions = {}): Promise<void> {
    assertObjectKey(key);
    if (typeof body === 'string' || body instanceof Uint8Array) {
      try {
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Body: body,
            ContentType: options.contentType,
          }),
          { abortSignal: options.signal },
        );
      } catch (error) {
        this.wrap(error, key, 'put', options.signal);
      }
      return;
    }
    await this.upload(key, body, options);
  }

  async putFile(key: string, filePath: string, options: PutOptions = {}): Promise<void> {
    assertObjectKey(key);
    // lib-storage reads the size from the file stream: one PutObject when it fits a part, else multipart.
    await this.upload(key, createReadStream(filePath), options);
  }

  private async upload(key: string, body: Readable, options: PutOptions): Promise<void> {
    const { signal } = options;
    if (signal?.aborted) {
      body.destroy();
      signal.throwIfAborted();
    }
    const upload = new Upload({
      client: signal ? clientAbortingWith(this.client, signal) : this.client,
      params: { Bucket: this.bucket, Key: key, Body: body, ContentType: options.contentType },
      partSize: this.partSize,
      queueSize: this.queueSize,
      // An upload that fails is aborted, so no orphaned parts accrue storage charges.
      leavePartsOnError: false,
    });
    // `abort()` makes `done()` reject at once; the requests in flight stop through the client above, and
    // destroying the body (below) ends the part reader, after which the multipart upload is aborted.
    const onAbort = () => void upload.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await upload.done();
    } catch (error) {
      if (!body.destroyed) body.destroy();
      signal?.throwIfAborted();
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new ObjectStoreError(`upload to ${this.where(key)}: local file does not exist`, 'ENOENT', key, {
          cause: error,
        });
      }
      this.wrap(error, key, 'upload');
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async getStream(key: string, options: TransferOptions = {}): Promise<Readable> {
    assertObjectKey(key);
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), {
        abortSignal: options.signal,
      });
      if (!response.Body)
        throw new ObjectStoreError(`get ${this.where(key)}: empty response`, 'NO_BODY', key);
      // The SDK stops listening to the signal once the headers are in; the body may take much longer.
      return destroyOnAbort(response.Body as Readable, options.signal);
    } catch (error) {
      this.wrap(error, key, 'get', options.signal);
    }
  }

  async getBytes(key: string, options: TransferOptions = {}): Promise<Buffer> {
    const stream = await this.getStream(key, options);
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of stream) chunks.push(chunk as Buffer);
    } catch (error) {
      this.wrap(error, key, 'get', options.signal);
    }
    return Buffer.concat(chunks);
  }

  async downloadToFile(key: string, filePath: string, options: TransferOptions = {}): Promise<void> {
    const stream = await this.getStream(key, options);
    try {
      await writeFileAtomically(
        filePath,
        (temp) => pipeline(stream, createWriteStream(temp), { signal: options.signal }),
        false,
      );
    } catch (error) {
      if (!stream.destroyed) stream.destroy();
      this.wrap(error, key, 'download', options.signal);
    }
  }

  async head(key: string, options: TransferOptions = {}): Promise<ObjectInfo | undefined> {
    assertObjectKey(key);
    try {
      const response = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }), {
        abortSignal: options.signal,
      });
      return { key, size: response.ContentLength ?? 0, lastModified: response.LastModified ?? new Date(0) };
    } catch (error) {
      options.signal?.throwIfAborted();
      if (isNotFound(error)) return undefined;
      this.wrap(error, key, 'head');
    }
  }

  async exists(key: string, options: TransferOptions = {}): Promise<boolean> {
    return (await this.head(key, options)) !== undefined;
  }

  async *list(prefix: string, options: TransferOptions = {}): AsyncIterable<ObjectInfo> {
    assertObjectPrefix(prefix);
    const { signal } = options;
    try {
      for await (const page of paginateListObjectsV2(
        { client: this.client, pageSize: this.listPageSize },
        { Bucket: this.bucket, Prefix: prefix || undefined },
        { abortSignal: signal },
      )) {
        for (const item of page.Contents ?? []) {
          if (item.Key === undefined) continue;
          // A consumer may take its time over each object; it should not get more once aborted.
          signal?.throwIfAborted();
          yield { key: item.Key, size: item.Size ?? 0, lastModified: item.LastModified ?? new Date(0) };
        }
      }
    } catch (error) {
      this.wrap(error, prefix, 'list', signal);
    }
  }

  async delete(key: string, options: TransferOptions = {}): Promise<void> {
    assertObjectKey(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }), {
        abortSignal: options.signal,
      });
    } catch (error) {
      options.signal?.throwIfAborted();
      if (isNotFound(error)) return;
      this.wrap(error, key, 'delete');
    }
  }

  async deletePrefix(prefix: string, options: TransferOptions = {}): Promise<number> {
    if (prefix === '')
      throw new ObjectStoreError('deletePrefix refuses an empty prefix', 'EMPTY_PREFIX', this.url);
    let batch: string[] = [];
    let count = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const keys = batch;
      batch = [];
      try {
        const response = await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
          }),
          { abortSignal: options.signal },
        );
        const failed = response.Errors ?? [];
        if (failed.length > 0) {
          const first = failed[0];
          throw new ObjectStoreError(
            `deleting ${failed.length} objects under ${this.where(prefix)} failed (first: ${first?.Key}: ${first?.Code} ${first?.Message})`,
            first?.Code ?? 'DELETE_FAILED',
            this.where(prefix),
          );
        }
        count += keys.length;
      } catch (error) {
        this.wrap(error, prefix, 'delete', options.signal);
      }
    };
    for await (const info of this.list(prefix, options)) {
      batch.push(info.key);
      if (batch.length >= DELETE_BATCH) await flush();
    }
    await flush();
    return count;
  }

  localPath(): string | undefined {
    return undefined;
  }

  /** Releases the client's sockets when this store built the client. */
  close(): void {
    if (this.ownsClient) this.client.destroy();
  }
}
