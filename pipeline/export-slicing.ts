// Splitting a search whose result set is past the offset cap into disjoint slices that each fit under
// it: a slice narrows the search on one more dimension (a range of months, a run of enum values, a part
// of the filter's own value list), and a split is kept only when the children's counts add up exactly
// to the parent's, which proves the children are disjoint and miss nothing. Pure and deterministic:
// the counts come from a callback (probe activities in the workflow, a table in unit tests).

/**
 * A filter that partitions the records: every record has exactly one value on it. `range` is an
 * integer `gte`/`lte` filter over `min..max`; `list` is a `values` filter over an ordered domain of
 * `max + 1` values (indexes `0..max`), `flag` a `value: boolean` filter over `[false, true]`.
 */
export interface Dimension {
  field: string;
  kind: 'range' | 'list' | 'flag';
  min: number;
  max: number;
  /** The domain's values when short enough to show (enums); absent for a filter's own long lists. */
  labels?: string[];
  /**
   * The service can negate this filter (business filters), so records whose value lies outside the
   * domain — null or unknown — get a slice of their own instead of leaving a gap.
   */
  negatable: boolean;
}

/** A slice's bound on one dimension: an inclusive run of domain positions, or everything outside it. */
export type Bound = { from: number; to: number } | { outside: true };
/** Bounds a slice adds to the export's filters, by filter name. */
export type Constraints = Record<string, Bound>;

/** A record count; `exact: false` means "at least `n`" (an offset probe saturates at the fetch size). */
export interface Count {
  n: number;
  exact: boolean;
}

export interface PlannedSlice {
  constraints: Constraints;
  count: Count;
  /** No dimension could split it under the cap: fetched by cursor, or truncated at the cap. */
  oversize: boolean;
}

export interface RejectedSplit {
  field: string;
  /** `gap`: the children hold fewer records than the parent (nulls or values outside the domain); `overlap`: more. */
  reason: 'gap' | 'overlap' | 'no-progress';
  parent: number;
  children: number;
}

export interface SlicePlan {
  total: Count;
  slices: PlannedSlice[];
  /** Count calls made while planning (the root's included). */
  probes: number;
  rejected: RejectedSplit[];
  /** Planning stopped splitting because it reached the probe budget. */
  probeBudgetReached: boolean;
}

export type CountSlice = (constraints: Constraints) => Promise<Count>;

/** Counts of candidate bounds on one dimension, in order; by default one `count` per candidate. */
export type MeasureSplit = (
  parent: Constraints,
  dimension: Dimension,
  bounds: Bound[],
) => Promise<Count[]> | undefined;

export interface PlanOptions {
  /** Most records one slice may hold (the offset cap). */
  cap: number;
  /** Dimensions in order of preference. */
  dimensions: Dimension[];
  /** Count calls planning may make before it stops splitting; default 2,000. */
  maxProbes?: number;
  /** Slices are packed up to this share of the cap, leaving room for records added while fetching; default 0.95. */
  fill?: number;
  /** Candidate buckets per split of a long domain; default 16. */
  maxBuckets?: number;
  /** A faster way to count a split's candidates (business stats); undefined falls back to `count`. */
  measure?: MeasureSplit;
}

interface Node {
  constraints: Constraints;
  count: Count;
  /** Dimensions that cannot split this node (or an ancestor), so its subtree does not try them again. */
  spent: string[];
  /** Child positions from the root, for a stable slice order. */
  path: number[];
}

const isOutside = (bound: Bound): bound is { outside: true } => 'outside' in bound;

function fits(count: Count, cap: number): boolean {
  return count.exact && count.n <= cap;
}

/** Equal-width runs covering `from..to`; each position once, in order. */
export function bucketBounds(from: number, to: number, buckets: number): { from: number; to: number }[] {
  const width = to - from + 1;
  const k = Math.max(1, Math.min(buckets, width));
  const out: { from: number; to: number }[] = [];
  for (let i = 0; i < k; i += 1) {
    const start = from + Math.floor((i * width) / k);
    const end = from + Math.floor(((i + 1) * width) / k) - 1;
    out.push({ from: start, to: end });
  }
  return out;
}

/**
 * Merges adjacent buckets into runs of at most `target` records. A bucket over the target stays alone
 * (to be split again); empty buckets join a neighbour, so the runs still cover the whole parent bound.
 */
export function packRuns(
  buckets: { from: number; to: number }[],
  counts: Count[],
  target: number,
): { bound: { from: number; to: number }; count: Count }[] {
  const runs: { bound: { from: number; to: number }; count: Count }[] = [];
  let current: { bound: { from: number; to: number }; count: Count } | undefined;
  buckets.forEach((bucket, i) => {
    const count = counts[i] ?? { n: 0, exact: true };
    const big = !count.exact || count.n > target;
    if (current && (big || !current.count.exact || current.count.n + count.n > target)) {
      // An empty bucket never starts a run of its own: it extends the run before it.
      if (count.exact && count.n === 0) {
        current.bound = { from: current.bound.from, to: bucket.to };
        return;
      }
      runs.push(current);
      current = undefined;
    }
    if (!current) {
      current = { bound: { ...bucket }, count: { ...count } };
      return;
    }
    current.bound = { from: current.bound.from, to: bucket.to };
    current.count = { n: current.count.n + count.n, exact: current.count.exact && count.exact };
  });
  if (current) runs.push(current);
  return runs;
}

function bucketsFor(
  dimension: Dimension,
  bound: { from: number; to: number },
  n: number,
  options: PlanOptions,
) {
  const width = bound.to - bound.from + 1;
  const maxBuckets = options.maxBuckets ?? 16;
  // Short enumerations are counted value by value; long ranges in a few buckets per cap's worth.
  if (dimension.kind !== 'range' && width <= maxBuckets) return bucketBounds(bound.from, bound.to, width);
  const wanted = Math.ceil((3 * n) / options.cap);
  return bucketBounds(bound.from, bound.to, Math.max(2, Math.min(maxBuckets, wanted)));
}

/** Whether the children's counts prove a partition of the parent: disjoint and complete. */
function partitionVerdict(parent: Count, children: Count[]): 'ok' | 'gap' | 'overlap' {
  const sum = children.reduce((s, c) => s + c.n, 0);
  const exact = parent.exact && children.every((c) => c.exact);
  if (exact) return sum === parent.n ? 'ok' : sum < parent.n ? 'gap' : 'overlap';
  // A saturated count only bounds from below: what can be checked is that nothing went missing.
  return parent.exact && sum > parent.n && children.every((c) => c.exact) ? 'overlap' : 'ok';
}

/**
 * Plans the slices of a search: the root (no added bounds) when it fits, else a recursive split on the
 * first dimension that partitions each oversized slice. Slices that no dimension can split are kept
 * and marked `oversize`.
 */
export async function planSlices(options: PlanOptions, count: CountSlice): Promise<SlicePlan> {
  const maxProbes = options.maxProbes ?? 2_000;
  const target = Math.max(1, Math.floor(options.cap * (options.fill ?? 0.95)));
  const rejected: RejectedSplit[] = [];
  let probes = 1;
  let probeBudgetReached = false;
  const total = await count({});
  const leaves: (PlannedSlice & { path: number[] })[] = [];

  const measure = async (node: Node, dimension: Dimension, bounds: Bound[]): Promise<Count[]> => {
    const fast = options.measure?.(node.constraints, dimension, bounds);
    if (fast) {
      probes += 1;
      return fast;
    }
    probes += bounds.length;
    return Promise.all(bounds.map((bound) => count({ ...node.constraints, [dimension.field]: bound })));
  };

  /** Candidate buckets of one dimension and their counts; zooms into the one bucket holding every record. */
  const measureDimension = async (
    node: Node,
    dimension: Dimension,
    whole: { from: number; to: number },
  ): Promise<{ buckets: { from: number; to: number }[]; counts: Count[]; outside: boolean } | 'budget'> => {
    let current = whole;
    for (;;) {
      const buckets = bucketsFor(dimension, current, node.count.n, options);
      const outside = dimension.negatable && !(dimension.field in node.constraints);
      const bounds: Bound[] = outside ? [...buckets, { outside: true }] : buckets;
      if (probes + bounds.length > maxProbes) return 'budget';
      const counts = await measure(node, dimension, bounds);
      const full = buckets.findIndex(
        (_, i) => counts[i]?.exact && counts[i].n === node.count.n && node.count.exact,
      );
      const only = buckets[full];
      // Equal-width buckets over a wide range may put every record in one of them (months cluster in
      // 0–480 of 0–1199): look inside that bucket instead of giving the dimension up.
      if (only && !outside && only.to > only.from && (only.from > current.from || only.to < current.to)) {
        current = only;
        continue;
      }
      if (current !== whole && buckets.length > 0) {
        // The empty outskirts of the zoom join the edge buckets, so the bounds still cover the whole range.
        buckets[0] = { from: whole.from, to: buckets[0]?.to ?? whole.from };
        const last = buckets.length - 1;
        buckets[last] = { from: buckets[last]?.from ?? whole.to, to: whole.to };
      }
      return { buckets, counts, outside };
    }
  };

  const split = async (node: Node): Promise<Node[] | undefined> => {
    for (const dimension of options.dimensions) {
      if (node.spent.includes(dimension.field)) continue;
      const current = node.constraints[dimension.field] ?? { from: dimension.min, to: dimension.max };
      if (isOutside(current) || current.from >= current.to) continue;
      const measured = await measureDimension(node, dimension, current);
      if (measured === 'budget') {
        probeBudgetReached = true;
        return undefined;
      }
      const { buckets, counts, outside } = measured;
      const verdict = partitionVerdict(node.count, counts);
      const sum = counts.reduce((s, c) => s + c.n, 0);
      if (verdict !== 'ok') {
        rejected.push({ field: dimension.field, reason: verdict, parent: node.count.n, children: sum });
        node.spent.push(dimension.field);
        continue;
      }
      const nonEmpty = counts.filter((c) => c.n > 0).length;
      if (nonEmpty <= 1) {
        rejected.push({ field: dimension.field, reason: 'no-progress', parent: node.count.n, children: sum });
        node.spent.push(dimension.field);
        continue;
      }
      const runs = packRuns(buckets, counts.slice(0, buckets.length), target);
      const children: Node[] = runs.map((run, i) => ({
        constraints: { ...node.constraints, [dimension.field]: run.bound },
        count: run.count,
        spent: [...node.spent],
        path: [...node.path, i],
      }));
      const rest = outside ? counts[buckets.length] : undefined;
      if (rest && rest.n > 0) {
        children.push({
          constraints: { ...node.constraints, [dimension.field]: { outside: true } },
          count: rest,
          spent: [...node.spent],
          path: [...node.path, runs.length],
        });
      }
      return children;
    }
    return undefined;
  };

  let level: Node[] = [{ constraints: {}, count: total, spent: [], path: [] }];
  while (level.length > 0) {
    const next: Node[] = [];
    await Promise.all(
      level.map(async (node) => {
        if (fits(node.count, options.cap)) {
          leaves.push({ constraints: node.constraints, count: node.count, oversize: false, path: node.path });
          return;
        }
        const children = probeBudgetReached ? undefined : await split(node);
        if (!children) {
          leaves.push({ constraints: node.constraints, count: node.count, oversize: true, path: node.path });
          return;
        }
        next.push(...children);
      }),
    );
    level = next;
  }
  leaves.sort((a, b) => comparePaths(a.path, b.path));
  return {
    total,
    slices: leaves.map(({ path: _path, ...slice }) => slice),
    probes,
    rejected,
    probeBudgetReached,
  };
}

function comparePaths(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return a.length - b.length;
}

/** A slice's bounds in words, e.g. `total_experience_months 0–119, company_size 11-50..51-200`. */
export function describeConstraints(dimensions: Dimension[], constraints: Constraints): string {
  const parts = Object.entries(constraints).map(([field, bound]) => {
    const dimension = dimensions.find((d) => d.field === field);
    if (isOutside(bound)) return `${field} none of its ${(dimension?.max ?? 0) + 1} known values (or empty)`;
    if (!dimension || dimension.kind === 'range')
      return bound.from === bound.to ? `${field} = ${bound.from}` : `${field} ${bound.from}–${bound.to}`;
    const label = (i: number) => dimension.labels?.[i] ?? `#${i}`;
    if (!dimension.labels) return `${field} values #${bound.from}–#${bound.to} of the filter's list`;
    return bound.from === bound.to
      ? `${field} = ${label(bound.from)}`
      : `${field} ${label(bound.from)} .. ${label(bound.to)}`;
  });
  return parts.length ? parts.join(', ') : 'the whole search';
}
