// A run's files under an abort signal: the signal given when they are opened, or to one call, reaches
// every read, write, listing and copy, which then reject with its reason.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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

  it('gathers every line of many files into parts once, whatever their size and last newline', async () => {
    const files = new RunFiles(store, 'out', 'run-2');
    const big = 'x'.repeat(600 * 1024); // past the first read buffer
    const bodies = new Map<string, string>([
      ['many/0.jsonl', '{"n":0}\n{"n":1}\n'],
      ['many/1.jsonl', '{"n":2}'], // no newline at its end
      ['many/2.jsonl', ''], // empty: nothing gathered
      ['many/3.jsonl', `{"big":"${big}"}\n`],
    ]);
    for (let i = 4; i < 300; i++) bodies.set(`many/${i}.jsonl`, `{"n":${i}}\n`);
    for (const [key, body] of bodies) await store.put(files.key(key), body);
    const scratch = mkdtempSync(path.join(root, 'scratch-'));
    const parts = await gatherLineParts(files, [...bodies.keys()], path.join(scratch, 'parts'), 1024);
    const lines = parts.flatMap((part) => readFileSync(part, 'utf8').split('\n').slice(0, -1));
    const expected = [...bodies.values()].flatMap((body) => body.split('\n').filter(Boolean));
    expect(lines.sort()).toEqual(expected.sort());
    // A new part once one holds 1 KB: the big line alone is one part.
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.every((part) => readFileSync(part, 'utf8').endsWith('\n'))).toBe(true);
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
