// Seeded randomness for the data generator: every entity draws from its own stream, derived from the
// seed, a kind and an index, so the same seed gives the same data on any machine and in any order.
// sfc32 with 128 bits of state; Math.random and DuckDB's random()/hash() are never used for data.

/** murmur3's 32-bit finaliser: a bijection on uint32, so distinct inputs give distinct outputs. */
export function fmix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A 32-bit hash of a string (FNV-1a folded through fmix32); stable across platforms. */
export function hashString(text: string, salt = 0): number {
  let h = (0x811c9dc5 ^ salt) >>> 0;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

export class SeededRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(a: number, b: number, c: number, d: number) {
    this.a = a >>> 0;
    this.b = b >>> 0;
    this.c = c >>> 0;
    this.d = d >>> 0;
    // sfc32 needs a few rounds before its output stops echoing the seed words.
    for (let i = 0; i < 12; i += 1) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Picks by weight; `weights[i]` belongs to `items[i]`. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.next() * total;
    for (let i = 0; i < items.length; i += 1) {
      r -= weights[i] ?? 0;
      if (r < 0) return items[i] as T;
    }
    return items[items.length - 1] as T;
  }

  /** `count` distinct items in random order (all of them when the list is shorter). */
  sample<T>(items: readonly T[], count: number): T[] {
    const copy = items.slice();
    const n = Math.min(count, copy.length);
    for (let i = 0; i < n; i += 1) {
      const j = i + Math.floor(this.next() * (copy.length - i));
      const tmp = copy[i] as T;
      copy[i] = copy[j] as T;
      copy[j] = tmp;
    }
    return copy.slice(0, n);
  }

  /** Approximately normal (Irwin–Hall of four uniforms), mean 0, standard deviation 1. */
  normal(): number {
    return (this.next() + this.next() + this.next() + this.next() - 2) * Math.sqrt(3);
  }

  /** A number rounded to `digits` decimals, uniform in [min, max). */
  decimal(min: number, max: number, digits: number): number {
    const scale = 10 ** digits;
    return Math.round((min + this.next() * (max - min)) * scale) / scale;
  }
}

/** Seed words of a generation run, from the user's seed (number or text). */
export interface SeedKey {
  readonly words: readonly [number, number, number, number];
  readonly text: string;
}

export function seedKey(seed: string | number): SeedKey {
  const text = String(seed);
  return {
    text,
    words: [hashString(text, 1), hashString(text, 2), hashString(text, 3), hashString(text, 4)],
  };
}

/**
 * The random stream of entity `index` of `kind`. The first state word is injective in the index, so two
 * entities of one kind never share a stream.
 */
export function streamFor(key: SeedKey, kind: string, index: number): SeededRandom {
  const k = hashString(kind);
  const [w0, w1, w2, w3] = key.words;
  return new SeededRandom(
    fmix32((index ^ w0 ^ k) >>> 0),
    fmix32(w1 + k),
    fmix32(w2 ^ Math.imul(index, 0x9e3779b1)),
    w3 ^ k,
  );
}

/**
 * A lower-case hex identifier of `hexLength` characters (a multiple of 8) for entity `index` of `kind`.
 * The first 8 characters are a bijection of the index, so identifiers of one kind never collide.
 */
export function entityId(key: SeedKey, kind: string, index: number, hexLength: number): string {
  const k = hashString(kind, 7);
  let id = '';
  for (let word = 0; word < hexLength / 8; word += 1) {
    const salt = fmix32((key.words[word % 4] ?? 0) ^ k ^ Math.imul(word + 1, 0x27d4eb2f));
    const value = word === 0 ? fmix32((index ^ salt) >>> 0) : fmix32(fmix32((index + salt) >>> 0) ^ salt);
    id += value.toString(16).padStart(8, '0');
  }
  return id;
}
