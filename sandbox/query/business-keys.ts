// The match keys of every business (domain, network slug, normalised name) held in memory, so that a
// 50-row match is 50 hash probes instead of a scan of the businesses table (DuckDB has no fast point
// lookups: an `IN` list of 50 domains costs a full scan, ~80 ms for 200,000 businesses). The text of all
// keys is packed in one buffer (about 50 bytes a business) with open-addressing tables of row indexes,
// so the memory is a few tens of MB even for a large dataset, with no per-string object overhead.
import type { SandboxStore } from '../data/store.js';

const FIELDS = ['domain', 'slug', 'name'] as const;
type KeyField = (typeof FIELDS)[number];

/** FNV-1a over UTF-8 bytes: cheap, and good enough to spread short keys over a power-of-two table. */
export function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i += 1) {
    hash ^= bytes[i] as number;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

class KeyTable {
  /** Business row index + 1 per slot; 0 = empty. */
  private readonly slots: Int32Array;
  private readonly mask: number;

  constructor(
    entries: number,
    private readonly text: Buffer,
    private readonly starts: Int32Array,
    private readonly ends: Int32Array,
  ) {
    let capacity = 1024;
    while (capacity < entries * 2) capacity *= 2;
    this.slots = new Int32Array(capacity);
    this.mask = capacity - 1;
  }

  add(bix: number): void {
    const start = this.starts[bix] as number;
    const end = this.ends[bix] as number;
    if (end <= start) return;
    let slot = hashBytes(this.text, start, end) & this.mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
    this.slots[slot] = bix + 1;
  }

  /** Row indexes whose key equals `key`, in ascending order. */
  find(key: string): number[] {
    const bytes = Buffer.from(key, 'utf8');
    const found: number[] = [];
    let slot = hashBytes(bytes, 0, bytes.length) & this.mask;
    for (;;) {
      const entry = this.slots[slot] as number;
      if (entry === 0) break;
      const bix = entry - 1;
      const start = this.starts[bix] as number;
      const end = this.ends[bix] as number;
      if (end - start === bytes.length && this.text.compare(bytes, 0, bytes.length, start, end) === 0) {
        found.push(bix);
      }
      slot = (slot + 1) & this.mask;
    }
    return found.sort((a, b) => a - b);
  }

  value(bix: number): string {
    return this.text.toString('utf8', this.starts[bix], this.ends[bix]);
  }
}

export interface BusinessKeyHit {
  bix: number;
  domain: string | null;
  slug: string;
  nameNorm: string;
}

export class BusinessKeys {
  private constructor(private readonly tables: Record<KeyField, KeyTable>) {}

  /** Reads the keys from the businesses table in one streamed pass. */
  static async load(store: SandboxStore): Promise<BusinessKeys> {
    const size = store.businessIds.length;
    const parts: Buffer[] = [];
    let length = 0;
    const starts = Object.fromEntries(FIELDS.map((f) => [f, new Int32Array(size)])) as Record<
      KeyField,
      Int32Array
    >;
    const ends = Object.fromEntries(FIELDS.map((f) => [f, new Int32Array(size)])) as Record<
      KeyField,
      Int32Array
    >;
    await store.withConnection(async (connection) => {
      const result = await connection.stream(
        "SELECT bix, coalesce(domain, ''), network_slug, name_norm FROM businesses",
      );
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        const [bixes, ...columns] = chunk.getColumns() as [number[], string[], string[], string[]];
        const pieces: string[] = [];
        for (let i = 0; i < bixes.length; i += 1) {
          const bix = bixes[i] as number;
          FIELDS.forEach((field, f) => {
            const value = (columns[f] as string[])[i] ?? '';
            const bytes = Buffer.byteLength(value, 'utf8');
            starts[field][bix] = length;
            length += bytes;
            ends[field][bix] = length;
            pieces.push(value);
          });
        }
        parts.push(Buffer.from(pieces.join(''), 'utf8'));
      }
    });
    const text = Buffer.concat(parts, length);
    const tables = Object.fromEntries(
      FIELDS.map((field) => {
        const table = new KeyTable(size, text, starts[field], ends[field]);
        for (let bix = 0; bix < size; bix += 1) table.add(bix);
        return [field, table];
      }),
    ) as Record<KeyField, KeyTable>;
    return new BusinessKeys(tables);
  }

  private hit(bix: number): BusinessKeyHit {
    const domain = this.tables.domain.value(bix);
    return {
      bix,
      domain: domain.length > 0 ? domain : null,
      slug: this.tables.slug.value(bix),
      nameNorm: this.tables.name.value(bix),
    };
  }

  /** The normalised name of a business, by row index. */
  nameNorm(bix: number): string {
    return this.tables.name.value(bix);
  }

  /** The businesses carrying `value` as their domain, network slug or normalised name, by row index. */
  find(field: KeyField, value: string): BusinessKeyHit[] {
    return this.tables[field].find(value).map((bix) => this.hit(bix));
  }
}
