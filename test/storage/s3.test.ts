// The foundation check against a real S3 server (versitygw): the AWS SDK with its default checksum
// settings can put, get, list and multipart-upload a 20 MB object, and the bytes come back equal.
// Then the same ObjectStore contract the local folder passes, through S3ObjectStore.
import {
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openObjectStore, S3ObjectStore } from '../../storage/index.js';
import { describeObjectStoreContract } from './object-store-contract.js';
import { uniquePrefix, useTestS3, type TestS3 } from './s3-server.js';

let s3: TestS3;
const stores: S3ObjectStore[] = [];

beforeAll(async () => {
  s3 = await useTestS3();
});
afterAll(async () => {
  for (const store of stores) store.close();
  await s3.stop();
});

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

describe('AWS SDK against versitygw, default checksums', () => {
  let client: S3Client;
  const prefix = uniquePrefix('sdk');
  beforeAll(() => {
    // No checksum options: the SDK's defaults (CRC32 on uploads where supported) are what production uses.
    client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
  });
  afterAll(() => client.destroy());

  it('puts, gets and lists an object', async () => {
    const body = randomBytes(64 * 1024);
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${prefix}small.bin`, Body: body }));
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${prefix}small.bin` }));
    const bytes = await got.Body!.transformToByteArray();
    expect(sha256(bytes)).toBe(sha256(body));
    const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
    expect(listed.Contents?.map((o) => [o.Key, o.Size])).toEqual([[`${prefix}small.bin`, body.length]]);
  });

  it('uploads a 20 MB object in parts and reads back the same bytes', async () => {
    const body = randomBytes(20 * 1024 * 1024);
    const parts: number[] = [];
    const upload = new Upload({
      client,
      params: { Bucket: s3.bucket, Key: `${prefix}large.bin`, Body: body },
      partSize: 5 * 1024 * 1024,
      queueSize: 2,
    });
    upload.on('httpUploadProgress', (progress) => {
      if (progress.part !== undefined) parts.push(progress.part);
    });
    await upload.done();
    expect(new Set(parts).size).toBe(4); // really multipart: four 5 MiB parts
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${prefix}large.bin` }));
    expect(got.ContentLength).toBe(body.length);
    const bytes = await got.Body!.transformToByteArray();
    expect(sha256(bytes)).toBe(sha256(body));
  });
});

describeObjectStoreContract('S3ObjectStore', () => {
  const partSizeBytes = 5 * 1024 * 1024;
  const store = new S3ObjectStore({
    bucket: s3.bucket,
    connection: {
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
    },
    partSizeBytes,
    listPageSize: 7, // so listings cross page boundaries
  });
  stores.push(store);
  return { store, prefix: uniquePrefix('contract'), partSizeBytes };
});

describe('S3ObjectStore aborted by a signal', () => {
  it('aborts the multipart upload on the server too, so no parts are left to accrue charges', async () => {
    const partSizeBytes = 5 * 1024 * 1024;
    const store = new S3ObjectStore({
      bucket: s3.bucket,
      connection: {
        endpoint: s3.endpoint,
        region: s3.region,
        forcePathStyle: true,
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
      },
      partSizeBytes,
    });
    stores.push(store);
    const prefix = uniquePrefix('abort-multipart');
    const controller = new AbortController();
    let resolveStarted!: () => void;
    const started = new Promise<void>((resolve) => (resolveStarted = resolve));
    async function* body() {
      // Two parts' worth, so the first part's upload is under way, then a stall.
      for (let i = 0; i < 2 * 80; i++) yield Buffer.alloc(64 * 1024, i);
      resolveStarted();
      await new Promise((resolve) => controller.signal.addEventListener('abort', resolve, { once: true }));
    }
    const putting = store.put(`${prefix}big.bin`, Readable.from(body()), { signal: controller.signal });
    await started;
    const uploads = async () =>
      (await store.client.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket, Prefix: prefix })))
        .Uploads ?? [];
    // The upload has begun on the server before the abort (it is created with the first part).
    const deadline = Date.now() + 10_000;
    while ((await uploads()).length === 0) {
      if (Date.now() > deadline) throw new Error('the multipart upload never started');
    }
    controller.abort();
    await expect(putting).rejects.toBe(controller.signal.reason);
    // The abort request goes out once the part uploads in flight have stopped.
    while ((await uploads()).length > 0) {
      if (Date.now() > deadline) throw new Error('the multipart upload was never aborted');
    }
    expect(await store.exists(`${prefix}big.bin`)).toBe(false);
  });
});

describe('openObjectStore with s3:// locations', () => {
  it('opens the bucket with the prefix and the caller-supplied connection', async () => {
    const prefix = uniquePrefix('open');
    const opened = openObjectStore(`s3://${s3.bucket}/${prefix}`, {
      s3: {
        endpoint: s3.endpoint,
        region: s3.region,
        forcePathStyle: true,
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
      },
    });
    expect(opened.prefix).toBe(prefix);
    expect(opened.store.url).toBe(`s3://${s3.bucket}`);
    await opened.store.put(`${opened.prefix}hello.txt`, 'hi');
    expect((await opened.store.getBytes(`${prefix}hello.txt`)).toString()).toBe('hi');
    opened.store.close();
  });

  it('ensureBucket creates a missing bucket and accepts an existing one', async () => {
    const store = new S3ObjectStore({
      bucket: `made-${Date.now().toString(36)}`,
      connection: {
        endpoint: s3.endpoint,
        region: s3.region,
        forcePathStyle: true,
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
      },
    });
    stores.push(store);
    await store.ensureBucket();
    await store.ensureBucket();
    await store.put('x.txt', 'x');
    expect(await store.exists('x.txt')).toBe(true);
  });

  it('rejects malformed locations', () => {
    expect(() => openObjectStore('s3://Bad_Bucket/x')).toThrow(/not a valid S3 bucket name/);
    expect(() => openObjectStore('s3://bucket/a//b/')).toThrow(/invalid object key/);
    expect(() => openObjectStore('gs://bucket/x')).toThrow(/unsupported scheme/);
  });
});
