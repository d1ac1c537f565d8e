// Filter files and export options are checked before anything starts: each problem names the filter
// (or flag) at fault; the dimensions a search is sliced on follow its own filters.
import { describe, expect, test } from 'vitest';
import { composeFilters, exportDimensions } from '../../pipeline/export-filters.js';
import { exportRunKey, parseFiltersText, parseIdList, validateExportSpec } from '../../jobs/export-spec.js';

describe('filter files', () => {
  test.each([
    ['{"job_levle": {"values": ["manager"]}}', /filters\.job_levle: unknown filter/],
    [
      '{"job_level": {"values": ["boss"]}}',
      /filters\.job_level\.values\[0\]: value is not a valid enumeration member; permitted: 'manager'/,
    ],
    [
      '{"company_size": {"values": ["1-9"]}}',
      /filters\.company_size\.values\[0\]: value is not a valid enumeration member/,
    ],
    [
      '{"current_role_months": {"gte": 36, "lte": 12}}',
      /filters\.current_role_months: 'gte' must be less than or equal to 'lte'/,
    ],
    [
      '{"total_experience_months": {}}',
      /filters\.total_experience_months: at least one of 'gte' and 'lte' is required/,
    ],
    ['{"country_code": ["US"]}', /filters\.country_code: value is not a valid dict/],
    ['{"job_level": ', /f\.json: not valid JSON/],
  ])('%s is refused, naming the filter', (text, message) => {
    expect(() => parseFiltersText('prospects', text, 'f.json')).toThrow(message);
  });

  test('a valid file passes, bare or under "filters"', () => {
    const filters = { job_level: { values: ['manager'] }, total_experience_months: { gte: 12 } };
    expect(parseFiltersText('prospects', JSON.stringify(filters), 'f.json')).toEqual(filters);
    expect(parseFiltersText('prospects', JSON.stringify({ filters }), 'f.json')).toEqual(filters);
  });

  test('business filters are the fetch filters of businesses, negation included', () => {
    expect(
      parseFiltersText('businesses', '{"company_size": {"values": ["11-50"], "negate": true}}', 'b.json'),
    ).toEqual({
      company_size: { values: ['11-50'], negate: true },
    });
    expect(() => parseFiltersText('businesses', '{"job_level": {"values": ["manager"]}}', 'b.json')).toThrow(
      /filters\.job_level: unknown filter/,
    );
  });
});

describe('export options', () => {
  const base = { target: 'prospects' as const, filters: {}, output: 's3://b/x/' };

  test('bad options are listed together, by flag', () => {
    expect(() =>
      validateExportSpec({
        ...base,
        size: 0,
        offsetCap: 50,
        splitBy: ['job_level'],
        target: 'businesses',
        withPosts: true,
      }),
    ).toThrow(
      /--size: .*\n.*--offset-cap: .*\n.*--with-posts: only for prospect exports\n.*--split-by: "job_level" cannot split/,
    );
  });

  test('an exclude file is read line by line, naming the bad lines', () => {
    const id = 'a'.repeat(40);
    expect(parseIdList(`prospect_id\n${id}\n\n# note\n${id.toUpperCase()}\n`, 'prospects', 'x.txt')).toEqual([
      id,
    ]);
    expect(() => parseIdList(`${id}\nnot-an-id\n`, 'prospects', 'x.txt')).toThrow(
      /x\.txt: .*\n.*line 2: "not-an-id"/,
    );
  });

  test('the same export gets the same run key; another search another', () => {
    const spec = { ...base, filters: { job_level: { values: ['manager'] } } };
    expect(exportRunKey(spec)).toBe(
      exportRunKey({ ...spec, filters: { job_level: { values: ['manager'] } } }),
    );
    expect(exportRunKey(spec)).not.toBe(exportRunKey({ ...spec, size: 10 }));
  });
});

describe('slicing dimensions', () => {
  test('ranges within the filter, the filter’s own lists, enums and open flags', () => {
    const dims = exportDimensions('prospects', {
      total_experience_months: { gte: 24 },
      business_id: { values: ['b'.repeat(32), 'a'.repeat(32)] },
      company_size: { values: ['11-50'] },
      has_email: { value: true },
    });
    expect(dims.map((d) => [d.field, d.kind, d.min, d.max])).toEqual([
      ['total_experience_months', 'range', 24, 1199],
      ['current_role_months', 'range', 0, 1199],
      ['business_id', 'list', 0, 1],
      ['company_revenue', 'list', 0, 13],
      ['has_phone_number', 'flag', 0, 1],
    ]);
    const filters = composeFilters({ has_email: { value: true } }, dims, {
      total_experience_months: { from: 24, to: 60 },
      business_id: { from: 0, to: 0 },
      has_phone_number: { from: 1, to: 1 },
    });
    expect(filters).toEqual({
      has_email: { value: true },
      total_experience_months: { gte: 24, lte: 60 },
      business_id: { values: ['a'.repeat(32)] },
      has_phone_number: { value: true },
    });
  });

  test('business enums can be negated, so records outside them get a slice; negated filters are not split', () => {
    const dims = exportDimensions('businesses', { company_revenue: { values: ['0-500K'], negate: true } });
    expect(dims.find((d) => d.field === 'company_size')?.negatable).toBe(true);
    expect(dims.some((d) => d.field === 'company_revenue')).toBe(false);
    expect(composeFilters({}, dims, { company_size: { outside: true } })).toEqual({
      company_size: {
        values: ['1-10', '11-50', '51-200', '201-500', '501-1000', '1001-5000', '5001-10000', '10001+'],
        negate: true,
      },
    });
  });
});
