// A local output under a regular file: the store keeps the file system's own code (not "does not
// exist"), and the attempt discipline turns it into a non-retryable LocalPathError naming the path.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ApplicationFailure } from '@temporalio/common';
import { expect, test } from 'vitest';
import { toActivityFailure } from '../../activities/attempt.js';
import { LocalObjectStore } from '../../storage/local-store.js';

test('a put under a regular file fails with ENOTDIR, at once, naming the path', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-enotdir-'));
  writeFileSync(path.join(dir, 'blocker'), 'a regular file\n');
  const store = new LocalObjectStore(dir);
  const error = await store.put('blocker/run/manifest.json', '{}').then(
    () => undefined,
    (e: unknown) => e as Error & { code?: string },
  );
  expect(error?.name).toBe('ObjectStoreError');
  expect(error?.code).toBe('ENOTDIR');
  expect(error?.message).not.toContain('does not exist');

  const failure = toActivityFailure(error) as ApplicationFailure;
  expect(failure.type).toBe('LocalPathError');
  expect(failure.nonRetryable).toBe(true);
  expect(failure.message).toMatch(new RegExp(`^${path.join(dir, 'blocker')}\\S*: ENOTDIR`));
});

test('a read of a key under a regular file is still "not found"', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-enotdir-'));
  writeFileSync(path.join(dir, 'blocker'), 'x');
  const store = new LocalObjectStore(dir);
  expect(await store.head('blocker/run/manifest.json')).toBeUndefined();
  await expect(store.getBytes('blocker/run/manifest.json')).rejects.toThrow('does not exist');
});
