// A run's files under an abort signal: the signal given when they are opened, or to one call, reaches
// every read, write, listing and copy, which then reject with its reason.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../storage/index.js';
import { downloadAll, gatherLineParts, gatherLines, RunFiles } from '../../storage/run-files.js';

const root = mkdtempSync(path.join(tmpdir(), 'enrichflow-run-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A store that is not a local folder to its callers, so the run's files take the remote paths. */
class RemoteLikeStore extends LocalObjectStore {
  override localPath(): string | undefined {
    return undefined;
  }
}

function aborted(): AbortSignal {
  const controller = new AbortController();
  controller.abort();
  return controller.signal;
}

describe.each([
  ['a local folder', (dir: string) => new LocalObjectStore(dir)],
  ['a remote store', (dir: string) => new RemoteLikeStore(dir)],
])('RunFiles on %s', (name, makeStore) => {
  const store = makeStore(path.join(root, name.replace(/ /g, '-')));
  const keys = ['results/a.jsonl', 'results/b.jsonl', 'results/c.jsonl'];

  beforeAll(async () => {
    const files = new RunFiles(store, 'out', 'run-1');
    for (const key of keys) await files.putJson(key, { key });
  });

  it('works as before without a signal', async () => {
    const files = new RunFiles(store, 'out', 'run-1');
    expect(await files.list('results/')).toEqual(keys);
    expect(await files.getJson('results/a.jsonl')).toEqual({ key: 'results/a.jsonl' });
    const scratch = mkdtempSync(path.join(root, 'scratch-'));
    const gathered = await gatherLines(files, keys, path.join(scratch, 'all.jsonl'));
    expect(gathered).toBe(path.join(scratch, 'all.jsonl'));
    expect(await downloadAll(files, keys, path.join(scratch, 'copies'))).toHaveLength(3);
  });

  it('every operation of files opened with an aborted signal rejects with its reason', async () => {
    const signal = aborted();
    const files = new RunFiles(store, 'out', 'run-1', { signal });
    const scratch = mkdtempSync(path.join(root, 'scratch-'));
    await expect(files.list('results/')).rejects.toBe(signal.reason);
    await expect(files.getJson('results/a.jsonl')).rejects.toBe(signal.reason);
    await expect(files.putJson('results/d.jsonl', {})).rejects.toBe(signal.reason);
    await expect(gatherLines(files, keys, path.join(scratch, 'all.jsonl'))).rejects.toBe(signal.reason);
    await expect(gatherLineParts(files, keys, path.join(scratch, 'parts'), 1 << 20)).rejects.toBe(
      signal.reason,
    );
    await expect(downloadAll(files, keys, path.join(scratch, 'copies'))).rejects.toBe(signal.reason);
    expect(readdirSync(scratch)).toEqual([]);
    expect(await new RunFiles(store, 'out', 'run-1').list('results/')).toEqual(keys);
  });

  it("a call's own signal overrides the one the files were opened with", async () => {
    const files = new RunFiles(store, 'out', 'run-1', { signal: new AbortController().signal });
    const signal = aborted();
    await expect(files.list('results/', { signal })).rejects.toBe(signal.reason);
    await expect(downloadAll(files, keys, path.join(root, 'never'), undefined, { signal })).rejects.toBe(
      signal.reason,
    );
    expect(await files.list('results/')).toEqual(keys);
  });
});
