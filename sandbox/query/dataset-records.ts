// Serves the stored JSON records of the bulk datasets by row index (business datasets by business row
// index; prospect datasets, made with `prospectRecordSources`, by prospect row index). A dataset in use is loaded
// whole into memory (UTF-8 bytes with the common keys packed, an offset per business), so a 50-id bulk call is a few slices and no
// query; until that load finishes, and for datasets that do not fit the memory budget, records come from
// DuckDB. Least recently used datasets are dropped when the budget is exceeded.
import { BULK_DATASETS, type BulkDataset } from '../../contract/datasets.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import { datasetTable } from '../data/generate.js';
import type { ProspectDataset } from '../../contract/prospect-datasets.js';
import type { SandboxStore } from '../data/store.js';

/** Where a dataset's records are: `SELECT <index>, <json> FROM <from>`, indexes in [0, size). */
export interface RecordSource {
  from: string;
  index: string;
  json: string;
  size: number;
}

function businessRecordSources(store: SandboxStore): Record<BulkDataset, RecordSource> {
  const size = store.businessIds.length;
  return Object.fromEntries(
    BULK_DATASETS.map((dataset) => [
      dataset,
      { from: datasetTable(dataset), index: 'bix', json: 'json', size },
    ]),
  ) as Record<BulkDataset, RecordSource>;
}

/**
 * The prospect datasets by prospect row index. Contacts and posts take the row index of their prospect
 * id from the prospects table (a join on the id, as the lookup by id does), not their own `pix` column.
 */
export function prospectRecordSources(store: SandboxStore): Record<ProspectDataset, RecordSource> {
  const size = store.meta.prospects;
  const joined = (table: string) => ({
    from: `${table} r JOIN prospects p ON p.prospect_id = r.prospect_id`,
    index: 'p.pix',
    json: 'r.json',
    size,
  });
  return {
    profiles: { from: 'prospects', index: 'pix', json: 'record_json', size },
    contacts_information: joined('prospect_contacts'),
    network_posts: joined('prospect_posts'),
  };
}

interface LoadedDataset {
  /** Encoded records, one after the other, in slabs of SLAB_BYTES (a record never spans two slabs). */
  slabs: Buffer[];
  /** Bytes held in the slabs. */
  size: number;
  /** Start of each row's record (slab index * SLAB_SPAN + offset); -1 when it has none. */
  starts: Float64Array;
  lengths: Int32Array;
  codec: KeyCodec;
  lastUsed: number;
}

const SLAB_BYTES = 8 * 1024 * 1024;
/** Position multiplier of a slab index in `starts` (offsets stay below it; exact in a double). */
const SLAB_SPAN = 2 ** 32;
/** Records read to choose the codec's keys. */
const CODEC_SAMPLE = 500;

/**
 * A lossless packing of JSON text that stores each of the most common `"key":` runs as one control byte.
 * JSON text never holds a raw byte below 0x20 (those are escaped inside strings), so every such byte in
 * the packed text is a key, and unpacking gives back exactly the bytes that were packed: the records
 * served are the stored ones, in about half the memory (keys are 40–50% of a record).
 */
export class KeyCodec {
  private readonly byKey = new Map<string, string>();
  private readonly keyBytes: Buffer[] = [];
  private readonly keyLengths = new Int32Array(32);
  private static readonly KEY = /"[A-Za-z0-9_]+":/g;

  constructor(keys: readonly string[]) {
    keys.slice(0, 31).forEach((key, i) => {
      this.byKey.set(key, String.fromCharCode(i + 1));
      const bytes = Buffer.from(key, 'utf8');
      this.keyBytes[i + 1] = bytes;
      this.keyLengths[i + 1] = bytes.length;
    });
  }

  /** The keys that save the most bytes in a sample of records. */
  static fromSample(records: readonly string[]): KeyCodec {
    const saved = new Map<string, number>();
    for (const record of records) {
      for (const [key] of record.matchAll(KeyCodec.KEY))
        saved.set(key, (saved.get(key) ?? 0) + key.length - 1);
    }
    return new KeyCodec([...saved].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([key]) => key));
  }

  pack(json: string): string {
    if (this.byKey.size === 0) return json;
    return json.replace(KeyCodec.KEY, (key) => this.byKey.get(key) ?? key);
  }

  unpack(packed: Buffer): Buffer {
    let length = 0;
    for (let i = 0; i < packed.length; i += 1) {
      const byte = packed[i] as number;
      length += byte < 32 ? (this.keyLengths[byte] as number) : 1;
    }
    if (length === packed.length) return packed;
    const out = Buffer.allocUnsafe(length);
    let written = 0;
    let runStart = 0;
    for (let i = 0; i < packed.length; i += 1) {
      const byte = packed[i] as number;
      if (byte >= 32) continue;
      if (i > runStart) written += packed.copy(out, written, runStart, i);
      written += (this.keyBytes[byte] as Buffer).copy(out, written);
      runStart = i + 1;
    }
    if (packed.length > runStart) packed.copy(out, written, runStart);
    return out;
  }
}

type DatasetState =
  | { kind: 'cold' }
  | { kind: 'loading'; done: Promise<void> }
  | { kind: 'loaded'; data: LoadedDataset }
  | { kind: 'too-big' };

export interface DatasetRecordsOptions {
  /** Bytes of records kept in memory across datasets; default 192 MiB. 0 keeps none (always query). */
  budgetBytes?: number;
  logger?: Logger;
}

export class DatasetRecords<D extends string = BulkDataset> {
  private readonly states = new Map<D, DatasetState>();
  private readonly budget: number;
  private readonly logger: Logger;
  private readonly sources: Record<D, RecordSource>;
  private closed = false;

  /** The business datasets by default; `sources` for others (see `prospectRecordSources`). */
  constructor(
    private readonly store: SandboxStore,
    options: DatasetRecordsOptions = {},
    sources?: Record<D, RecordSource>,
  ) {
    this.budget = options.budgetBytes ?? 192 * 1024 * 1024;
    this.logger = options.logger ?? silentLogger;
    this.sources = sources ?? (businessRecordSources(store) as Record<D, RecordSource>);
    for (const dataset of Object.keys(this.sources) as D[]) this.states.set(dataset, { kind: 'cold' });
  }

  /** Starts loading datasets into memory in the background (e.g. the ones a deployment uses most). */
  preload(datasets: readonly D[]): Promise<void> {
    return Promise.all(datasets.map((dataset) => this.ensureLoading(dataset))).then(() => undefined);
  }

  /** Whether a dataset is served from memory. */
  isLoaded(dataset: D): boolean {
    return this.states.get(dataset)?.kind === 'loaded';
  }

  /**
   * The record bytes of each row index, in order; null where the row has no record.
   */
  async lookup(dataset: D, bixes: readonly number[]): Promise<(Buffer | null)[]> {
    const state = this.states.get(dataset);
    if (state?.kind === 'loaded') {
      const { data } = state;
      data.lastUsed = performance.now();
      return bixes.map((bix) => {
        const start = data.starts[bix] ?? -1;
        if (start < 0) return null;
        const slab = data.slabs[Math.floor(start / SLAB_SPAN)] as Buffer;
        const offset = start % SLAB_SPAN;
        return data.codec.unpack(slab.subarray(offset, offset + (data.lengths[bix] ?? 0)));
      });
    }
    if (state?.kind === 'cold') void this.ensureLoading(dataset);
    return this.query(dataset, bixes);
  }

  private async query(dataset: D, bixes: readonly number[]): Promise<(Buffer | null)[]> {
    if (bixes.length === 0) return [];
    const { from, index, json } = this.sources[dataset];
    const unique = [...new Set(bixes)];
    const placeholders = unique.map((_, i) => `$b${i}`).join(', ');
    const values = Object.fromEntries(unique.map((bix, i) => [`b${i}`, bix]));
    const rows = await this.store.query(
      `SELECT ${index} AS ix, ${json} AS json FROM ${from} WHERE ${index} IN (${placeholders})`,
      values,
    );
    const found = new Map<number, Buffer>();
    for (const row of rows) found.set(Number(row.ix), Buffer.from(String(row.json), 'utf8'));
    return bixes.map((bix) => found.get(bix) ?? null);
  }

  private ensureLoading(dataset: D): Promise<void> {
    const state = this.states.get(dataset);
    if (!state || state.kind !== 'cold' || this.budget <= 0 || this.closed) return Promise.resolve();
    const done = this.load(dataset).catch((error: unknown) => {
      this.logger.warn(
        { err: error, dataset },
        'sandbox: loading dataset records failed; serving from the database',
      );
      this.states.set(dataset, { kind: 'cold' });
    });
    this.states.set(dataset, { kind: 'loading', done });
    return done;
  }

  private async load(dataset: D): Promise<void> {
    const started = performance.now();
    const { from, index, json, size: rowCount } = this.sources[dataset];
    const [sizeRow] = await this.store.query(
      `SELECT coalesce(sum(strlen(${json})), 0) AS bytes, count(*) AS n FROM ${from}`,
    );
    const total = Number(sizeRow?.bytes ?? 0);
    if (total > this.budget) {
      this.states.set(dataset, { kind: 'too-big' });
      this.logger.info(
        { dataset, bytes: total, budget: this.budget },
        'sandbox: dataset exceeds the record memory budget; served from the database',
      );
      return;
    }
    this.makeRoom(total, dataset);
    const sample = await this.store.query(`SELECT ${json} AS json FROM ${from} LIMIT ${CODEC_SAMPLE}`);
    const codec = KeyCodec.fromSample(sample.map((row) => String(row.json)));
    const starts = new Float64Array(rowCount).fill(-1);
    const lengths = new Int32Array(rowCount);
    const slabs: Buffer[] = [];
    let slab = Buffer.allocUnsafe(0);
    let offset = 0;
    let size = 0;
    await this.store.withConnection(async (connection) => {
      const result = await connection.stream(`SELECT ${index}, ${json} FROM ${from}`);
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        const [bixColumn, jsonColumn] = chunk.getColumns() as [number[], string[]];
        for (let i = 0; i < bixColumn.length; i += 1) {
          const packed = codec.pack(jsonColumn[i] as string);
          const need = Buffer.byteLength(packed, 'utf8');
          if (offset + need > slab.length) {
            // Close the slab at what it holds and start another (a record larger than a slab gets its own).
            if (slabs.length > 0) slabs[slabs.length - 1] = slab.subarray(0, offset);
            slab = Buffer.allocUnsafe(Math.max(SLAB_BYTES, need));
            slabs.push(slab);
            offset = 0;
          }
          const written = slab.write(packed, offset, 'utf8');
          const bix = bixColumn[i] as number;
          if (!Number.isInteger(bix) || bix < 0 || bix >= rowCount) {
            throw new Error(`${dataset}: row index ${bix} outside [0, ${rowCount})`);
          }
          starts[bix] = (slabs.length - 1) * SLAB_SPAN + offset;
          lengths[bix] = written;
          offset += written;
          size += written;
        }
        if (this.closed) return;
      }
    });
    if (slabs.length > 0) slabs[slabs.length - 1] = Buffer.from(slab.subarray(0, offset));
    if (this.closed) return;
    this.states.set(dataset, {
      kind: 'loaded',
      data: { slabs, size, starts, lengths, codec, lastUsed: performance.now() },
    });
    this.logger.info(
      { dataset, bytes: total, ms: Math.round(performance.now() - started) },
      'sandbox: dataset records in memory',
    );
  }

  /** Drops least recently used datasets until `incoming` more bytes fit the budget. */
  private makeRoom(incoming: number, loading: D): void {
    const loaded = () =>
      [...this.states].flatMap(([dataset, state]) =>
        state.kind === 'loaded' && dataset !== loading ? [{ dataset, data: state.data }] : [],
      );
    let used = loaded().reduce((sum, entry) => sum + entry.data.size, 0);
    for (const entry of loaded().sort((a, b) => a.data.lastUsed - b.data.lastUsed)) {
      if (used + incoming <= this.budget) break;
      this.states.set(entry.dataset, { kind: 'cold' });
      used -= entry.data.size;
      this.logger.info({ dataset: entry.dataset }, 'sandbox: dataset records dropped from memory (budget)');
    }
  }

  /** Waits for loads in progress (shutdown, tests). */
  async settle(): Promise<void> {
    await Promise.all(
      [...this.states.values()].flatMap((state) => (state.kind === 'loading' ? [state.done] : [])),
    );
  }

  close(): void {
    this.closed = true;
  }
}
