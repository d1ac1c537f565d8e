// A tiny SQL builder: conditions are text, every value is a bound parameter, so no request text ever
// becomes SQL.
import type { DuckDBValue } from '@duckdb/node-api';

export class SqlParams {
  readonly values: Record<string, DuckDBValue> = {};
  private next = 0;

  /** Binds a value and returns its placeholder (`$p3`). */
  bind(value: DuckDBValue): string {
    const name = `p${this.next}`;
    this.next += 1;
    this.values[name] = value;
    return `$${name}`;
  }

  /** `(ph1, ph2, …)` for an IN list; callers make sure the list is not empty. */
  list(values: readonly DuckDBValue[]): string {
    return `(${values.map((value) => this.bind(value)).join(', ')})`;
  }
}

export const NEVER = 'FALSE';

/** OR of the parts; FALSE when there are none. */
export function anyOf(parts: readonly string[]): string {
  if (parts.length === 0) return NEVER;
  return parts.length === 1 ? (parts[0] as string) : `(${parts.join(' OR ')})`;
}

/** AND of the parts; TRUE when there are none. */
export function allOf(parts: readonly string[]): string {
  if (parts.length === 0) return 'TRUE';
  return parts.length === 1 ? (parts[0] as string) : `(${parts.join(' AND ')})`;
}

/** Membership in a `|a|b|` text column: true when it holds any of the values. */
export function containsAny(column: string, values: readonly string[], params: SqlParams): string {
  return anyOf(values.map((value) => `contains(${column}, ${params.bind(`|${value.toLowerCase()}|`)})`));
}

/** Wraps a condition in NOT when `negate` is set. */
export function negated(condition: string, negate: boolean | undefined): string {
  return negate ? `(NOT ${condition})` : condition;
}
