// The planner's key index: ids in first-seen order, whether the earlier key is still in memory or
// already in its file, for keys short and long.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { KeyIndex } from '../../storage/key-index.js';

const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-keys-'));
let index: KeyIndex | undefined;
afterEach(() => index?.close());

describe('KeyIndex', () => {
  test('200,000 keys seen three times each get the ids of their first sighting', () => {
    index = new KeyIndex(path.join(dir, 'many.bin'));
    const n = 200_000;
    const key = (i: number) => `company ${i}|company-${i}.example.com`;
    const wrong: string[] = [];
    for (let i = 0; i < n; i++) if (index.id(key(i)) !== i) wrong.push(`first ${i}`);
    // Repeats in another order: most earlier keys are only in the file by now.
    for (let round = 0; round < 2; round++) {
      for (let i = n - 1; i >= 0; i -= 7) if (index.id(key(i)) !== i) wrong.push(`repeat ${i}`);
    }
    expect(wrong).toEqual([]);
    expect(index.size).toBe(n);
  });

  test('keys that differ in one character, in case or only in length stay apart; long keys too', () => {
    index = new KeyIndex(path.join(dir, 'near.bin'));
    const long = 'x'.repeat(3_000_000);
    const keys = ['acme', 'Acme', 'acme ', 'acmf', '', 'ü', 'u\u0308', long, `${long}y`, 'acme'];
    expect(keys.map((key) => index!.id(key))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 0]);
    expect(index.id(long)).toBe(7);
    expect(index.id(`${long}y`)).toBe(8);
  });
});
