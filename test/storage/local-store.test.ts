// The local-folder ObjectStore: the shared contract, atomic writes, and how locations open.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalObjectStore, openObjectStore } from '../../storage/index.js';
import { describeObjectStoreContract } from './object-store-contract.js';

const root = mkdtempSync(path.join(tmpdir(), 'enrichflow-local-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeObjectStoreContract('LocalObjectStore', () => ({
  store: new LocalObjectStore(path.join(root, 'contract')),
  prefix: 'suite/',
  partSizeBytes: 1024 * 1024,
}));

describe('LocalObjectStore specifics', () => {
  it('writes through a temporary name: while a put streams, readers see no object and listings skip the temp file', async () => {
    const store = new LocalObjectStore(path.join(root, 'atomic'));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    async function* slow() {
      yield Buffer.from('first half,');
      await gate;
      yield Buffer.from('second half');
    }
    const writing = store.put('out/final.txt', Readable.from(slow()));
    // Wait (with a deadline) until the temporary file exists on disk.
    const dir = path.join(root, 'atomic', 'out');
    const deadline = Date.now() + 5000;
    while (!(existsSync(dir) && readdirSync(dir).length > 0)) {
      if (Date.now() > deadline) throw new Error('temporary file never appeared');
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await store.exists('out/final.txt')).toBe(false);
    const listed: string[] = [];
    for await (const info of store.list('out/')) listed.push(info.key);
    expect(listed).toEqual([]);
    release();
    await writing;
    expect((await store.getBytes('out/final.txt')).toString()).toBe('first half,second half');
    expect(readdirSync(dir)).toEqual(['final.txt']);
  });

  it('removes folders a delete leaves empty, but never the root', async () => {
    const store = new LocalObjectStore(path.join(root, 'prune'));
    await store.put('a/b/c.txt', 'x');
    await store.deletePrefix('a/');
    expect(readdirSync(path.join(root, 'prune'))).toEqual([]);
  });

  it('writes again into a folder removed behind its back (whole bodies and files)', async () => {
    const store = new LocalObjectStore(path.join(root, 'removed'));
    await store.put('run/results/a.jsonl', 'first');
    // Another process (or an operator) removes the folder between two writes of this one.
    rmSync(path.join(root, 'removed', 'run'), { recursive: true, force: true });
    await store.put('run/results/b.jsonl', 'second');
    expect((await store.getBytes('run/results/b.jsonl')).toString()).toBe('second');
    rmSync(path.join(root, 'removed', 'run'), { recursive: true, force: true });
    const local = path.join(root, 'removed-source.txt');
    writeFileSync(local, 'third');
    await store.putFile('run/results/c.jsonl', local);
    expect((await store.getBytes('run/results/c.jsonl')).toString()).toBe('third');
  });

  it('gives DuckDB the file path of an object', () => {
    const store = new LocalObjectStore(path.join(root, 'paths'));
    expect(store.localPath('x/y.parquet')).toBe(path.join(root, 'paths', 'x', 'y.parquet'));
  });
});

describe('openObjectStore with local locations', () => {
  it('roots a path ending in / or naming an existing folder at that folder', () => {
    const dir = path.join(root, 'open-dir');
    mkdirSync(dir);
    for (const location of [dir, `${dir}/`, pathToFileURL(dir).href]) {
      const opened = openObjectStore(location);
      expect(opened.store).toBeInstanceOf(LocalObjectStore);
      expect((opened.store as LocalObjectStore).root).toBe(dir);
      expect(opened.prefix).toBe('');
    }
    const fresh = openObjectStore(path.join(root, 'not-yet', 'out') + '/');
    expect((fresh.store as LocalObjectStore).root).toBe(path.join(root, 'not-yet', 'out'));
  });

  it('opens a file path as its folder plus the file name as key', async () => {
    const file = path.join(root, 'inputs', 'companies.csv');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, 'name\nAcme\n');
    const opened = openObjectStore(file);
    expect(opened.prefix).toBe('companies.csv');
    expect((await opened.store.getBytes(opened.prefix)).toString()).toBe('name\nAcme\n');
    const relative = openObjectStore(path.relative(process.cwd(), file));
    expect(relative.prefix).toBe('companies.csv');
  });
});
