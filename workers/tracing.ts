// OpenTelemetry tracing of runs, loaded only when an OTLP endpoint is configured (workers/tracing-config.ts).
// Temporal's interceptors trace workflows (in the workflow sandbox, exported through a sink), activities
// and the client that starts runs, and carry the trace across them in Temporal headers; this module adds
// a span per Data Service call and per object-store transfer, puts the run id on every span, and exports
// over OTLP/HTTP as the standard OTEL_EXPORTER_OTLP_* variables say.
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import {
  SpanKind,
  SpanStatusCode,
  trace,
  type Context as OtelContext,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Resource, envDetectorSync } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type Span as SdkSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { Context as ActivityContext } from '@temporalio/activity';
import type { ClientInterceptors } from '@temporalio/client';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  makeWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import { ConfigError } from '../config/index.js';
import type { ObjectStore } from '../storage/object-store.js';
import type { StoreResolver } from '../storage/run-files.js';

/** The attribute every span of a run carries: the run id (the enrich or export workflow's id). */
export const RUN_ID_ATTRIBUTE = 'enrichflow.run_id';

/**
 * The run a workflow belongs to: its id up to the first `/` (stages and slices are `<run id>/<name>`).
 * A retry (`<run id>.retry-…`) is a run of its own.
 */
export function runIdOfWorkflow(workflowId: string): string {
  const slash = workflowId.indexOf('/');
  return slash < 0 ? workflowId : workflowId.slice(0, slash);
}

/** The run of the activity this code runs in, if any. */
function activityRunId(): string | undefined {
  try {
    const { info } = ActivityContext.current();
    const workflowId = info.inWorkflow ? info.workflowExecution?.workflowId : undefined;
    return workflowId ? runIdOfWorkflow(workflowId) : undefined;
  } catch {
    return undefined;
  }
}

function activityAttempt(): number | undefined {
  try {
    return ActivityContext.current().info.attempt;
  } catch {
    return undefined;
  }
}

/** Workflow id attributes set by Temporal's interceptors (client and activity spans) and sink (workflow spans). */
const WORKFLOW_ID_ATTRIBUTES = ['temporalWorkflowId', 'workflowId'];

/**
 * Puts the run id on every span before it is exported: at start from the enclosing activity or the parent
 * span, at the end from the workflow id Temporal's interceptors recorded.
 */
export class RunIdSpanProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(span: SdkSpan, parentContext: OtelContext): void {
    const parent = trace.getSpan(parentContext) as Partial<ReadableSpan> | undefined;
    const inherited = parent?.attributes?.[RUN_ID_ATTRIBUTE];
    const runId = activityRunId() ?? (typeof inherited === 'string' ? inherited : undefined);
    if (runId) span.setAttribute(RUN_ID_ATTRIBUTE, runId);
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    if (span.attributes[RUN_ID_ATTRIBUTE] !== undefined) return this.next.onEnd(span);
    const workflowId = WORKFLOW_ID_ATTRIBUTES.map((key) => span.attributes[key]).find(
      (value): value is string => typeof value === 'string',
    );
    if (!workflowId) return this.next.onEnd(span);
    // Workflow spans arrive ended (and read-only); the copy adds the attribute and keeps the rest.
    const attributes = { ...span.attributes, [RUN_ID_ATTRIBUTE]: runIdOfWorkflow(workflowId) };
    this.next.onEnd(Object.create(span, { attributes: { value: attributes } }) as ReadableSpan);
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

/** `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else the spec's default. */
export function otlpProtocol(env: NodeJS.ProcessEnv = process.env): 'http/protobuf' | 'http/json' {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || '')
    .trim()
    .toLowerCase();
  if (protocol === '' || protocol === 'http/protobuf') return 'http/protobuf';
  if (protocol === 'http/json') return 'http/json';
  throw new ConfigError([
    `OTEL_EXPORTER_OTLP_PROTOCOL: expected http/protobuf or http/json (grpc is not bundled), got ${JSON.stringify(protocol)}`,
  ]);
}

/** The OTLP exporter for the configured protocol; it reads endpoint, headers, timeout and compression itself. */
async function otlpExporter(env: NodeJS.ProcessEnv): Promise<SpanExporter> {
  if (otlpProtocol(env) === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter();
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter();
}

export interface Tracing {
  tracer: Tracer;
  resource: Resource;
  /** The processor every span goes through (run id, then batched OTLP export). */
  processor: SpanProcessor;
  /** Exports what is buffered; the process goes on tracing. */
  flush(): Promise<void>;
}

let started: Promise<Tracing> | undefined;

/**
 * Starts tracing for this process, once (a CLI that runs a worker in-process shares it): a tracer
 * provider registered globally with an async-context manager and W3C propagation, whose spans are
 * batched to the OTLP endpoint and flushed before the process exits. `serviceName` is the default
 * `service.name`; `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` override it.
 */
export function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): Promise<Tracing> {
  started ??= (async () => {
    const exporter = await otlpExporter(env);
    const resource = Resource.default()
      .merge(
        new Resource({ 'service.name': serviceName, 'service.instance.id': `${hostname()}:${process.pid}` }),
      )
      .merge(envDetectorSync.detect());
    const processor = new RunIdSpanProcessor(new BatchSpanProcessor(exporter));
    const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
    provider.register({
      contextManager: new AsyncLocalStorageContextManager(),
      propagator: new W3CTraceContextPropagator(),
    });
    // The batch processor's timer does not hold the process open: flush what is left when it would exit.
    let flushedAtExit = false;
    process.on('beforeExit', () => {
      if (flushedAtExit) return;
      flushedAtExit = true;
      void provider.shutdown();
    });
    return {
      tracer: trace.getTracer('enrichflow'),
      resource,
      processor,
      flush: () => provider.forceFlush(),
    };
  })();
  return started;
}

/** Temporal client interceptors: a span per start/signal/query, and the trace handed to the workflow. */
export function clientInterceptors(): ClientInterceptors {
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}

/** The workflow interceptors module, to bundle with the workflows (scripts/bundle-workflows.js). */
export const WORKFLOW_INTERCEPTORS_MODULE = createRequire(import.meta.url).resolve(
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
);

/** Activity interceptors: a `RunActivity:<type>` span per attempt, a child of the workflow's span. */
export function activityInterceptors(): Required<Pick<WorkerInterceptors, 'activity'>> {
  return {
    activity: [
      (ctx) => ({
        inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
        outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
      }),
    ],
  };
}

/** What the workflow info adds to a workflow span: identifiers only (not memo, search attributes, …). */
function identifiersOf(info: WorkflowInfo): WorkflowInfo {
  const { workflowId, workflowType, runId, taskQueue, namespace, attempt } = info;
  return { workflowId, workflowType, runId, taskQueue, namespace, attempt } as WorkflowInfo;
}

/** The sink through which the workflow interceptors hand their spans to this process's exporter. */
export function workflowSpanSinks(tracing: Tracing): InjectedSinks<Record<string, never>> {
  const sink = makeWorkflowExporter(tracing.processor, tracing.resource);
  return {
    exporter: {
      export: {
        ...sink.export,
        fn: (info: WorkflowInfo, spans: Parameters<typeof sink.export.fn>[1]) =>
          sink.export.fn(identifiersOf(info), spans),
      },
    },
  } as unknown as InjectedSinks<Record<string, never>>;
}

type AsyncMethod = (...args: unknown[]) => unknown;

/**
 * A proxy over `target` that runs each of `methods` (async) in a span named `<prefix> <method>`, with
 * the attributes `describe` gives before and `settle` after the call; errors mark the span failed.
 */
function traced<T extends object>(
  target: T,
  tracer: Tracer,
  options: {
    prefix: string;
    methods: (name: string) => boolean;
    describe: (name: string, args: unknown[]) => Record<string, string | number>;
    settle?: (name: string, args: unknown[], result: unknown) => Record<string, number>;
    failed?: (error: unknown) => Record<string, string | number>;
  },
): T {
  const wrappers = new Map<string, AsyncMethod>();
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property);
      if (typeof value !== 'function') return value;
      const method = (value as AsyncMethod).bind(object);
      if (typeof property !== 'string' || !options.methods(property)) return method;
      let wrapper = wrappers.get(property);
      if (!wrapper) {
        wrapper = (...args: unknown[]) =>
          tracer.startActiveSpan(
            `${options.prefix} ${property}`,
            { kind: SpanKind.CLIENT, attributes: options.describe(property, args) },
            async (span) => {
              try {
                const result = await method(...args);
                if (options.settle) span.setAttributes(options.settle(property, args, result));
                return result;
              } catch (error) {
                span.setAttributes({
                  'error.type': (error as Error | undefined)?.name ?? 'Error',
                  ...options.failed?.(error),
                });
                span.setStatus({
                  code: SpanStatusCode.ERROR,
                  message: (error as Error | undefined)?.message,
                });
                throw error;
              } finally {
                span.end();
              }
            },
          );
        wrappers.set(property, wrapper);
      }
      return wrapper;
    },
  });
}

/**
 * The Data Service calls with a span per call (one HTTP request: Temporal's retries are new attempts):
 * `DataService <operation>` with the operation, the dataset (bulk calls), the activity attempt, the
 * HTTP status (200, or the error's), and the error's name when it failed.
 */
export function traceCalls<C extends object>(calls: C, tracer: Tracer): C {
  return traced(calls, tracer, {
    prefix: 'DataService',
    methods: (name) => name !== 'close' && name !== 'constructor',
    describe: (name, args) => {
      const attempt = activityAttempt();
      return {
        'enrichflow.operation': name,
        ...(typeof args[0] === 'string' ? { 'enrichflow.dataset': args[0] } : {}),
        ...(attempt !== undefined ? { 'enrichflow.attempt': attempt } : {}),
      };
    },
    settle: () => ({ 'http.response.status_code': 200 }),
    failed: (error) => {
      const status = (error as { status?: unknown } | undefined)?.status;
      const attributes: Record<string, number> = {};
      if (typeof status === 'number') attributes['http.response.status_code'] = status;
      return attributes;
    },
  });
}

const STORE_TRANSFERS = new Set([
  'put',
  'putFile',
  'getStream',
  'getBytes',
  'downloadToFile',
  'head',
  'exists',
  'delete',
  'deletePrefix',
]);

function byteLength(body: unknown): number | undefined {
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (body instanceof Uint8Array) return body.byteLength;
  return undefined;
}

/** An object store with a span per transfer: `ObjectStore <method>` with the store, the key and bytes. */
export function traceStore(store: ObjectStore, tracer: Tracer): ObjectStore {
  return traced(store, tracer, {
    prefix: 'ObjectStore',
    methods: (name) => STORE_TRANSFERS.has(name),
    describe: (name, args) => {
      const bytes = name === 'put' ? byteLength(args[1]) : undefined;
      return {
        'enrichflow.store': store.url,
        'enrichflow.object_key': String(args[0]),
        ...(bytes !== undefined ? { 'enrichflow.bytes': bytes } : {}),
      };
    },
    settle: (name, _args, result) => {
      const attributes: Record<string, number> = {};
      const bytes = name === 'getBytes' ? byteLength(result) : undefined;
      if (bytes !== undefined) attributes['enrichflow.bytes'] = bytes;
      return attributes;
    },
  });
}

/** The resolver's stores, traced; one traced proxy per store, so identities stay stable. */
export function traceStores(resolve: StoreResolver, tracer: Tracer): StoreResolver {
  const proxies = new WeakMap<ObjectStore, ObjectStore>();
  return (location) => {
    const { store, prefix } = resolve(location);
    let proxy = proxies.get(store);
    if (!proxy) {
      proxy = traceStore(store, tracer);
      proxies.set(store, proxy);
    }
    return { store: proxy, prefix };
  };
}
