// The prospect columns that filters read, held in typed arrays (about 13 bytes per prospect), and bitmaps
// (one bit per prospect) for each job level, job department, country of the prospect, country of the
// employer and contact flag (about 10 bytes per prospect in all). A search ANDs the bitmaps of its filters
// (values of one filter ORed), so its count is a popcount and its page a walk over set bits; only the
// filters without a bitmap (job titles, region codes, other employer attributes, ranges, exclusions) are
// checked prospect by prospect, and only on the prospects the bitmaps leave. Then the database is asked
// only for the page's records.
import { createHash } from 'node:crypto';
import { HAS_EMAIL, HAS_PHONE } from '../data/prospect-batches.js';
import { TITLES } from '../data/people.js';
import { REGION_LIST } from '../data/places.js';
import type { SandboxStore } from '../data/store.js';

/**
 * Filters the index answers from bitmaps: a prospect matches a list when one of its values applies (a
 * title's level or department, or one of the title's other levels or departments); null means "any".
 */
export interface IndexedTerms {
  levels: readonly string[] | null;
  /** Canonical department names (lower case). */
  departments: readonly string[] | null;
  /** Country codes (upper case) of the prospect's own location. */
  countries: readonly string[] | null;
  /** Country codes (upper case) of the employer's location. */
  employerCountries: readonly string[] | null;
}

/** What a prospect must satisfy; a null mask, list or range means "any". */
export interface ProspectSearch {
  terms: IndexedTerms;
  /** Allowed title ids (positions in TITLES), for the filters the terms do not cover (job titles). */
  titles: Uint8Array | null;
  /** Allowed region ids (positions in REGION_LIST) of the prospect's own location (region codes). */
  regions: Uint8Array | null;
  /** Allowed employers, by business row index (employer filters other than the country). */
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
        [
          search.terms.levels,
          search.terms.departments,
          search.terms.countries,
          search.terms.employerCountries,
        ].map((values) => (values === null ? null : [...new Set(values)].sort())),
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

const WORD_BITS = 32;
/** The contact flags that have bitmaps; a search on any other bit matches no prospect (none is set). */
const FLAG_BITS = [HAS_EMAIL, HAS_PHONE] as const;

/** Set bits of one 32-bit word. */
function popcount(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Bitmaps by value, one bit per prospect; a value's bitmap is made when a prospect first has it. */
class BitmapFamily {
  readonly bitmaps = new Map<string, Uint32Array>();

  constructor(private readonly words: number) {}

  bitmapOf(value: string): Uint32Array {
    let bitmap = this.bitmaps.get(value);
    if (bitmap === undefined) {
      bitmap = new Uint32Array(this.words);
      this.bitmaps.set(value, bitmap);
    }
    return bitmap;
  }
}

function setBit(bitmap: Uint32Array, p: number): void {
  bitmap[p >>> 5] = ((bitmap[p >>> 5] as number) | (1 << (p & 31))) >>> 0;
}

export class ProspectIndex {
  private readonly words: number;
  /** Candidates of the running search, and the OR of one filter's values (searches run one at a time). */
  private readonly candidates: Uint32Array;
  private readonly union: Uint32Array;

  private constructor(
    readonly size: number,
    private readonly bix: Int32Array,
    private readonly title: Uint16Array,
    private readonly region: Uint16Array,
    private readonly total: Int16Array,
    private readonly current: Int16Array,
    private readonly levels: BitmapFamily,
    private readonly departments: BitmapFamily,
    private readonly countries: BitmapFamily,
    private readonly employerCountries: BitmapFamily,
    private readonly flags: BitmapFamily,
  ) {
    this.words = Math.ceil(size / WORD_BITS);
    this.candidates = new Uint32Array(this.words);
    this.union = new Uint32Array(this.words);
  }

  static async load(store: SandboxStore): Promise<ProspectIndex> {
    const size = store.meta.prospects;
    const words = Math.ceil(size / WORD_BITS);
    const bix = new Int32Array(size);
    const title = new Uint16Array(size);
    const region = new Uint16Array(size);
    const total = new Int16Array(size);
    const current = new Int16Array(size);
    const families = {
      levels: new BitmapFamily(words),
      departments: new BitmapFamily(words),
      countries: new BitmapFamily(words),
      employerCountries: new BitmapFamily(words),
      flags: new BitmapFamily(words),
    };
    const flagBitmaps = FLAG_BITS.map((bit) => families.flags.bitmapOf(String(bit)));
    // The bitmaps each title, region and employer region sets, by their ids.
    const titleBitmaps = TITLES.map((entry) => [
      ...new Set([entry.level, ...(entry.alsoLevels ?? [])].map((level) => families.levels.bitmapOf(level))),
      ...new Set(
        [entry.department, ...(entry.alsoDepartments ?? [])].map((department) =>
          families.departments.bitmapOf(department),
        ),
      ),
    ]);
    const regionCountry = REGION_LIST.map((entry) => families.countries.bitmapOf(entry.country.code));
    const employerRegionCountry = REGION_LIST.map((entry) =>
      families.employerCountries.bitmapOf(entry.country.code),
    );
    const businessRegion = new Uint16Array(store.businessIds.length);
    await store.withConnection(async (connection) => {
      const businesses = await connection.stream('SELECT bix, region_id FROM businesses');
      for (;;) {
        const chunk = await businesses.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        const [bixV, regionV] = [chunk.getColumnVector(0), chunk.getColumnVector(1)];
        for (let i = 0; i < chunk.rowCount; i += 1)
          businessRegion[bixV.getItem(i) as number] = regionV.getItem(i) as number;
      }
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
          const b = bixV?.getItem(i) as number;
          const t = titleV?.getItem(i) as number;
          const r = regionV?.getItem(i) as number;
          const f = flagsV?.getItem(i) as number;
          bix[pix] = b;
          title[pix] = t;
          region[pix] = r;
          total[pix] = totalV?.getItem(i) as number;
          current[pix] = currentV?.getItem(i) as number;
          for (const bitmap of titleBitmaps[t] ?? []) setBit(bitmap, pix);
          const country = regionCountry[r];
          if (country) setBit(country, pix);
          const employerCountry = employerRegionCountry[businessRegion[b] as number];
          if (employerCountry) setBit(employerCountry, pix);
          FLAG_BITS.forEach((bit, k) => {
            if ((f & bit) !== 0) setBit(flagBitmaps[k] as Uint32Array, pix);
          });
        }
      }
    });
    return new ProspectIndex(
      size,
      bix,
      title,
      region,
      total,
      current,
      families.levels,
      families.departments,
      families.countries,
      families.employerCountries,
      families.flags,
    );
  }

  /** ANDs into `candidates` the OR of the bitmaps of `values`; returns whether it was narrowed. */
  private narrow(family: BitmapFamily, values: readonly string[] | null, first: boolean): boolean {
    if (values === null) return false;
    const { candidates, union, words } = this;
    union.fill(0);
    for (const value of new Set(values)) {
      const bitmap = family.bitmaps.get(value);
      if (bitmap === undefined) continue;
      for (let w = 0; w < words; w += 1) union[w] = ((union[w] as number) | (bitmap[w] as number)) >>> 0;
    }
    if (first) candidates.set(union);
    else
      for (let w = 0; w < words; w += 1)
        candidates[w] = ((candidates[w] as number) & (union[w] as number)) >>> 0;
    return true;
  }

  /** The prospects the bitmaps allow, in `candidates`; false when no bitmap applies (every prospect). */
  private selectCandidates(search: ProspectSearch): boolean {
    const { terms } = search;
    let narrowed = false;
    narrowed = this.narrow(this.levels, terms.levels, !narrowed) || narrowed;
    narrowed = this.narrow(this.departments, terms.departments, !narrowed) || narrowed;
    narrowed = this.narrow(this.countries, terms.countries, !narrowed) || narrowed;
    narrowed = this.narrow(this.employerCountries, terms.employerCountries, !narrowed) || narrowed;
    const { candidates, words } = this;
    for (let bit = 1; bit < 256; bit <<= 1) {
      const set = (search.flagsSet & bit) !== 0;
      const clear = (search.flagsClear & bit) !== 0;
      if (!set && !clear) continue;
      const bitmap = this.flags.bitmaps.get(String(bit));
      if (!narrowed) candidates.fill(0xffffffff);
      narrowed = true;
      if (set && clear) candidates.fill(0);
      else if (bitmap === undefined) {
        if (set) candidates.fill(0);
      } else if (set) {
        for (let w = 0; w < words; w += 1)
          candidates[w] = ((candidates[w] as number) & (bitmap[w] as number)) >>> 0;
      } else {
        for (let w = 0; w < words; w += 1)
          candidates[w] = ((candidates[w] as number) & ~(bitmap[w] as number)) >>> 0;
      }
    }
    if (narrowed && this.size % WORD_BITS !== 0) {
      // Bits past the last prospect (set by a complement) stay clear.
      const last = words - 1;
      candidates[last] = ((candidates[last] as number) & (2 ** (this.size % WORD_BITS) - 1)) >>> 0;
    }
    return narrowed;
  }

  /**
   * Counts the matching prospects and returns the page of them the window selects, in pix order. With
   * `knownTotal` (the count of an earlier search with the same filters) the walk stops at the page's end.
   */
  search(search: ProspectSearch, window: PageWindow, knownTotal?: number): SearchResult {
    const { titles, regions, employers, excluded } = search;
    const [totalLow, totalHigh] = search.totalMonths;
    const [currentLow, currentHigh] = search.currentMonths;
    const ranged =
      totalLow !== -Infinity ||
      totalHigh !== Infinity ||
      currentLow !== -Infinity ||
      currentHigh !== Infinity;
    const residual = titles !== null || regions !== null || employers !== null || ranged || excluded !== null;
    const offset = 'offset' in window ? window.offset : 0;
    const after = 'after' in window ? window.after : -1;
    const limit = window.limit;
    const narrowed = this.selectCandidates(search);
    const { candidates, words } = this;
    if (narrowed && !residual) return this.bitmapPage(offset, after, limit, knownTotal);

    const page: number[] = [];
    let count = 0;
    // Whether prospect p passes the filters the bitmaps do not cover.
    const passes = (p: number): boolean => {
      if (titles !== null && titles[this.title[p] as number] === 0) return false;
      if (regions !== null && regions[this.region[p] as number] === 0) return false;
      if (employers !== null && employers[this.bix[p] as number] === 0) return false;
      if (ranged) {
        const t = this.total[p] as number;
        const c = this.current[p] as number;
        if (t < totalLow || t > totalHigh || c < currentLow || c > currentHigh) return false;
      }
      return excluded === null || !excluded.has(p);
    };
    for (let w = 0; w < words; w += 1) {
      let word = narrowed ? (candidates[w] as number) : 0xffffffff;
      while (word !== 0) {
        const low = word & -word;
        const p = w * WORD_BITS + 31 - Math.clz32(low);
        word = (word ^ low) >>> 0;
        if (p >= this.size) break;
        if (!passes(p)) continue;
        if (p > after && count >= offset && page.length < limit) {
          page.push(p);
          if (knownTotal !== undefined && page.length === limit) return { total: knownTotal, page };
        }
        count += 1;
      }
    }
    return { total: knownTotal ?? count, page };
  }

  /** Count and page straight from the candidate bitmap (no filter left to check per prospect). */
  private bitmapPage(offset: number, after: number, limit: number, knownTotal?: number): SearchResult {
    const { candidates, words } = this;
    const page: number[] = [];
    let count = 0;
    let w = 0;
    // Whole words before the page: counted, not walked.
    for (; w < words; w += 1) {
      const word = candidates[w] as number;
      const n = popcount(word);
      if (count + n > offset && (w + 1) * WORD_BITS - 1 > after) break;
      count += n;
    }
    for (; w < words && page.length < limit; w += 1) {
      let word = candidates[w] as number;
      while (word !== 0) {
        const low = word & -word;
        const p = w * WORD_BITS + 31 - Math.clz32(low);
        word = (word ^ low) >>> 0;
        if (p > after && count >= offset && page.length < limit) page.push(p);
        count += 1;
      }
    }
    if (knownTotal !== undefined) return { total: knownTotal, page };
    for (; w < words; w += 1) count += popcount(candidates[w] as number);
    return { total: count, page };
  }
}
