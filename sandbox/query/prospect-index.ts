// The prospect columns that filters read, held in typed arrays (about 14 bytes per prospect): a fetch
// scans them in prospect order in a few milliseconds and asks the database only for the page's records.
// Titles, regions and employers are compared through masks computed once per query.
import { createHash } from 'node:crypto';
import type { SandboxStore } from '../data/store.js';

/** What a prospect must satisfy; a null mask or range means "any". */
export interface ProspectSearch {
  /** Allowed title ids (positions in TITLES). */
  titles: Uint8Array | null;
  /** Allowed region ids (positions in REGION_LIST): the prospect's own location. */
  regions: Uint8Array | null;
  /** Allowed employers, by business row index. */
  employers: Uint8Array | null;
  /** Bits of `contact_flags` that must be set, and that must be clear. */
  flagsSet: number;
  flagsClear: number;
  totalMonths: [number, number];
  currentMonths: [number, number];
  excluded: ReadonlySet<number> | null;
}

export type PageWindow = { offset: number; limit: number } | { after: number; limit: number };

export interface SearchResult {
  /** Matching prospects in all. */
  total: number;
  /** Row indexes (pix) of the requested page, ascending. */
  page: number[];
}

export const ANY_RANGE: [number, number] = [-Infinity, Infinity];

/**
 * Recently served prospect records, least recently used dropped first: pages are read again (by the
 * next page of a cursor walk, by retries), and reading scattered rows from the database costs far more
 * than keeping a few thousand of them.
 */
export class RecentRecords {
  private readonly records = new Map<number, string>();
  private bytes = 0;

  constructor(private readonly budgetBytes: number) {}

  get(pix: number): string | undefined {
    const record = this.records.get(pix);
    if (record !== undefined) {
      this.records.delete(pix);
      this.records.set(pix, record);
    }
    return record;
  }

  set(pix: number, record: string): void {
    if (this.budgetBytes <= 0 || this.records.has(pix)) return;
    this.records.set(pix, record);
    this.bytes += record.length;
    for (const [oldest, value] of this.records) {
      if (this.bytes <= this.budgetBytes) break;
      this.records.delete(oldest);
      this.bytes -= value.length;
    }
  }
}

/**
 * Totals of recent searches, by a digest of their masks: the data never changes while serving, so the
 * next page of a query (or the same query with its values in another order) skips counting the rest.
 */
export class SearchTotals {
  private readonly totals = new Map<string, number>();

  constructor(private readonly capacity = 1024) {}

  static key(search: ProspectSearch): string {
    const hash = createHash('sha1');
    for (const mask of [search.titles, search.regions, search.employers]) {
      hash.update(mask === null ? 'any' : `${mask.length}:`);
      if (mask !== null) hash.update(mask);
    }
    hash.update(
      JSON.stringify([
        search.flagsSet,
        search.flagsClear,
        search.totalMonths.map(String),
        search.currentMonths.map(String),
        search.excluded === null ? null : [...search.excluded].sort((a, b) => a - b),
      ]),
    );
    return hash.digest('base64url');
  }

  get(key: string): number | undefined {
    return this.totals.get(key);
  }

  set(key: string, total: number): void {
    this.totals.delete(key);
    this.totals.set(key, total);
    for (const oldest of this.totals.keys()) {
      if (this.totals.size <= this.capacity) break;
      this.totals.delete(oldest);
    }
  }
}

export class ProspectIndex {
  private constructor(
    readonly size: number,
    private readonly bix: Int32Array,
    private readonly title: Uint16Array,
    private readonly region: Uint16Array,
    private readonly flags: Uint8Array,
    private readonly total: Int16Array,
    private readonly current: Int16Array,
  ) {}

  static async load(store: SandboxStore): Promise<ProspectIndex> {
    const size = store.meta.prospects;
    const bix = new Int32Array(size);
    const title = new Uint16Array(size);
    const region = new Uint16Array(size);
    const flags = new Uint8Array(size);
    const total = new Int16Array(size);
    const current = new Int16Array(size);
    await store.withConnection(async (connection) => {
      const result = await connection.stream(
        'SELECT pix, bix, title_id, region_id, contact_flags, total_months, current_months FROM prospects',
      );
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        const vectors = [0, 1, 2, 3, 4, 5, 6].map((c) => chunk.getColumnVector(c));
        const [pixV, bixV, titleV, regionV, flagsV, totalV, currentV] = vectors as [
          (typeof vectors)[number],
          ...(typeof vectors)[number][],
        ];
        for (let i = 0; i < chunk.rowCount; i += 1) {
          const pix = pixV.getItem(i) as number;
          bix[pix] = bixV?.getItem(i) as number;
          title[pix] = titleV?.getItem(i) as number;
          region[pix] = regionV?.getItem(i) as number;
          flags[pix] = flagsV?.getItem(i) as number;
          total[pix] = totalV?.getItem(i) as number;
          current[pix] = currentV?.getItem(i) as number;
        }
      }
    });
    return new ProspectIndex(size, bix, title, region, flags, total, current);
  }

  /**
   * Counts the matching prospects and returns the page of them the window selects, in pix order. With
   * `knownTotal` (the count of an earlier search with the same masks) the scan stops at the page's end.
   */
  search(search: ProspectSearch, window: PageWindow, knownTotal?: number): SearchResult {
    const { titles, regions, employers, flagsSet, flagsClear, excluded } = search;
    const [totalLow, totalHigh] = search.totalMonths;
    const [currentLow, currentHigh] = search.currentMonths;
    const ranged =
      totalLow !== -Infinity ||
      totalHigh !== Infinity ||
      currentLow !== -Infinity ||
      currentHigh !== Infinity;
    const page: number[] = [];
    const offset = 'offset' in window ? window.offset : 0;
    const after = 'after' in window ? window.after : -1;
    const limit = window.limit;
    let count = 0;
    for (let p = 0; p < this.size; p += 1) {
      if (titles !== null && titles[this.title[p] as number] === 0) continue;
      if (regions !== null && regions[this.region[p] as number] === 0) continue;
      const f = this.flags[p] as number;
      if ((f & flagsSet) !== flagsSet || (f & flagsClear) !== 0) continue;
      if (employers !== null && employers[this.bix[p] as number] === 0) continue;
      if (ranged) {
        const t = this.total[p] as number;
        const c = this.current[p] as number;
        if (t < totalLow || t > totalHigh || c < currentLow || c > currentHigh) continue;
      }
      if (excluded !== null && excluded.has(p)) continue;
      if (p > after && count >= offset && page.length < limit) {
        page.push(p);
        if (knownTotal !== undefined && page.length === limit) return { total: knownTotal, page };
      }
      count += 1;
    }
    return { total: knownTotal ?? count, page };
  }
}
