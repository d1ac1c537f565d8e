import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ConfigError, describeConfig, loadConfig } from '../../config/index.js';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  test('defaults give a working local configuration', () => {
    const config = loadConfig({ env: {} });
    expect(config.temporal.address).toBe('127.0.0.1:7233');
    expect(config.dataService.ratePerMinute).toBe(200);
    expect(config.s3.forcePathStyle).toBe(false);
  });

  test('a missing required value names the variable', () => {
    const error = configError(() => loadConfig({ env: {}, require: ['ENRICHFLOW_API_KEY'] }));
    expect(error.message).toContain('ENRICHFLOW_API_KEY: required but not set');
  });

  test('malformed values name the variable and what was expected', () => {
    const error = configError(() =>
      loadConfig({
        env: {
          ENRICHFLOW_API_RATE_PER_MINUTE: 'fast',
          ENRICHFLOW_S3_FORCE_PATH_STYLE: 'maybe',
          ENRICHFLOW_API_BASE_URL: 'ftp://example',
          ENRICHFLOW_WORKER_MAX_ACTIVITIES: '0',
        },
      }),
    );
    expect(error.problems).toEqual([
      'ENRICHFLOW_API_BASE_URL: expected an http(s) URL, got "ftp://example"',
      'ENRICHFLOW_API_RATE_PER_MINUTE: expected a number ≥ 0.001, got "fast"',
      'ENRICHFLOW_S3_FORCE_PATH_STYLE: expected true or false, got "maybe"',
      'ENRICHFLOW_WORKER_MAX_ACTIVITIES: expected a whole number ≥ 1, got "0"',
    ]);
  });

  test('secrets are never echoed, even when malformed, and print as set/unset', () => {
    const config = loadConfig({ env: { ENRICHFLOW_API_KEY: 'sk-very-secret' } });
    expect(JSON.stringify(describeConfig(config))).not.toContain('sk-very-secret');
    expect(describeConfig(config)['dataService.apiKey']).toBe('[set]');
  });

  test('a secret can come from a file, and a YAML config file is overridden by the environment', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-config-'));
    writeFileSync(path.join(dir, 'key'), 'from-file\n');
    writeFileSync(
      path.join(dir, 'config.yaml'),
      'ENRICHFLOW_TASK_QUEUE: from-yaml\nENRICHFLOW_TEMPORAL_NAMESPACE: yaml-ns\n',
    );
    const config = loadConfig({
      env: {
        ENRICHFLOW_API_KEY_FILE: path.join(dir, 'key'),
        ENRICHFLOW_CONFIG: path.join(dir, 'config.yaml'),
        ENRICHFLOW_TEMPORAL_NAMESPACE: 'env-ns',
      },
    });
    expect(config.dataService.apiKey).toBe('from-file');
    expect(config.temporal.taskQueue).toBe('from-yaml');
    expect(config.temporal.namespace).toBe('env-ns');
  });

  test('an unknown key in the config file is named', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-config-'));
    const file = path.join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ ENRICHFLOW_TASK_QUE: 'typo' }));
    expect(configError(() => loadConfig({ env: {}, file })).message).toContain('ENRICHFLOW_TASK_QUE (in');
  });
});
