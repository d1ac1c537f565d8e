// Runs an OpenTelemetry Collector (built by `install-tools.sh --otelcol` with the collector's builder: the
// OTLP receiver and the file exporter) that takes OTLP/HTTP on a free port and writes every batch it
// receives as a line of OTLP JSON to a file, and reads that file back as spans. The cluster test traces
// its processes into it.
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './ports.js';
import { startProcess, waitUntilReady, type ManagedProcess } from './process.js';
import { toolsCacheDir } from './tools.js';

/** Must match OTELCOL_VERSION in scripts/install-tools.sh. */
export const OTELCOL_VERSION = 'v0.165.0';

/** `ENRICHFLOW_OTELCOL_BIN`, else the collector the tools installer built into the cache. */
export function resolveCollector(env: NodeJS.ProcessEnv = process.env): string {
  const file =
    env.ENRICHFLOW_OTELCOL_BIN || path.join(toolsCacheDir(env), 'otelcol', OTELCOL_VERSION, 'otelcol');
  try {
    accessSync(file, constants.X_OK);
    return file;
  } catch {
    throw new Error(
      `the OpenTelemetry Collector ${OTELCOL_VERSION} was not found at ${file}. Build it with ` +
        `'bash scripts/install-tools.sh --otelcol' (or set ENRICHFLOW_OTELCOL_BIN).`,
    );
  }
}

export interface Collector {
  /** The OTLP/HTTP base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  /** The file exporter's output: one OTLP JSON export request per line. */
  file: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

export async function startCollector(options: {
  dataDir: string;
  readyTimeoutMs?: number;
}): Promise<Collector> {
  const binary = resolveCollector();
  mkdirSync(options.dataDir, { recursive: true });
  const port = await freePort();
  const file = path.join(options.dataDir, 'traces.jsonl');
  const config = path.join(options.dataDir, 'otelcol.yaml');
  // The collector's own metrics are off: they would bind a fixed port (8888).
  writeFileSync(
    config,
    [
      'receivers:',
      '  otlp:',
      '    protocols:',
      '      http:',
      `        endpoint: 127.0.0.1:${port}`,
      'exporters:',
      '  file:',
      `    path: ${JSON.stringify(file)}`,
      '    format: json',
      '    flush_interval: 200ms',
      'service:',
      '  telemetry:',
      '    metrics:',
      '      level: none',
      '    logs:',
      '      level: warn',
      '  pipelines:',
      '    traces:',
      '      receivers: [otlp]',
      '      exporters: [file]',
      '',
    ].join('\n'),
  );
  const proc = startProcess({
    name: 'otelcol',
    command: binary,
    args: ['--config', config],
    logFile: path.join(options.dataDir, 'otelcol.log'),
  });
  const endpoint = `http://127.0.0.1:${port}`;
  await waitUntilReady(
    proc,
    async () =>
      (
        await fetch(`${endpoint}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"resourceSpans":[]}',
        })
      ).ok,
    options.readyTimeoutMs ?? 30_000,
  );
  return { endpoint, file, process: proc, stop: () => proc.stop(10_000) };
}

/** A span as the OTLP JSON encoding carries it, attributes flattened to plain values. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** `service.name` and `service.instance.id` of the process that sent it. */
  service: string;
  instance: string;
  attributes: Record<string, string | number | boolean>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
type OtlpAttributes = { key: string; value: OtlpValue }[] | undefined;

function flatten(list: OtlpAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else {
      const v = value.stringValue ?? value.boolValue ?? value.doubleValue;
      if (v !== undefined) out[key] = v;
    }
  }
  return out;
}

/** The spans of one OTLP JSON export request (`{"resourceSpans": […]}`). */
export function spansOfExport(payload: unknown): OtlpSpan[] {
  const spans: OtlpSpan[] = [];
  const request = payload as {
    resourceSpans?: {
      resource?: { attributes?: OtlpAttributes };
      scopeSpans?: {
        spans?: {
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          attributes?: OtlpAttributes;
        }[];
      }[];
    }[];
  };
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = flatten(resourceSpans.resource?.attributes);
    const service = String(resource['service.name']);
    const instance = String(resource['service.instance.id']);
    for (const scope of resourceSpans.scopeSpans ?? [])
      for (const span of scope.spans ?? [])
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          service,
          instance,
          attributes: flatten(span.attributes),
        });
  }
  return spans;
}

/** Every span the collector has written so far (complete lines only). */
export function readCollectorFile(file: string): OtlpSpan[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  return complete
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => spansOfExport(JSON.parse(line)));
}
