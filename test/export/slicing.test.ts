// The slice planner on in-memory records: slices must be disjoint, complete and under the cap, and a
// dimension that would leave records out (nulls) or count them twice (multi-valued) must be refused.
import { describe, expect, test } from 'vitest';
import {
  bucketBounds,
  packRuns,
  planSlices,
  type Bound,
  type Constraints,
  type Count,
  type Dimension,
} from '../../pipeline/export-slicing.js';
import { buildExportPlan } from '../../pipeline/export-plan.js';

interface Row {
  id: number;
  months: number | null;
  size: string | null;
  /** Multi-valued, like a prospect's job levels. */
  levels: string[];
  email: boolean;
}

const SIZES = ['1-10', '11-50', '51-200', '201-500'];

function rows(n: number, options: { nullMonths?: number; nullSizes?: number } = {}): Row[] {
  const out: Row[] = [];
  for (let id = 0; id < n; id += 1) {
    out.push({
      id,
      months: id < (options.nullMonths ?? 0) ? null : (id * 37) % 480,
      size: id % 97 < (options.nullSizes ?? 0) ? null : (SIZES[id % SIZES.length] ?? null),
      levels: id % 3 === 0 ? ['manager', 'director'] : ['manager'],
      email: id % 2 === 0,
    });
  }
  return out;
}

const MONTHS: Dimension = { field: 'months', kind: 'range', min: 0, max: 1199, negatable: false };
const SIZE: Dimension = { field: 'size', kind: 'list', min: 0, max: 3, labels: SIZES, negatable: false };
const LEVELS: Dimension = {
  field: 'levels',
  kind: 'list',
  min: 0,
  max: 1,
  labels: ['manager', 'director'],
  negatable: false,
};
const EMAIL: Dimension = {
  field: 'email',
  kind: 'flag',
  min: 0,
  max: 1,
  labels: ['false', 'true'],
  negatable: false,
};

function matches(row: Row, dimensions: Dimension[], constraints: Constraints): boolean {
  return Object.entries(constraints).every(([field, bound]) => {
    const dimension = dimensions.find((d) => d.field === field)!;
    const labels = dimension.labels ?? [];
    if ('outside' in bound) {
      const value = row[field as 'size'];
      return value === null || !labels.includes(value);
    }
    if (field === 'months') return row.months !== null && row.months >= bound.from && row.months <= bound.to;
    if (field === 'email') return bound.from !== bound.to || row.email === (bound.from === 1);
    const wanted = labels.slice(bound.from, bound.to + 1);
    if (field === 'levels') return row.levels.some((l) => wanted.includes(l));
    return row.size !== null && wanted.includes(row.size);
  });
}

function counter(data: Row[], dimensions: Dimension[]) {
  let calls = 0;
  const count = (constraints: Constraints): Promise<Count> => {
    calls += 1;
    return Promise.resolve({
      n: data.filter((r) => matches(r, dimensions, constraints)).length,
      exact: true,
    });
  };
  return { count, calls: () => calls };
}

function assertPartition(data: Row[], dimensions: Dimension[], slices: { constraints: Constraints }[]) {
  const seen = new Map<number, number>();
  for (const slice of slices) {
    for (const row of data) {
      if (matches(row, dimensions, slice.constraints)) seen.set(row.id, (seen.get(row.id) ?? 0) + 1);
    }
  }
  expect(seen.size, 'every record in some slice').toBe(data.length);
  expect(
    [...seen.values()].every((n) => n === 1),
    'no record in two slices',
  ).toBe(true);
}

describe('planSlices', () => {
  test('a search under the cap is one slice, counted once', async () => {
    const data = rows(500);
    const { count, calls } = counter(data, [MONTHS]);
    const plan = await planSlices({ cap: 1_000, dimensions: [MONTHS] }, count);
    expect(plan.slices).toEqual([{ constraints: {}, count: { n: 500, exact: true }, oversize: false }]);
    expect(calls()).toBe(1);
    expect(plan.probes).toBe(1);
  });

  test('a search over the cap splits into disjoint, complete slices under the cap', async () => {
    const data = rows(5_000);
    const dimensions = [MONTHS, SIZE];
    const { count, calls } = counter(data, dimensions);
    const plan = await planSlices({ cap: 1_000, dimensions }, count);
    expect(plan.slices.length).toBeGreaterThanOrEqual(5);
    for (const slice of plan.slices) {
      expect(slice.oversize).toBe(false);
      expect(slice.count.n).toBeLessThanOrEqual(1_000);
    }
    expect(plan.slices.reduce((s, x) => s + x.count.n, 0)).toBe(5_000);
    assertPartition(data, dimensions, plan.slices);
    expect(plan.probes).toBe(calls());
  });

  test('records bunched in a corner of a wide range are found by zooming in, and the bounds still cover it all', async () => {
    const data = rows(3_000).map((r) => ({ ...r, months: 218 + (r.id % 83) }));
    const dimensions = [MONTHS, SIZE];
    const plan = await planSlices({ cap: 1_000, dimensions }, counter(data, dimensions).count);
    expect(plan.slices.every((s) => Object.keys(s.constraints).join() === 'months')).toBe(true);
    const bounds = plan.slices.map((s) => s.constraints.months as { from: number; to: number });
    expect(bounds[0]?.from).toBe(0);
    expect(bounds.at(-1)?.to).toBe(1_199);
    bounds.slice(1).forEach((b, i) => expect(b.from).toBe((bounds[i]?.to ?? 0) + 1));
    assertPartition(data, dimensions, plan.slices);
  });

  test('records with no value on a dimension make it unusable; the next one is used', async () => {
    const data = rows(3_000, { nullMonths: 40 });
    const dimensions = [MONTHS, SIZE];
    const plan = await planSlices({ cap: 1_000, dimensions }, counter(data, dimensions).count);
    expect(plan.rejected[0]).toMatchObject({
      field: 'months',
      reason: 'gap',
      parent: 3_000,
      children: 2_960,
    });
    assertPartition(data, dimensions, plan.slices);
    expect(Object.keys(plan.slices[0]!.constraints)).toContain('size');
  });

  test('a multi-valued dimension counts records twice and is refused', async () => {
    const data = rows(3_000);
    const dimensions = [LEVELS, EMAIL, MONTHS];
    const plan = await planSlices({ cap: 1_000, dimensions }, counter(data, dimensions).count);
    expect(plan.rejected).toContainEqual(expect.objectContaining({ field: 'levels', reason: 'overlap' }));
    assertPartition(data, dimensions, plan.slices);
  });

  test('a slice no dimension can split under the cap is kept and marked oversize', async () => {
    const data = rows(3_000);
    const dimensions = [EMAIL];
    const plan = await planSlices({ cap: 1_000, dimensions }, counter(data, dimensions).count);
    expect(plan.slices).toHaveLength(2);
    expect(plan.slices.every((s) => s.oversize && s.count.n === 1_500)).toBe(true);
    assertPartition(data, dimensions, plan.slices);
  });

  test('a negatable dimension gives the records outside its values a slice of their own', async () => {
    const data = rows(3_000, { nullSizes: 10 });
    const size = { ...SIZE, negatable: true };
    const plan = await planSlices({ cap: 1_000, dimensions: [size] }, counter(data, [size]).count);
    const outside = plan.slices.find((s) => 'outside' in (s.constraints.size as Bound));
    expect(outside?.count.n).toBe(data.filter((r) => r.size === null).length);
    assertPartition(data, [size], plan.slices);
  });

  test('the probe budget stops splitting, and what is left is reported oversize', async () => {
    const data = rows(5_000);
    const dimensions = [MONTHS];
    const plan = await planSlices({ cap: 100, dimensions, maxProbes: 20 }, counter(data, dimensions).count);
    expect(plan.probeBudgetReached).toBe(true);
    expect(plan.probes).toBeLessThanOrEqual(20);
    expect(plan.slices.some((s) => s.oversize)).toBe(true);
    assertPartition(data, dimensions, plan.slices);
  });
});

describe('packing and bucketing', () => {
  test('buckets cover the range once, in order', () => {
    expect(bucketBounds(0, 9, 3)).toEqual([
      { from: 0, to: 2 },
      { from: 3, to: 5 },
      { from: 6, to: 9 },
    ]);
    expect(bucketBounds(5, 6, 8)).toEqual([
      { from: 5, to: 5 },
      { from: 6, to: 6 },
    ]);
  });

  test('runs merge neighbours up to the target, keep big buckets alone and leave no hole', () => {
    const buckets = bucketBounds(0, 5, 6);
    const counts = [40, 0, 50, 500, 0, 30].map((n) => ({ n, exact: true }));
    const runs = packRuns(buckets, counts, 100);
    expect(runs.map((r) => [r.bound.from, r.bound.to, r.count.n])).toEqual([
      [0, 2, 90],
      [3, 4, 500],
      [5, 5, 30],
    ]);
  });
});

describe('buildExportPlan', () => {
  const sliced = {
    total: { n: 2_500, exact: true },
    slices: [
      { constraints: { months: { from: 0, to: 99 } }, count: { n: 900, exact: true }, oversize: false },
      { constraints: { months: { from: 100, to: 100 } }, count: { n: 1_600, exact: true }, oversize: true },
    ],
    probes: 9,
    rejected: [],
    probeBudgetReached: false,
  };
  const base = {
    target: 'prospects' as const,
    cap: 1_000,
    pageSize: 100,
    exclude: { ids: 0, sent: false },
    dimensions: [MONTHS],
    createdAt: '2026-01-01T00:00:00.000Z',
  };

  test('an oversize slice is a cursor chain, or truncated at the cap without cursor mode', () => {
    const withCursor = buildExportPlan(sliced, { ...base, cursor: true });
    expect(withCursor.slices.map((s) => [s.method, s.planned, s.pages])).toEqual([
      ['offset', 900, 9],
      ['cursor', 1_600, 16],
    ]);
    const without = buildExportPlan(sliced, { ...base, cursor: false });
    expect(without.slices.map((s) => [s.method, s.planned, s.pages])).toEqual([
      ['offset', 900, 9],
      ['truncated', 1_000, 10],
    ]);
    expect(without.sliceSum).toBe(2_500);
    expect(without.slices[1]?.description).toBe('months = 100');
  });

  test('size stops the plan after that many records', () => {
    const plan = buildExportPlan(sliced, { ...base, cursor: true, limit: 950 });
    expect(plan.slices.map((s) => [s.planned, s.pages])).toEqual([
      [900, 9],
      [50, 1],
    ]);
    expect(plan.plannedRecords).toBe(950);
  });
});
