// One clock for every date the sandbox serves relative to "now". The generated data describes a fixed
// day (DATA_AS_OF, deterministic) and is served as if that day were the clock's current day (UTC): posts'
// `created_at` move by whole days, so `days_since_posted` stays true, as the events plugin moves its
// seeded history (its anchor is the same day).
import { DATA_AS_OF_MS } from '../data/businesses.js';
import { isoTimestamp } from '../data/records.js';

const DAY_MS = 86_400_000;

/** Milliseconds from the data's as-of day to the start of the clock's current day (UTC). */
export function asOfShiftMs(nowMs: number): number {
  return Math.floor(nowMs / DAY_MS) * DAY_MS - DATA_AS_OF_MS;
}

const CREATED_AT = /"created_at":"([^"]+)"/g;

/** A posts record (JSON text) with its `created_at` moved by `shiftMs`. */
export function shiftPostDates(json: string, shiftMs: number): string {
  if (shiftMs === 0) return json;
  return json.replace(CREATED_AT, (whole, iso: string) => {
    const ms = Date.parse(iso);
    return Number.isNaN(ms) ? whole : `"created_at":"${isoTimestamp(ms + shiftMs)}"`;
  });
}
