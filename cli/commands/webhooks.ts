// `enrichflow webhooks register|show|delete|serve`: the webhook a partner's events are delivered to,
// its secret kept in a 0600 file (the path is printed, the secret never), and the receiver that checks
// each delivery's signature and lands it, once, in the events Parquet output.
import { Option, type Command } from 'commander';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../config/index.js';
import { parseDuration } from '../../pipeline/time-bounds.js';
import { normaliseOutput, startEventsReceiver } from '../../workers/receiver.js';
import {
  defaultSecretFile,
  readWebhookSecret,
  saveWebhookSecret,
  type WebhookSecretRecord,
} from '../../events/webhook-secrets.js';
import { createLogger } from '../../lib/logger.js';
import type { SinkWindowSettings } from '../../pipeline/events-types.js';
import { UsageError } from '../errors.js';
import { waitForShutdownSignal } from '../signals.js';
import { asUsageError, serviceClient, withRetries, type ServiceFlags } from './events-shared.js';

interface PartnerFlags extends ServiceFlags {
  partnerId: string;
  secretFile?: string;
}

async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asUsageError(error);
  }
}

function secretFileFor(flags: PartnerFlags, secretsDir: string, tenant: string | null): string {
  return path.resolve(flags.secretFile ?? defaultSecretFile(secretsDir, tenant, flags.partnerId));
}

const duration = (flag: string) => (value: string) => {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`);
  }
};

interface ServeFlags {
  output?: string;
  port?: string;
  host?: string;
  secrets?: string[];
  window?: number;
  grace?: number;
  commitEvery?: number;
  settle?: number;
  idle?: number;
  httpServer: 'node' | 'fastify';
  maxInFlight?: number;
  inlineMaxBytes?: number;
}

export function registerWebhooksCommands(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description('The webhook that receives event deliveries, its secret, and the receiver');

  webhooks
    .command('register')
    .description('Register (or re-register, rotating the secret) the webhook URL of a partner')
    .requiredOption('--partner-id <id>', 'partner id; one webhook URL per partner')
    .requiredOption('--url <url>', 'where deliveries are sent, e.g. http://host:8790/webhooks/events')
    .option(
      '--secret-file <path>',
      'where to store the secret (default: <secrets dir>/<tenant>/<partner>.json)',
    )
    .option('--tenant <tenant>', 'tenant header (default: ENRICHFLOW_API_TENANT)')
    .action(async (flags: PartnerFlags & { url: string }) =>
      guarded(async () => {
        const { config, client, tenant } = serviceClient(flags);
        try {
          const { body } = await withRetries('register webhook', () =>
            client.registerWebhook({ partner_id: flags.partnerId, webhook_url: flags.url }),
          );
          const file = secretFileFor(flags, config.events.secretsDir, tenant);
          const record: WebhookSecretRecord = {
            partner_id: flags.partnerId,
            tenant,
            webhook_url: body.webhook_url,
            webhook_secret: body.webhook_secret,
            registered_at: body.last_modified_time,
            service_url: config.dataService.baseUrl,
          };
          await saveWebhookSecret(file, record);
          process.stdout.write(
            `webhook of partner "${flags.partnerId}"${tenant ? ` (tenant ${tenant})` : ''} registered: ${body.webhook_url}\n` +
              `secret stored in ${file} (mode 0600); a running receiver picks up the new secret by itself\n`,
          );
        } finally {
          await client.close();
        }
      }),
    );

  webhooks
    .command('show')
    .description(
      "Show a partner's webhook URL and whether the local secret file is current (never the secret)",
    )
    .requiredOption('--partner-id <id>', 'partner id')
    .option('--secret-file <path>', 'secret file to compare (default: the registered location)')
    .option('--tenant <tenant>', 'tenant header (default: ENRICHFLOW_API_TENANT)')
    .action(async (flags: PartnerFlags) =>
      guarded(async () => {
        const { config, client, tenant } = serviceClient(flags);
        try {
          const { body } = await withRetries('get webhook', () => client.getWebhook(flags.partnerId));
          const file = secretFileFor(flags, config.events.secretsDir, tenant);
          let local: string;
          try {
            const record = await readWebhookSecret(file);
            local =
              record.webhook_secret === body.webhook_secret ? 'current' : 'OUT OF DATE (register again)';
          } catch {
            local = 'missing';
          }
          process.stdout.write(
            `partner:       ${flags.partnerId}${tenant ? ` (tenant ${tenant})` : ''}\n` +
              `url:           ${body.webhook_url}\n` +
              `created:       ${body.created_at}\n` +
              `last modified: ${body.last_modified_time}\n` +
              `secret file:   ${file} (${local})\n`,
          );
        } finally {
          await client.close();
        }
      }),
    );

  webhooks
    .command('delete')
    .description("Delete a partner's webhook (pending deliveries are dropped) and its local secret file")
    .requiredOption('--partner-id <id>', 'partner id')
    .option('--secret-file <path>', 'secret file to remove (default: the registered location)')
    .option('--keep-secret', 'keep the local secret file', false)
    .option('--tenant <tenant>', 'tenant header (default: ENRICHFLOW_API_TENANT)')
    .action(async (flags: PartnerFlags & { keepSecret: boolean }) =>
      guarded(async () => {
        const { config, client, tenant } = serviceClient(flags);
        try {
          await withRetries('delete webhook', () => client.deleteWebhook(flags.partnerId));
          const file = secretFileFor(flags, config.events.secretsDir, tenant);
          if (!flags.keepSecret) await rm(file, { force: true });
          process.stdout.write(
            `webhook of partner "${flags.partnerId}" deleted${flags.keepSecret ? '' : `; removed ${file}`}\n`,
          );
        } finally {
          await client.close();
        }
      }),
    );

  webhooks
    .command('serve')
    .description(
      'Receive deliveries: check signatures, hand each event durably to Temporal, land it once in Parquet per time window',
    )
    .option('--output <location>', 'events output prefix (default: ENRICHFLOW_EVENTS_OUTPUT)')
    .option('--port <n>', 'port (default: ENRICHFLOW_WEBHOOK_PORT, 8790)')
    .option('--host <address>', 'interface (default: ENRICHFLOW_WEBHOOK_HOST, 127.0.0.1)')
    .option(
      '--secrets <path>',
      'secret file or folder (repeatable; default: ENRICHFLOW_WEBHOOK_SECRETS_DIR)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--window <duration>',
      'window of event time per Parquet file, e.g. 1h, 15m (default 1h)',
      duration('--window'),
    )
    .option(
      '--grace <duration>',
      'wait after a window ends for late deliveries (default 60s)',
      duration('--grace'),
    )
    .option(
      '--commit-every <duration>',
      'commit an open window at most this often, 0 = only when it closes (default 5m)',
      duration('--commit-every'),
    )
    .option(
      '--settle <duration>',
      'quiet time before re-committing late deliveries (default 2s)',
      duration('--settle'),
    )
    .option(
      '--idle <duration>',
      'how long a closed window waits for late deliveries (default 5m)',
      duration('--idle'),
    )
    .addOption(
      new Option('--http-server <kind>', 'HTTP server implementation (for the benchmark)')
        .choices(['node', 'fastify'])
        .default('node')
        .hideHelp(),
    )
    .addOption(
      new Option('--max-in-flight <n>', 'hand-offs in flight per window (for the benchmark)')
        .argParser((v) => Number(v))
        .hideHelp(),
    )
    .addOption(
      new Option(
        '--inline-max-bytes <n>',
        'largest batch carried in its signal (default and most 131072), 0 = store every batch first (for the benchmark)',
      )
        .argParser((v) => Number(v))
        .hideHelp(),
    )
    .action(async (flags: ServeFlags) =>
      guarded(async () => {
        const config = loadConfig();
        const output = flags.output ?? config.events.output;
        if (!output) throw new UsageError('give --output (or set ENRICHFLOW_EVENTS_OUTPUT)');
        const port = flags.port === undefined ? undefined : Number(flags.port);
        if (port !== undefined && (!Number.isInteger(port) || port < 0))
          throw new UsageError(`--port must be a whole number ≥ 0, got '${flags.port}'`);
        const logger = createLogger({ name: 'webhooks', level: config.logLevel });
        const settings: Partial<SinkWindowSettings> = {
          ...(flags.window !== undefined ? { windowMs: flags.window } : {}),
          ...(flags.grace !== undefined ? { graceMs: flags.grace } : {}),
          ...(flags.commitEvery !== undefined ? { commitIntervalMs: flags.commitEvery } : {}),
          ...(flags.settle !== undefined ? { settleMs: flags.settle } : {}),
          ...(flags.idle !== undefined ? { idleMs: flags.idle } : {}),
        };
        if (settings.windowMs !== undefined && settings.windowMs < 1_000)
          throw new UsageError('--window must be at least 1s');
        let running;
        try {
          running = await startEventsReceiver({
            config,
            output: normaliseOutput(output),
            ...(flags.secrets ? { secretPaths: flags.secrets } : {}),
            ...(port !== undefined ? { port } : {}),
            ...(flags.host ? { host: flags.host } : {}),
            settings,
            logger,
            server: flags.httpServer,
            ...(flags.maxInFlight ? { maxInFlight: flags.maxInFlight } : {}),
            ...(flags.inlineMaxBytes !== undefined ? { inlineMaxBytes: flags.inlineMaxBytes } : {}),
          });
        } catch (error) {
          if (error instanceof Error && error.name === 'NoWebhookSecretsError')
            throw new UsageError(error.message);
          throw error;
        }
        logger.info(
          {
            url: running.url,
            output: running.output,
            windowMs: running.settings.windowMs,
            partners: running.secrets.describe().map((s) => ({ partner_id: s.partner_id, tenant: s.tenant })),
          },
          'webhook receiver listening',
        );
        process.stdout.write(`${running.url}\n`);
        const signal = await waitForShutdownSignal();
        logger.info({ signal }, 'webhook receiver stopping: finishing hand-offs in progress');
        await running.close();
        logger.info(running.handoff.stats(), 'webhook receiver stopped');
      }),
    );
}
