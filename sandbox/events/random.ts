// Seeded randomness for the event generator: the same seed text yields the same sequence on any
// machine and Node version (sfc32 over a SHA-256 of the seed), unlike Math.random.
import { createHash, randomBytes } from 'node:crypto';

export interface EventRandom {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** `length` lowercase hex digits. */
  hex(length: number): string;
}

export function seededRandom(seed: string): EventRandom {
  const digest = createHash('sha256').update(seed).digest();
  let a = digest.readUInt32LE(0);
  let b = digest.readUInt32LE(4);
  let c = digest.readUInt32LE(8);
  let d = digest.readUInt32LE(12);
  const nextUint32 = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (a + b + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t;
  };
  // sfc32 needs a few rounds before its output stops reflecting the seed words.
  for (let i = 0; i < 12; i += 1) nextUint32();
  return fromUint32(nextUint32);
}

/** Unseeded randomness (crypto-backed) for events created while the sandbox runs. */
export function liveRandom(): EventRandom {
  return fromUint32(() => randomBytes(4).readUInt32LE(0));
}

function fromUint32(nextUint32: () => number): EventRandom {
  const next = (): number => nextUint32() / 4294967296;
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick<T>(items: readonly T[]): T {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new RangeError('pick from an empty list');
      return item;
    },
    hex(length) {
      let out = '';
      while (out.length < length) out += nextUint32().toString(16).padStart(8, '0');
      return out.slice(0, length);
    },
  };
}
