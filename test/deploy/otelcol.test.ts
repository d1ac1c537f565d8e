// The collector the cluster test traces into: one version in the installer and the stack, and its file
// exporter's lines (OTLP JSON export requests) read back as spans.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { OTELCOL_VERSION, spansOfExport } from '../../stack/otelcol.js';

test('install-tools.sh builds the collector version the stack runs', () => {
  const script = readFileSync(
    fileURLToPath(new URL('../../scripts/install-tools.sh', import.meta.url)),
    'utf8',
  );
  expect(script).toContain(`OTELCOL_VERSION="\${ENRICHFLOW_OTELCOL_VERSION:-${OTELCOL_VERSION}}"`);
  // Builder and components of one release.
  expect(script).toContain('go.opentelemetry.io/collector/cmd/builder@$version');
  expect(script).toContain('receiver/otlpreceiver $version');
  expect(script).toContain('exporter/fileexporter $version');
});

test('a line of the file exporter: spans with their resource and flattened attributes', () => {
  const line = {
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'enrichflow-worker' } },
            { key: 'service.instance.id', value: { stringValue: 'host:42' } },
          ],
        },
        scopeSpans: [
          {
            scope: { name: 'enrichflow' },
            spans: [
              {
                traceId: '5b8efff798038103d269b633813fc60c',
                spanId: 'eee19b7ec3c1b174',
                parentSpanId: 'eee19b7ec3c1b173',
                name: 'DataService bulkEnrich',
                attributes: [
                  { key: 'enrichflow.run_id', value: { stringValue: 'acme-1' } },
                  { key: 'enrichflow.attempt', value: { intValue: '2' } },
                  { key: 'http.response.status_code', value: { intValue: 429 } },
                ],
              },
              { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b173', name: 'root' },
            ],
          },
        ],
      },
    ],
  };
  expect(spansOfExport(line)).toEqual([
    {
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b174',
      parentSpanId: 'eee19b7ec3c1b173',
      name: 'DataService bulkEnrich',
      service: 'enrichflow-worker',
      instance: 'host:42',
      attributes: {
        'enrichflow.run_id': 'acme-1',
        'enrichflow.attempt': 2,
        'http.response.status_code': 429,
      },
    },
    {
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b173',
      parentSpanId: '',
      name: 'root',
      service: 'enrichflow-worker',
      instance: 'host:42',
      attributes: {},
    },
  ]);
});
