// The webhook receiver process put together: secrets from their files, a Temporal client, the output's
// object store, the hand-off and the HTTP server. What `enrichflow webhooks serve`, the tests and the
// benchmark start; the only place besides the CLI that owns these resources and closes them.
import { Client } from '@temporalio/client';
import path from 'node:path';
import type { EnrichflowConfig } from '../config/index.js';
import type { Logger } from '../lib/logger.js';
import { silentLogger } from '../lib/logger.js';
import { storeResolverFor } from './worker.js';
import { installTemporalRuntime } from './runtime.js';
import { connectWorkerConnection } from './temporal-connection.js';
import { tracingRequested } from './tracing-config.js';
import { DEFAULT_SINK_WINDOW, type SinkWindowSettings } from '../pipeline/events-types.js';
import { EventHandoff } from '../events/handoff.js';
import { startWebhookReceiver, type RunningReceiver } from '../events/receiver.js';
import { SecretRing } from '../events/webhook-secrets.js';

/** Thrown when the receiver has no secret to check deliveries with. */
export class NoWebhookSecretsError extends Error {
  override readonly name = 'NoWebhookSecretsError';
  readonly code = 'NO_WEBHOOK_SECRETS';
}

export interface EventsReceiverOptions {
  config: EnrichflowConfig;
  /** Output prefix of the sink: `s3://bucket/prefix/` or a local folder. */
  output: string;
  /** Secret files or folders of them; default the configured secrets folder. */
  secretPaths?: string[];
  port?: number;
  host?: string;
  settings?: Partial<SinkWindowSettings>;
  logger?: Logger;
  /** A Temporal client to use (not closed here); otherwise one is connected from the configuration. */
  client?: Client;
  server?: 'node' | 'fastify';
  maxInFlight?: number;
  maxBatch?: number;
  /** Batches up to this many bytes ride in their signal (at most 128 KiB, the default); 0 = always stored first. */
  inlineMaxBytes?: number;
  /** Length of an intake slot; default 5 s (see workflows/events-intake.ts). */
  slotMs?: number;
}

export interface EventsReceiver {
  url: string;
  port: number;
  output: string;
  settings: SinkWindowSettings;
  receiver: RunningReceiver;
  handoff: EventHandoff;
  secrets: SecretRing;
  /** Graceful: stop accepting, finish hand-offs in progress, release the client. */
  close(): Promise<void>;
  /** Abrupt, as a crash: connections dropped, nothing waited for. */
  kill(): Promise<void>;
}

/** Local outputs become absolute folder paths, so the workers (elsewhere, other cwd) write the same place. */
export function normaliseOutput(output: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(output)) return output.endsWith('/') ? output : `${output}/`;
  return `${path.resolve(output)}/`;
}

/**
 * A client over the SDK's native (Rust) connection: measured at about 1 ms less CPU per signal than
 * the pure-JavaScript gRPC one, which matters on a receiver signalling dozens of times a second.
 */
async function nativeClient(config: EnrichflowConfig, logger: Logger): Promise<Client> {
  try {
    installTemporalRuntime(logger);
  } catch {
    // The host process installed the runtime already (a test or an embedding program): use it.
  }
  const connection = await connectWorkerConnection(config.temporal);
  if (!tracingRequested()) return new Client({ connection, namespace: config.temporal.namespace });
  // With an OTLP endpoint set, the signals that hand events to their workflows are traced too.
  const { startTracing, clientInterceptors } = await import('./tracing.js');
  await startTracing('enrichflow-receiver');
  return new Client({ connection, namespace: config.temporal.namespace, interceptors: clientInterceptors() });
}

export async function startEventsReceiver(options: EventsReceiverOptions): Promise<EventsReceiver> {
  const { config } = options;
  const logger = options.logger ?? silentLogger;
  const secretPaths = options.secretPaths?.length ? options.secretPaths : [config.events.secretsDir];
  const secrets = await SecretRing.load(secretPaths);
  if (secrets.size === 0) {
    throw new NoWebhookSecretsError(
      `no webhook secrets under ${secretPaths.join(', ')}; register a webhook first (enrichflow webhooks register)`,
    );
  }
  const output = normaliseOutput(options.output);
  const settings: SinkWindowSettings = {
    ...DEFAULT_SINK_WINDOW,
    windowMs: config.events.windowMs,
    ...Object.fromEntries(Object.entries(options.settings ?? {}).filter(([, v]) => v !== undefined)),
  };
  const { store, prefix } = storeResolverFor(config)(output);
  const client = options.client ?? (await nativeClient(config, logger));
  const handoff = new EventHandoff({
    client,
    taskQueue: config.temporal.taskQueue,
    output,
    store,
    prefix,
    settings,
    logger,
    ...(options.maxInFlight ? { maxInFlight: options.maxInFlight } : {}),
    ...(options.maxBatch ? { maxBatch: options.maxBatch } : {}),
    ...(options.inlineMaxBytes !== undefined ? { inlineMaxBytes: options.inlineMaxBytes } : {}),
    ...(options.slotMs !== undefined ? { slotMs: options.slotMs } : {}),
  });
  let receiver: RunningReceiver;
  try {
    receiver = await startWebhookReceiver({
      secrets,
      handoff,
      logger,
      port: options.port ?? config.events.receiverPort,
      host: options.host ?? config.events.receiverHost,
      ...(options.server ? { server: options.server } : {}),
      health: () => ({ handoff: handoff.stats() }),
    });
  } catch (error) {
    if (!options.client) await client.connection.close();
    throw error;
  }
  const release = async () => {
    if (!options.client) await client.connection.close();
  };
  return {
    url: receiver.url,
    port: receiver.port,
    output,
    settings,
    receiver,
    handoff,
    secrets,
    close: async () => {
      await receiver.close();
      await handoff.drain();
      await release();
    },
    kill: async () => {
      await receiver.kill();
      await release().catch(() => undefined);
    },
  };
}
