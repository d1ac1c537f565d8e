// Starts the servers the whole suite shares — a Temporal dev server and an S3 server (versitygw) —
// on free ports in a temp folder, hands their addresses to test files, and stops them at the end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startTemporalDevServer } from '../../stack/temporal.js';
import { startS3Server } from '../../stack/versitygw.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
    s3: { endpoint: string; region: string; bucket: string; accessKeyId: string; secretAccessKey: string };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = mkdtempSync(path.join(tmpdir(), 'enrichflow-test-'));
  const [temporal, s3] = await Promise.all([
    startTemporalDevServer({ dataDir: path.join(root, 'temporal'), headless: true }),
    startS3Server({ dataDir: path.join(root, 's3'), bucket: 'enrichflow-test' }),
  ]);
  project.provide('temporalAddress', temporal.address);
  project.provide('temporalNamespace', temporal.namespace);
  project.provide('s3', {
    endpoint: s3.endpoint,
    region: s3.region,
    bucket: s3.bucket,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
  });
  return async () => {
    await Promise.all([temporal.stop(), s3.stop()]);
    rmSync(root, { recursive: true, force: true });
  };
}
