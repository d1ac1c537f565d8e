// Durations (`30d`, `1h`, `90s`) and event time bounds (`--since 30d`, `--since 2026-10-01`) as the
// events commands take them. Pure, so the pull workflow resolves a relative bound at its own start
// time, which lets a schedule run the same input every day.

/** Thrown when a duration or time bound cannot be read; the message shows the accepted forms. */
export class TimeBoundError extends Error {
  override readonly name = 'TimeBoundError';
  readonly code = 'TIME_BOUND_INVALID';
}

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** `500ms`, `90s`, `15m`, `1h`, `30d`, `2w` (a bare number is milliseconds) → milliseconds. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$/i.exec(text);
  if (!match) {
    throw new TimeBoundError(`"${text}" is not a duration; use e.g. 500ms, 90s, 15m, 1h, 30d or 2w`);
  }
  const unit = (match[2] ?? 'ms').toLowerCase();
  return Math.round(Number(match[1]) * (UNIT_MS[unit] ?? 1));
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * A time bound as the events endpoint takes it: a relative duration (`30d` = 30 days before `nowMs`)
 * becomes an ISO date-time; a date or date-time passes through unchanged (the service reads a date
 * as midnight UTC, or the end of that day for an upper bound).
 */
export function resolveTimeBound(text: string, nowMs: number): string {
  const trimmed = text.trim();
  if (DATE_TIME.test(trimmed)) {
    // Date.parse rolls 2026-02-30 over into March; a day that does not exist is an error.
    const [year, month, day] = trimmed.slice(0, 10).split('-').map(Number) as [number, number, number];
    const calendar = new Date(Date.UTC(year, month - 1, day));
    if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) {
      throw new TimeBoundError(`"${text}" is not a real date`);
    }
    return trimmed;
  }
  try {
    return new Date(nowMs - parseDuration(trimmed)).toISOString();
  } catch {
    throw new TimeBoundError(
      `"${text}" is neither a duration before now (30d, 12h) nor a date (2026-10-01, 2026-10-01T12:00:00Z)`,
    );
  }
}
