// Tracing's switch (off unless an OTLP endpoint is set) and the run id every span gets, without servers.
import { SpanKind, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, test } from 'vitest';
import { tracingRequested } from '../../workers/tracing-config.js';
import {
  RUN_ID_ATTRIBUTE,
  RunIdSpanProcessor,
  otlpProtocol,
  runIdOfWorkflow,
  traceCalls,
} from '../../workers/tracing.js';

describe('tracingRequested', () => {
  test('is off with no OTLP endpoint, whatever else is set', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ', OTEL_SERVICE_NAME: 'x' })).toBe(false);
  });

  test('is on with either endpoint variable, unless the SDK or the traces exporter is turned off', () => {
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(true);
    expect(
      tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' }),
    ).toBe(false);
    expect(
      tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }),
    ).toBe(false);
  });
});

test('the protocol: http/protobuf by default, http/json on request, anything else a configuration error', () => {
  expect(otlpProtocol({})).toBe('http/protobuf');
  expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe('http/json');
  expect(
    otlpProtocol({
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
    }),
  ).toBe('http/protobuf');
  expect(() => otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/grpc is not bundled/);
});

test('a workflow id names its run: stages and slices are <run id>/<name>', () => {
  expect(runIdOfWorkflow('acme-q4-1a2b3c')).toBe('acme-q4-1a2b3c');
  expect(runIdOfWorkflow('acme-q4-1a2b3c/firmographics')).toBe('acme-q4-1a2b3c');
  expect(runIdOfWorkflow('acme-q4-1a2b3c/pages/3')).toBe('acme-q4-1a2b3c');
});

describe('RunIdSpanProcessor', () => {
  function provider(): { exporter: InMemorySpanExporter; processor: RunIdSpanProcessor } {
    const exporter = new InMemorySpanExporter();
    const processor = new RunIdSpanProcessor(new SimpleSpanProcessor(exporter));
    return { exporter, processor };
  }

  test('adds the run id from the workflow id Temporal recorded, and from the parent span', () => {
    const { exporter, processor } = provider();
    const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('test');
    const start = tracer.startSpan('StartWorkflow:enrichRunWorkflow', { kind: SpanKind.CLIENT });
    start.setAttribute('temporalWorkflowId', 'run-1/technographics');
    start.end();
    const parent = tracer.startSpan('outer', { attributes: { [RUN_ID_ATTRIBUTE]: 'run-2' } });
    tracer.startSpan('inner', {}, trace.setSpan(ROOT_CONTEXT, parent)).end();
    parent.end();
    tracer.startSpan('unrelated').end();
    const runIds = Object.fromEntries(
      exporter.getFinishedSpans().map((s: ReadableSpan) => [s.name, s.attributes[RUN_ID_ATTRIBUTE]]),
    );
    expect(runIds).toEqual({
      'StartWorkflow:enrichRunWorkflow': 'run-1',
      inner: 'run-2',
      outer: 'run-2',
      unrelated: undefined,
    });
  });
});

test('traceCalls: a span per call with operation, dataset and status; failures keep their status and name', async () => {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
    'test',
  );
  class Refused extends Error {
    override readonly name = 'RateLimitedError';
    readonly status = 429;
  }
  const calls = traceCalls(
    {
      prefix: 'p',
      bulkEnrich(this: { prefix: string }, dataset: string) {
        return Promise.resolve(`${this.prefix}:${dataset}`);
      },
      matchBusinesses: () => Promise.reject(new Refused('slow down')),
      close: () => Promise.resolve(),
    },
    tracer,
  );
  await expect(calls.bulkEnrich('firmographics')).resolves.toBe('p:firmographics');
  await expect(calls.matchBusinesses()).rejects.toThrow('slow down');
  await calls.close();
  const spans = exporter.getFinishedSpans();
  expect(spans.map((s) => [s.name, s.attributes])).toEqual([
    [
      'DataService bulkEnrich',
      {
        'enrichflow.operation': 'bulkEnrich',
        'enrichflow.dataset': 'firmographics',
        'http.response.status_code': 200,
      },
    ],
    [
      'DataService matchBusinesses',
      {
        'enrichflow.operation': 'matchBusinesses',
        'error.type': 'RateLimitedError',
        'http.response.status_code': 429,
      },
    ],
  ]);
});
