// What the cluster test starts and reads: enrichflow processes from the compiled CLI (what the image
// runs), a door in front of the sandbox that timestamps every request and its status, and readers of a
// run's Parquet tables straight from the S3 server. Only the CLI, the S3 API and Parquet are used, so
// the test does not depend on enrichflow's internal modules.
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProcess, type ManagedProcess } from '../../stack/process.js';
export {
  peakInWindow,
  startSandboxDoor,
  type DoorRequest,
  type SandboxDoor,
} from '../support/sandbox-door.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * How enrichflow processes start: the compiled CLI (what the image runs) when `npm run build` has made
 * it, as CI's `make test` does before this test, else the TypeScript sources through tsx.
 */
export const COMPILED = existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'));
const CLI_ARGS = COMPILED ? ['bin/enrichflow.js'] : ['--import', 'tsx', 'bin/enrichflow-src.ts'];

/** Starts `enrichflow <args>` as a managed process with its output in `logFile`. */
export function startEnrichflow(
  name: string,
  args: string[],
  env: Record<string, string>,
  logFile: string,
): ManagedProcess {
  return startProcess({
    name,
    command: process.execPath,
    args: [...CLI_ARGS, ...args],
    cwd: ROOT,
    env: { ...process.env, ...env },
    logFile,
  });
}

/** Runs `enrichflow <args>` to the end; rejects on a non-zero exit with its output. */
export function enrichflow(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 600_000,
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...CLI_ARGS, ...args],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`enrichflow ${args.join(' ')}: ${error.message}\n${stdout}\n${stderr}`));
        else resolve({ stdout, stderr });
      },
    );
  });
}

/** Polls `check` until it returns a truthy value; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | false | undefined | null>,
  what: string,
  timeoutMs: number,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Downloads every Parquet part under `s3://bucket/prefix` into a temporary folder. */
async function downloadParts(s3: S3Client, bucket: string, prefix: string, into: string): Promise<string[]> {
  const files: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) {
      // Parts still being written by a commit live under `_work/`; only committed parts count.
      if (!object.Key?.endsWith('.parquet') || object.Key.includes('/_work/')) continue;
      const body = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: object.Key }));
      const local = path.join(into, `${files.length}.parquet`);
      writeFileSync(local, await body.Body!.transformToByteArray());
      files.push(local);
    }
    token = page.NextContinuationToken;
  } while (token);
  return files;
}

/** What the test compares of a table: rows, distinct ids, and the sorted ids themselves. */
export interface TableFacts {
  rows: number;
  distinctIds: number;
  ids: string[];
}

/** Reads a table of a run (all its Parquet parts) from `s3://bucket/<runPrefix><table>/`. */
export async function readTableFacts(
  s3: S3Client,
  location: string,
  table: string,
  idColumn = 'business_id',
): Promise<TableFacts> {
  const match = /^s3:\/\/([^/]+)\/(.*)$/.exec(location);
  if (!match) throw new Error(`not an s3:// location: ${location}`);
  const [, bucket, prefix] = match;
  const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-cluster-read-'));
  try {
    const files = await downloadParts(s3, bucket!, `${prefix}${table}/`, dir);
    if (files.length === 0) throw new Error(`no Parquet parts for ${table} under ${location}`);
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const list = files.map((f) => `'${f}'`).join(', ');
      const counts = await connection.runAndReadAll(
        `SELECT count(*)::BIGINT AS n, count(DISTINCT ${idColumn})::BIGINT AS d FROM read_parquet([${list}])`,
      );
      const [row] = counts.getRowObjects() as { n: bigint; d: bigint }[];
      const ids = await connection.runAndReadAll(
        `SELECT DISTINCT ${idColumn}::VARCHAR AS id FROM read_parquet([${list}]) WHERE ${idColumn} IS NOT NULL ORDER BY 1`,
      );
      return {
        rows: Number(row!.n),
        distinctIds: Number(row!.d),
        ids: (ids.getRowObjects() as { id: string }[]).map((r) => r.id),
      };
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
