import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { jobNameOf, readJobSpecFile, toRunInput, validateJobSpec } from '../../jobs/job-spec.js';
import { computeRunKey } from '../../jobs/run-key.js';

const valid = {
  input: { location: 's3://bucket/in/Companies Q4.csv' },
  datasets: ['firmographics', 'company_hierarchies'],
  output: 's3://bucket/enriched/',
};

describe('job specs', () => {
  test('a valid spec becomes the run input; the job name defaults to the file name', () => {
    const spec = validateJobSpec(valid, 'test');
    expect(jobNameOf(spec)).toBe('companies-q4');
    expect(toRunInput(spec, 'k1')).toEqual({
      jobName: 'companies-q4',
      runKey: 'k1',
      input: { location: 's3://bucket/in/Companies Q4.csv' },
      output: 's3://bucket/enriched/',
      datasets: ['firmographics', 'company_hierarchies'],
    });
  });

  test('every problem is named by its field', () => {
    expect(() =>
      validateJobSpec(
        {
          ...valid,
          datasets: ['firmographic', 'firmographics'],
          parameters: { website_changes: {} },
          extra: 1,
        },
        'job.yaml',
      ),
    ).toThrow(/unknown field "extra"/);
    expect(() =>
      validateJobSpec(
        {
          ...valid,
          datasets: ['firmographic', 'technographics', 'technographics'],
          parameters: { website_changes: {} },
        },
        'job.yaml',
      ),
    ).toThrow(
      /job.yaml is not a valid job spec:\n {2}- datasets\[0\]: "firmographic" is not a dataset; .*\n {2}- datasets: a dataset is listed twice\n {2}- parameters.website_changes: not one of the job's datasets/,
    );
    expect(() => validateJobSpec({ ...valid, window_size: 0 }, 'flags')).toThrow(/window_size: /);
    expect(() => validateJobSpec({ ...valid, input: {} }, 'flags')).toThrow(/input/);
  });

  test('a spec file resolves relative local paths against its own folder', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-spec-'));
    const file = path.join(dir, 'job.yaml');
    writeFileSync(
      file,
      'job_name: acme-q4\ninput:\n  location: data/companies.csv\ndatasets: [firmographics]\noutput: out/\n',
    );
    const spec = readJobSpecFile(file);
    expect(spec.input.location).toBe(path.join(dir, 'data/companies.csv'));
    expect(spec.output).toBe(path.join(dir, 'out') + '/');
    writeFileSync(file, 'input: [unclosed');
    expect(() => readJobSpecFile(file)).toThrow(/job.yaml: not valid YAML/);
  });

  test('the run key changes with the input file and the job, not with field order', () => {
    const spec = validateJobSpec(valid, 'test');
    const info = { key: 'in/c.csv', size: 100, lastModified: new Date('2026-01-01T00:00:00Z') };
    const key = computeRunKey(spec, info);
    expect(key).toMatch(/^[0-9a-f]{12}$/);
    expect(
      computeRunKey(
        validateJobSpec({ output: valid.output, datasets: valid.datasets, input: valid.input }, 't'),
        info,
      ),
    ).toBe(key);
    expect(computeRunKey(spec, { ...info, size: 101 })).not.toBe(key);
    expect(computeRunKey(validateJobSpec({ ...valid, datasets: ['firmographics'] }, 't'), info)).not.toBe(
      key,
    );
  });
});
