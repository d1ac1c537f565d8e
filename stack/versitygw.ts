// Runs versitygw (an S3-compatible gateway over a local folder) for local use and tests, and creates
// the bucket the stack uses. Metadata goes to a sidecar folder so no xattr support is needed on disk.
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './ports.js';
import { startProcess, waitUntilReady, type ManagedProcess } from './process.js';
import { resolveTool } from './tools.js';

export interface S3ServerOptions {
  /** Folder holding the objects (`objects/`), metadata (`meta/`) and the log; created if missing. */
  dataDir: string;
  host?: string;
  port?: number;
  accessKeyId?: string;
  secretAccessKey?: string;
  region?: string;
  /** Bucket created once the server answers; default `enrichflow`. */
  bucket?: string;
  readyTimeoutMs?: number;
}

export interface S3Server {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  process: ManagedProcess;
  /** A client for this server with the SDK's default checksum behaviour. */
  client(): S3Client;
  stop(graceMs?: number): Promise<void>;
}

/** Local-only root credentials of the embedded S3 server; never used against a real account. */
export const LOCAL_S3_CREDENTIALS = { accessKeyId: 'enrichflow', secretAccessKey: 'enrichflow-local-secret' };

export async function startS3Server(options: S3ServerOptions): Promise<S3Server> {
  const binary = resolveTool('versitygw');
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freePort(host));
  const accessKeyId = options.accessKeyId ?? LOCAL_S3_CREDENTIALS.accessKeyId;
  const secretAccessKey = options.secretAccessKey ?? LOCAL_S3_CREDENTIALS.secretAccessKey;
  const region = options.region ?? 'us-east-1';
  const bucket = options.bucket ?? 'enrichflow';
  const objectsDir = path.join(options.dataDir, 'objects');
  const metaDir = path.join(options.dataDir, 'meta');
  mkdirSync(objectsDir, { recursive: true });
  mkdirSync(metaDir, { recursive: true });
  const proc = startProcess({
    name: 'versitygw',
    command: binary,
    args: [
      '--port',
      `${host}:${port}`,
      '--region',
      region,
      '--quiet',
      'posix',
      '--sidecar',
      metaDir,
      objectsDir,
    ],
    // Root credentials go through the environment so they don't show in `ps`.
    env: { ...process.env, ROOT_ACCESS_KEY_ID: accessKeyId, ROOT_SECRET_ACCESS_KEY: secretAccessKey },
    logFile: path.join(options.dataDir, 'versitygw.log'),
  });
  const endpoint = `http://${host}:${port}`;
  const client = () =>
    new S3Client({ endpoint, region, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
  const probe = client();
  try {
    await waitUntilReady(
      proc,
      async () => {
        try {
          await probe.send(new HeadBucketCommand({ Bucket: bucket }));
          return true;
        } catch (error) {
          const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
          if (status === 404) {
            await probe.send(new CreateBucketCommand({ Bucket: bucket }));
            return false; // the next round's HeadBucket confirms it
          }
          return false;
        }
      },
      options.readyTimeoutMs ?? 30_000,
    );
  } finally {
    probe.destroy();
  }
  return {
    endpoint,
    region,
    bucket,
    accessKeyId,
    secretAccessKey,
    process: proc,
    client,
    stop: (graceMs?: number) => proc.stop(graceMs),
  };
}
