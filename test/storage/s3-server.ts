// The S3 server for storage tests: the suite's shared versitygw when the global set-up provides one,
// otherwise a private one started on a free port for this file (plain config) and stopped after it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { startS3Server } from '../../stack/versitygw.js';

export interface TestS3 {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

export async function useTestS3(): Promise<TestS3> {
  const shared = inject('s3') as Omit<TestS3, 'stop'> | undefined;
  if (shared) return { ...shared, stop: async () => {} };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'enrichflow-storage-s3-'));
  const server = await startS3Server({ dataDir, bucket: 'storage-test' });
  return {
    endpoint: server.endpoint,
    region: server.region,
    bucket: server.bucket,
    accessKeyId: server.accessKeyId,
    secretAccessKey: server.secretAccessKey,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A key prefix no other test file uses, so files sharing one bucket do not see each other's objects. */
export function uniquePrefix(name: string): string {
  return `${name}-${process.pid}-${Date.now().toString(36)}/`;
}
