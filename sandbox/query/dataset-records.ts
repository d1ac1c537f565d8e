// Serves the stored JSON records of the bulk datasets by business row index. A dataset in use is loaded
// whole into one Buffer (UTF-8 bytes, an offset per business), so a 50-id bulk call is a few slices and no
// query; until that load finishes, and for datasets that do not fit the memory budget, records come from
// DuckDB. Least recently used datasets are dropped when the budget is exceeded.
import { BULK_DATASETS, type BulkDataset } from '../../contract/datasets.js';
import { silentLogger, type Logger } from '../../lib/logger.js';
import { datasetTable } from '../data/generate.js';
import type { SandboxStore } from '../data/store.js';

interface LoadedDataset {
  bytes: Buffer;
  /** Start of each business's record in `bytes`; -1 when it has none. */
  starts: Int32Array;
  lengths: Int32Array;
  lastUsed: number;
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

export class DatasetRecords {
  private readonly states = new Map<BulkDataset, DatasetState>();
  private readonly budget: number;
  private readonly logger: Logger;
  private closed = false;

  constructor(
    private readonly store: SandboxStore,
    options: DatasetRecordsOptions = {},
  ) {
    this.budget = options.budgetBytes ?? 192 * 1024 * 1024;
    this.logger = options.logger ?? silentLogger;
    for (const dataset of BULK_DATASETS) this.states.set(dataset, { kind: 'cold' });
  }

  /** Starts loading datasets into memory in the background (e.g. the ones a deployment uses most). */
  preload(datasets: readonly BulkDataset[]): Promise<void> {
    return Promise.all(datasets.map((dataset) => this.ensureLoading(dataset))).then(() => undefined);
  }

  /** Whether a dataset is served from memory. */
  isLoaded(dataset: BulkDataset): boolean {
    return this.states.get(dataset)?.kind === 'loaded';
  }

  /**
   * The record bytes of each business row index, in order; null where the business has no record.
   */
  async lookup(dataset: BulkDataset, bixes: readonly number[]): Promise<(Buffer | null)[]> {
    const state = this.states.get(dataset);
    if (state?.kind === 'loaded') {
      const { data } = state;
      data.lastUsed = performance.now();
      return bixes.map((bix) => {
        const start = data.starts[bix] ?? -1;
        return start < 0 ? null : data.bytes.subarray(start, start + (data.lengths[bix] ?? 0));
      });
    }
    if (state?.kind === 'cold') void this.ensureLoading(dataset);
    return this.query(dataset, bixes);
  }

  private async query(dataset: BulkDataset, bixes: readonly number[]): Promise<(Buffer | null)[]> {
    if (bixes.length === 0) return [];
    const unique = [...new Set(bixes)];
    const placeholders = unique.map((_, i) => `$b${i}`).join(', ');
    const values = Object.fromEntries(unique.map((bix, i) => [`b${i}`, bix]));
    const rows = await this.store.query(
      `SELECT bix, json FROM ${datasetTable(dataset)} WHERE bix IN (${placeholders})`,
      values,
    );
    const found = new Map<number, Buffer>();
    for (const row of rows) found.set(Number(row.bix), Buffer.from(String(row.json), 'utf8'));
    return bixes.map((bix) => found.get(bix) ?? null);
  }

  private ensureLoading(dataset: BulkDataset): Promise<void> {
    const state = this.states.get(dataset);
    if (!state || state.kind !== 'cold' || this.budget <= 0) return Promise.resolve();
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

  private async load(dataset: BulkDataset): Promise<void> {
    const started = performance.now();
    const table = datasetTable(dataset);
    const [sizeRow] = await this.store.query(
      `SELECT coalesce(sum(strlen(json)), 0) AS bytes, count(*) AS n FROM ${table}`,
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
    const businesses = this.store.businessIds.length;
    const starts = new Int32Array(businesses).fill(-1);
    const lengths = new Int32Array(businesses);
    const bytes = Buffer.allocUnsafe(total);
    let offset = 0;
    await this.store.withConnection(async (connection) => {
      const result = await connection.stream(`SELECT bix, json FROM ${table}`);
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        const [bixColumn, jsonColumn] = chunk.getColumns() as [number[], string[]];
        for (let i = 0; i < bixColumn.length; i += 1) {
          const written = bytes.write(jsonColumn[i] as string, offset, 'utf8');
          const bix = bixColumn[i] as number;
          starts[bix] = offset;
          lengths[bix] = written;
          offset += written;
        }
        if (this.closed) return;
      }
    });
    if (this.closed) return;
    this.states.set(dataset, {
      kind: 'loaded',
      data: { bytes, starts, lengths, lastUsed: performance.now() },
    });
    this.logger.info(
      { dataset, bytes: total, ms: Math.round(performance.now() - started) },
      'sandbox: dataset records in memory',
    );
  }

  /** Drops least recently used datasets until `incoming` more bytes fit the budget. */
  private makeRoom(incoming: number, loading: BulkDataset): void {
    const loaded = () =>
      [...this.states].flatMap(([dataset, state]) =>
        state.kind === 'loaded' && dataset !== loading ? [{ dataset, data: state.data }] : [],
      );
    let used = loaded().reduce((sum, entry) => sum + entry.data.bytes.length, 0);
    for (const entry of loaded().sort((a, b) => a.data.lastUsed - b.data.lastUsed)) {
      if (used + incoming <= this.budget) break;
      this.states.set(entry.dataset, { kind: 'cold' });
      used -= entry.data.bytes.length;
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
