// What every ObjectStore must do, checked the same way against the local folder and against S3.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidObjectKeyError, ObjectNotFoundError, type ObjectStore } from '../../storage/index.js';

export interface ContractTarget {
  store: ObjectStore;
  /** Keys of this suite live under this prefix (ends with `/`). */
  prefix: string;
  /** The store's multipart part size, so the large-file case crosses it. */
  partSizeBytes: number;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function describeObjectStoreContract(
  name: string,
  open: () => ContractTarget | Promise<ContractTarget>,
): void {
  describe(`${name}: ObjectStore contract`, () => {
    let target: ContractTarget;
    let store: ObjectStore;
    let p: string;
    let scratch: string;

    beforeAll(async () => {
      target = await open();
      store = target.store;
      p = target.prefix;
      scratch = mkdtempSync(path.join(tmpdir(), 'enrichflow-contract-'));
    });
    afterAll(() => {
      rmSync(scratch, { recursive: true, force: true });
    });

    it('puts bytes, text and streams and gets the same bytes back', async () => {
      const bytes = randomBytes(1000);
      await store.put(`${p}put/bytes.bin`, bytes);
      await store.put(`${p}put/text.txt`, 'héllo, wörld\n');
      await store.put(`${p}put/stream.bin`, Readable.from([bytes.subarray(0, 10), bytes.subarray(10)]));
      expect(Buffer.compare(await store.getBytes(`${p}put/bytes.bin`), bytes)).toBe(0);
      expect((await store.getBytes(`${p}put/text.txt`)).toString('utf8')).toBe('héllo, wörld\n');
      expect(Buffer.compare(await store.getBytes(`${p}put/stream.bin`), bytes)).toBe(0);
      const chunks: Buffer[] = [];
      for await (const chunk of await store.getStream(`${p}put/bytes.bin`)) chunks.push(chunk as Buffer);
      expect(Buffer.compare(Buffer.concat(chunks), bytes)).toBe(0);
    });

    it('overwrites an object with a new body', async () => {
      await store.put(`${p}over/x.txt`, 'first version, longer');
      await store.put(`${p}over/x.txt`, 'second');
      expect((await store.getBytes(`${p}over/x.txt`)).toString()).toBe('second');
      expect((await store.head(`${p}over/x.txt`))?.size).toBe(6);
    });

    it('reports missing objects: head undefined, exists false, reads throw ObjectNotFoundError', async () => {
      expect(await store.head(`${p}missing/none.txt`)).toBeUndefined();
      expect(await store.exists(`${p}missing/none.txt`)).toBe(false);
      await expect(store.getBytes(`${p}missing/none.txt`)).rejects.toBeInstanceOf(ObjectNotFoundError);
      await expect(store.getStream(`${p}missing/none.txt`)).rejects.toMatchObject({
        code: 'OBJECT_NOT_FOUND',
      });
      await expect(
        store.downloadToFile(`${p}missing/none.txt`, path.join(scratch, 'none')),
      ).rejects.toBeInstanceOf(ObjectNotFoundError);
    });

    it('uploads a file larger than one part and downloads it intact', async () => {
      const size = target.partSizeBytes * 2 + 12345;
      const bytes = randomBytes(size);
      const source = path.join(scratch, 'large.bin');
      writeFileSync(source, bytes);
      await store.putFile(`${p}large/large.bin`, source);
      expect((await store.head(`${p}large/large.bin`))?.size).toBe(size);
      const copy = path.join(scratch, 'nested', 'copy.bin');
      await store.downloadToFile(`${p}large/large.bin`, copy);
      expect(sha256(readFileSync(copy))).toBe(sha256(bytes));
    });

    it('lists every object under a prefix in key order, with sizes, as a plain string prefix', async () => {
      const keys = [
        'list/a.txt',
        'list/a-b.txt',
        'list/a/b.txt',
        'list/a/c/d.txt',
        'list/b.txt',
        'lister.txt',
      ];
      for (const key of keys) await store.put(`${p}${key}`, key);
      const listed = await collect(store.list(`${p}list/`));
      expect(listed.map((o) => o.key)).toEqual(
        ['list/a-b.txt', 'list/a.txt', 'list/a/b.txt', 'list/a/c/d.txt', 'list/b.txt'].map((k) => `${p}${k}`),
      );
      expect(listed[0]?.size).toBe('list/a-b.txt'.length);
      expect(listed[0]?.lastModified).toBeInstanceOf(Date);
      const partial = await collect(store.list(`${p}list/a`));
      expect(partial.map((o) => o.key.slice(p.length))).toEqual([
        'list/a-b.txt',
        'list/a.txt',
        'list/a/b.txt',
        'list/a/c/d.txt',
      ]);
      expect(await collect(store.list(`${p}nothing-here/`))).toEqual([]);
    });

    it('lists past the first page', async () => {
      const keys = Array.from({ length: 23 }, (_, i) => `${p}pages/k${String(i).padStart(3, '0')}`);
      await Promise.all(keys.map((key) => store.put(key, 'x')));
      const listed = await collect(store.list(`${p}pages/`));
      expect(listed.map((o) => o.key)).toEqual(keys);
    });

    it('deletes one object (missing is fine) and everything under a prefix', async () => {
      await store.put(`${p}del/one.txt`, '1');
      await store.delete(`${p}del/one.txt`);
      expect(await store.exists(`${p}del/one.txt`)).toBe(false);
      await store.delete(`${p}del/one.txt`);
      for (const key of ['del/run/a', 'del/run/b/c', 'del/run/b/d', 'del/runner'])
        await store.put(`${p}${key}`, key);
      expect(await store.deletePrefix(`${p}del/run/`)).toBe(3);
      expect((await collect(store.list(`${p}del/`))).map((o) => o.key)).toEqual([`${p}del/runner`]);
      await expect(store.deletePrefix('')).rejects.toMatchObject({ code: 'EMPTY_PREFIX' });
    });

    it('refuses keys that could escape or differ between stores', async () => {
      for (const key of ['/abs', '../up', 'a/../b', 'a//b', 'a/', '', 'a/./b']) {
        await expect(store.put(key, 'x')).rejects.toBeInstanceOf(InvalidObjectKeyError);
      }
    });

    describe('aborted by a signal', () => {
      /** How long an aborted operation may take to reject: it should not wait for the transfer's end. */
      const PROMPT_MS = 2000;

      /** A body that sends `bytes`, reports that it is under way, then stalls until the signal fires. */
      function stallingBody(bytes: number, signal: AbortSignal) {
        let resolveStarted!: () => void;
        const started = new Promise<void>((resolve) => (resolveStarted = resolve));
        async function* body() {
          for (let sent = 0; sent < bytes; sent += 64 * 1024)
            yield Buffer.alloc(Math.min(64 * 1024, bytes - sent), 7);
          resolveStarted();
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          yield Buffer.alloc(1024, 8);
        }
        return { body: Readable.from(body()), started };
      }

      async function expectPromptAbort(
        operation: Promise<unknown>,
        controller: AbortController,
      ): Promise<void> {
        const start = performance.now();
        controller.abort();
        await expect(operation).rejects.toBe(controller.signal.reason);
        expect(performance.now() - start).toBeLessThan(PROMPT_MS);
        expect((controller.signal.reason as Error).name).toBe('AbortError');
      }

      it('a put of a stream rejects with the reason promptly and leaves no object', async () => {
        const controller = new AbortController();
        const { body, started } = stallingBody(1024, controller.signal);
        const putting = store.put(`${p}abort/put-small.bin`, body, { signal: controller.signal });
        await started;
        await expectPromptAbort(putting, controller);
        expect(await store.exists(`${p}abort/put-small.bin`)).toBe(false);
        expect(await collect(store.list(`${p}abort/`))).toEqual([]);
      });

      it('a put of a stream larger than one part rejects promptly and leaves no object', async () => {
        const controller = new AbortController();
        const { body, started } = stallingBody(target.partSizeBytes + 64 * 1024, controller.signal);
        const putting = store.put(`${p}abort/put-large.bin`, body, { signal: controller.signal });
        await started;
        await expectPromptAbort(putting, controller);
        expect(await store.exists(`${p}abort/put-large.bin`)).toBe(false);
        expect(await collect(store.list(`${p}abort/`))).toEqual([]);
      });

      it('a put over an existing object keeps the old object', async () => {
        await store.put(`${p}abort/kept.txt`, 'old');
        const controller = new AbortController();
        const { body, started } = stallingBody(1024, controller.signal);
        const putting = store.put(`${p}abort/kept.txt`, body, { signal: controller.signal });
        await started;
        await expectPromptAbort(putting, controller);
        expect((await store.getBytes(`${p}abort/kept.txt`)).toString()).toBe('old');
        await store.delete(`${p}abort/kept.txt`);
      });

      it('a get stream being read rejects with the reason at once', async () => {
        const bytes = randomBytes(target.partSizeBytes * 2);
        await store.put(`${p}abort-get/big.bin`, bytes);
        const controller = new AbortController();
        const stream = await store.getStream(`${p}abort-get/big.bin`, { signal: controller.signal });
        const reading = (async () => {
          let read = 0;
          for await (const chunk of stream) {
            read += (chunk as Buffer).length;
            if (!controller.signal.aborted) controller.abort();
          }
          return read;
        })();
        const start = performance.now();
        // The reason exists only once the loop has aborted, so it is compared after the rejection.
        const error = await reading.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBe(controller.signal.reason);
        expect(performance.now() - start).toBeLessThan(PROMPT_MS);
        expect(stream.destroyed).toBe(true);
      });

      it('every operation given an aborted signal rejects with its reason and changes nothing', async () => {
        await store.put(`${p}abort-pre/x.txt`, 'x');
        const controller = new AbortController();
        controller.abort();
        const signal = controller.signal;
        const reason: unknown = signal.reason;
        const local = path.join(scratch, 'abort-pre', 'x.txt');
        writeFileSync(path.join(scratch, 'abort-source.txt'), 'new');
        await expect(store.put(`${p}abort-pre/y.txt`, 'y', { signal })).rejects.toBe(reason);
        await expect(
          store.putFile(`${p}abort-pre/z.txt`, path.join(scratch, 'abort-source.txt'), { signal }),
        ).rejects.toBe(reason);
        await expect(store.getStream(`${p}abort-pre/x.txt`, { signal })).rejects.toBe(reason);
        await expect(store.getBytes(`${p}abort-pre/x.txt`, { signal })).rejects.toBe(reason);
        await expect(store.downloadToFile(`${p}abort-pre/x.txt`, local, { signal })).rejects.toBe(reason);
        await expect(store.head(`${p}abort-pre/x.txt`, { signal })).rejects.toBe(reason);
        await expect(store.exists(`${p}abort-pre/x.txt`, { signal })).rejects.toBe(reason);
        await expect(collect(store.list(`${p}abort-pre/`, { signal }))).rejects.toBe(reason);
        await expect(store.delete(`${p}abort-pre/x.txt`, { signal })).rejects.toBe(reason);
        await expect(store.deletePrefix(`${p}abort-pre/`, { signal })).rejects.toBe(reason);
        expect((await collect(store.list(`${p}abort-pre/`))).map((o) => o.key)).toEqual([
          `${p}abort-pre/x.txt`,
        ]);
        expect(existsSync(path.dirname(local)) ? readdirSync(path.dirname(local)) : []).toEqual([]);
      });

      it('a listing aborted between objects rejects with the reason', async () => {
        for (const key of ['a', 'b', 'c']) await store.put(`${p}abort-list/${key}`, key);
        const controller = new AbortController();
        const seen: string[] = [];
        const listing = (async () => {
          for await (const info of store.list(`${p}abort-list/`, { signal: controller.signal })) {
            seen.push(info.key);
            controller.abort();
          }
        })();
        const error = await listing.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBe(controller.signal.reason);
        expect(controller.signal.aborted).toBe(true);
        expect(seen).toEqual([`${p}abort-list/a`]);
      });
    });

    it('leaves no object behind when a streamed put fails midway', async () => {
      function* failing() {
        yield Buffer.alloc(1024, 1);
        throw new Error('source broke');
      }
      await expect(store.put(`${p}broken/obj.bin`, Readable.from(failing()))).rejects.toThrow();
      expect(await store.exists(`${p}broken/obj.bin`)).toBe(false);
      expect(await collect(store.list(`${p}broken/`))).toEqual([]);
    });
  });
}
