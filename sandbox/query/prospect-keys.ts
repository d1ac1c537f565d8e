// The match keys of every prospect held in memory, so that a 50-row prospect match is a few hash probes
// instead of a query (the query scanned and joined the prospects table with five OR'ed conditions, about
// 30 ms of CPU per call over 50,000 prospects, and took seconds under load). Also the prospect id of each
// row index and back, for bulk enrichment from memory.
//
// Keys are packed as in ./business-keys.ts (one buffer of key bytes per kind, an offset and an owner row
// per key, open-addressing tables of key numbers): email hashes (work and personal, in one table, since
// an email matches either column), phone hashes, network slugs and normalised full names; the hashes
// and ids as binary (32 and 20 bytes). A stored hash that is not 64 lower-case hex digits is left out:
// the hashes asked for are always such digests, so it could never be equal to one.
import type { SandboxStore } from '../data/store.js';
import { hashBytes, type BusinessKeys } from './business-keys.js';

const HASH_TEXT = /^[0-9a-f]{64}$/;
const ID_TEXT = /^[0-9a-f]{40}$/;
/** A lone surrogate: such a string is never equal to a stored one (DuckDB holds valid UTF-8). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Appends keys (bytes) with their owner row, then answers which rows own a key. */
class KeyTable {
  private parts: Buffer[] = [];
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private bytes = 0;
  private offsetList: number[] = [0];
  private ownerList: number[] = [];
  private text = Buffer.alloc(0);
  private offsets = new Int32Array(1);
  private owners = new Int32Array(0);
  private slots = new Int32Array(0);
  private mask = 0;

  add(key: Buffer, owner: number): void {
    this.pending.push(key);
    this.pendingBytes += key.length;
    this.bytes += key.length;
    this.offsetList.push(this.bytes);
    this.ownerList.push(owner);
    if (this.pendingBytes > 1 << 20) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    this.parts.push(Buffer.concat(this.pending, this.pendingBytes));
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Packs what was added and builds the hash table. */
  seal(): void {
    this.flush();
    this.text = Buffer.concat(this.parts, this.bytes);
    this.parts = [];
    this.offsets = Int32Array.from(this.offsetList);
    this.owners = Int32Array.from(this.ownerList);
    this.offsetList = [];
    this.ownerList = [];
    const entries = this.owners.length;
    let capacity = 1024;
    while (capacity < entries * 2) capacity *= 2;
    this.slots = new Int32Array(capacity);
    this.mask = capacity - 1;
    for (let entry = 0; entry < entries; entry += 1) {
      let slot =
        hashBytes(this.text, this.offsets[entry] as number, this.offsets[entry + 1] as number) & this.mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = entry + 1;
    }
  }

  /** Owner rows of the entries equal to `key`, ascending, each once. */
  owned(key: Buffer): number[] {
    const found: number[] = [];
    let slot = hashBytes(key, 0, key.length) & this.mask;
    for (;;) {
      const entry = this.slots[slot] as number;
      if (entry === 0) break;
      const start = this.offsets[entry - 1] as number;
      const end = this.offsets[entry] as number;
      if (end - start === key.length && this.text.compare(key, 0, key.length, start, end) === 0) {
        found.push(this.owners[entry - 1] as number);
      }
      slot = (slot + 1) & this.mask;
    }
    if (found.length < 2) return found;
    return [...new Set(found)].sort((a, b) => a - b);
  }

  get memoryBytes(): number {
    return this.text.length + this.offsets.byteLength + this.owners.byteLength + this.slots.byteLength;
  }
}

/** What an input asks for, normalised as ./match.ts does. */
export interface ProspectMatchKeys {
  email: string | null;
  phone: string | null;
  slug: string | null;
  fullName: string | null;
  company: string | null;
  businessId: string | null;
}

export class ProspectKeys {
  private constructor(
    private readonly store: SandboxStore,
    private readonly businessKeys: BusinessKeys,
    readonly size: number,
    /** Prospect ids as 20 bytes each, by row index. */
    private readonly ids: Buffer,
    private readonly idTable: Int32Array,
    /** Employer row index of each prospect; -1 when the businesses table has no such row. */
    private readonly bix: Int32Array,
    private readonly emails: KeyTable,
    private readonly phones: KeyTable,
    private readonly slugs: KeyTable,
    private readonly names: KeyTable,
  ) {}

  /**
   * Reads the keys from the prospects table in one streamed pass. Fails (and matching stays a query)
   * when the table is not what the in-memory answer assumes: row indexes 0 to n-1 once each, ids of 40
   * lower-case hex digits, no null name or slug.
   */
  static async load(store: SandboxStore, businessKeys: BusinessKeys): Promise<ProspectKeys> {
    const size = store.meta.prospects;
    const businesses = store.businessIds.length;
    const ids = Buffer.alloc(size * 20);
    const seen = new Uint8Array(size);
    const bix = new Int32Array(size).fill(-1);
    const emails = new KeyTable();
    const phones = new KeyTable();
    const slugs = new KeyTable();
    const names = new KeyTable();
    let rows = 0;
    await store.withConnection(async (connection) => {
      const result = await connection.stream(
        `SELECT pix, prospect_id, bix, email_hash, personal_email_hash, phone_hash, network_slug, full_name_norm
         FROM prospects ORDER BY pix`,
      );
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        const [pixes, prospectIds, bixes, work, personal, phone, slug, name] = chunk.getColumns() as [
          number[],
          string[],
          (number | null)[],
          (string | null)[],
          (string | null)[],
          (string | null)[],
          (string | null)[],
          (string | null)[],
        ];
        for (let i = 0; i < pixes.length; i += 1) {
          const pix = pixes[i] as number;
          const id = prospectIds[i] as string;
          const slugText = slug[i];
          const nameText = name[i];
          if (!Number.isInteger(pix) || pix < 0 || pix >= size || seen[pix] === 1) {
            throw new Error(`prospect keys: row index ${pix} out of range or repeated`);
          }
          if (typeof id !== 'string' || !ID_TEXT.test(id)) throw new Error(`prospect keys: id ${id} not hex`);
          if (slugText === null || slugText === undefined || nameText === null || nameText === undefined) {
            throw new Error(`prospect keys: prospect ${id} has no network slug or name`);
          }
          seen[pix] = 1;
          rows += 1;
          ids.write(id, pix * 20, 'hex');
          const b = bixes[i];
          if (typeof b === 'number' && Number.isInteger(b) && b >= 0 && b < businesses) bix[pix] = b;
          for (const hash of [work[i], personal[i]]) {
            if (typeof hash === 'string' && HASH_TEXT.test(hash)) emails.add(Buffer.from(hash, 'hex'), pix);
          }
          const phoneHash = phone[i];
          if (typeof phoneHash === 'string' && HASH_TEXT.test(phoneHash)) {
            phones.add(Buffer.from(phoneHash, 'hex'), pix);
          }
          slugs.add(Buffer.from(slugText, 'utf8'), pix);
          names.add(Buffer.from(nameText, 'utf8'), pix);
        }
      }
    });
    if (rows !== size) throw new Error(`prospect keys: ${rows} rows for ${size} prospects`);
    for (const table of [emails, phones, slugs, names]) table.seal();
    let capacity = 1024;
    while (capacity < size * 2) capacity *= 2;
    const idTable = new Int32Array(capacity);
    for (let pix = 0; pix < size; pix += 1) {
      let slot = hashBytes(ids, pix * 20, pix * 20 + 20) & (capacity - 1);
      while (idTable[slot] !== 0) slot = (slot + 1) & (capacity - 1);
      idTable[slot] = pix + 1;
    }
    return new ProspectKeys(store, businessKeys, size, ids, idTable, bix, emails, phones, slugs, names);
  }

  /** Bytes held (keys, offsets, tables, ids). */
  get memoryBytes(): number {
    return (
      this.ids.length +
      this.idTable.byteLength +
      this.bix.byteLength +
      [this.emails, this.phones, this.slugs, this.names].reduce((sum, table) => sum + table.memoryBytes, 0)
    );
  }

  /** The prospect id of a row index. */
  idOf(pix: number): string {
    return this.ids.toString('hex', pix * 20, pix * 20 + 20);
  }

  /** The row index of a prospect id (as stored: 40 lower-case hex digits); undefined when unknown. */
  pixOf(id: string): number | undefined {
    if (!ID_TEXT.test(id)) return undefined;
    const key = Buffer.from(id, 'hex');
    const mask = this.idTable.length - 1;
    let slot = hashBytes(key, 0, 20) & mask;
    for (;;) {
      const entry = this.idTable[slot] as number;
      if (entry === 0) return undefined;
      const pix = entry - 1;
      if (this.ids.compare(key, 0, 20, pix * 20, pix * 20 + 20) === 0) return pix;
      slot = (slot + 1) & mask;
    }
  }

  private businessIdOf(pix: number): string | undefined {
    const b = this.bix[pix] as number;
    return b < 0 ? undefined : this.store.businessIds[b];
  }

  /**
   * The first prospect by row index that a key kind finds, as the query's `ORDER BY p.pix` and the
   * order of kinds in ./match.ts: email (work or personal), phone, profile, then name with a company
   * whose name resembles the one given. A prospect whose employer row is missing is never found (the
   * query joins the businesses table).
   */
  match(key: ProspectMatchKeys, resemble: (given: string, stored: string) => boolean): string | null {
    const employerOk = (pix: number) => {
      const businessId = this.businessIdOf(pix);
      return businessId !== undefined && (key.businessId === null || businessId === key.businessId);
    };
    const first = (pixes: readonly number[], test: (pix: number) => boolean = employerOk) => {
      for (const pix of pixes) if (test(pix)) return pix;
      return undefined;
    };
    const found =
      (key.email !== null && HASH_TEXT.test(key.email)
        ? first(this.emails.owned(Buffer.from(key.email, 'hex')))
        : undefined) ??
      (key.phone !== null && HASH_TEXT.test(key.phone)
        ? first(this.phones.owned(Buffer.from(key.phone, 'hex')))
        : undefined) ??
      (key.slug !== null && !LONE_SURROGATE.test(key.slug)
        ? first(this.slugs.owned(Buffer.from(key.slug, 'utf8')))
        : undefined) ??
      (key.fullName && key.company && !LONE_SURROGATE.test(key.fullName)
        ? first(
            this.names.owned(Buffer.from(key.fullName, 'utf8')),
            (pix) =>
              employerOk(pix) &&
              resemble(key.company as string, this.businessKeys.nameNorm(this.bix[pix] as number)),
          )
        : undefined);
    return found === undefined ? null : this.idOf(found);
  }
}
