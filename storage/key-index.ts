// Exact deduplication of keys in the order they are first seen, with memory that does not grow with the
// length of the keys: a key's bytes go to a scratch file, and memory holds 16 bytes per key (hash,
// position, length) plus an open-addressing table of ids. A lookup compares bytes only on a hash hit,
// reading the earlier key back from the file (the page cache, in practice) or from the unflushed tail.
// Keys are compared as UTF-8, so a lone surrogate counts as U+FFFD (as DuckDB, which holds text as
// UTF-8, would see it).
// A million keys cost about 25 MB, where a `Map` of the key strings costs ten times that.
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

const TAIL_BYTES = 1 << 20;

export class KeyIndex {
  /** Keys seen so far; ids run 0..size-1 in first-seen order. */
  size = 0;
  private readonly fd: number;
  private tail = Buffer.allocUnsafe(TAIL_BYTES);
  private tailUsed = 0;
  /** Bytes of keys already in the file; the tail continues from here. */
  private flushed = 0;
  private hashes = new Int32Array(1024);
  private positions = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  /** id + 1 per slot, 0 when empty; at most half full. */
  private slots = new Int32Array(2048);
  private key = Buffer.allocUnsafe(4096);
  private readBack = Buffer.allocUnsafe(4096);

  /** `file` is created (or truncated) and holds the keys' bytes until `close`. */
  constructor(file: string) {
    this.fd = openSync(file, 'w+');
  }

  /** The id of `key`: an earlier key's id, or `size` before the call when the key is new. */
  id(key: string): number {
    const length = this.encode(key);
    const hash = hashBytes(this.key, length);
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === 0) break;
      const id = entry - 1;
      if (this.hashes[id] === hash && this.lengths[id] === length && this.matches(id, length)) return id;
      slot = (slot + 1) & mask;
    }
    const id = this.size;
    this.size += 1;
    if (id === this.hashes.length) this.growIds();
    this.hashes[id] = hash;
    this.lengths[id] = length;
    this.positions[id] = this.store(length);
    this.slots[slot] = id + 1;
    if (this.size * 2 > this.slots.length) this.growSlots();
    return id;
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Writes `key` into `this.key` as UTF-8 and returns its length in bytes. */
  private encode(key: string): number {
    if (key.length * 3 > this.key.length)
      this.key = Buffer.allocUnsafe(Math.max(key.length * 3, this.key.length * 2));
    return this.key.write(key, 0, 'utf8');
  }

  private matches(id: number, length: number): boolean {
    const position = this.positions[id]!;
    if (position >= this.flushed) {
      const start = position - this.flushed;
      return this.key.compare(this.tail, start, start + length, 0, length) === 0;
    }
    if (length > this.readBack.length)
      this.readBack = Buffer.allocUnsafe(Math.max(length, this.readBack.length * 2));
    let read = 0;
    while (read < length) read += readSync(this.fd, this.readBack, read, length - read, position + read);
    return this.key.compare(this.readBack, 0, length, 0, length) === 0;
  }

  /** Appends `this.key` to the key bytes and returns its position. */
  private store(length: number): number {
    if (this.tailUsed + length > this.tail.length) this.flush();
    const position = this.flushed + this.tailUsed;
    if (length > this.tail.length) {
      writeAll(this.fd, this.key, length, position);
      this.flushed += length;
    } else {
      this.key.copy(this.tail, this.tailUsed, 0, length);
      this.tailUsed += length;
    }
    return position;
  }

  private flush(): void {
    if (this.tailUsed === 0) return;
    writeAll(this.fd, this.tail, this.tailUsed, this.flushed);
    this.flushed += this.tailUsed;
    this.tailUsed = 0;
  }

  private growIds(): void {
    const capacity = this.hashes.length * 2;
    const hashes = new Int32Array(capacity);
    hashes.set(this.hashes);
    this.hashes = hashes;
    const positions = new Float64Array(capacity);
    positions.set(this.positions);
    this.positions = positions;
    const lengths = new Uint32Array(capacity);
    lengths.set(this.lengths);
    this.lengths = lengths;
  }

  private growSlots(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let id = 0; id < this.size; id++) {
      let slot = this.hashes[id]! & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = id + 1;
    }
    this.slots = slots;
  }
}

function writeAll(fd: number, bytes: Buffer, length: number, position: number): void {
  let written = 0;
  while (written < length) written += writeSync(fd, bytes, written, length - written, position + written);
}

/** FNV-1a over the bytes, then murmur3's finaliser so the low bits (the slot) are well mixed. */
function hashBytes(bytes: Buffer, length: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
