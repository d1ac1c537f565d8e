// The local stack a person and the tests both use: Temporal dev server and S3 server as child
// processes, plus in-process services (sandbox, worker) that later parts register as add-ons.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../lib/logger.js';
import { isPortOpen } from './ports.js';
import { startTemporalDevServer, type TemporalDevServer } from './temporal.js';
import { startS3Server, type S3Server } from './versitygw.js';

/** The default ports of `enrichflow dev`; `--free-ports` picks free ones instead. */
export const DEFAULT_PORTS = { temporal: 7233, temporalUi: 8233, s3: 7070, sandbox: 8787 } as const;

export interface LocalStackOptions {
  dataDir: string;
  /** Use free ports instead of the defaults (for tests and a second stack beside a running one). */
  freePorts?: boolean;
  /** Run Temporal without its Web UI. */
  headless?: boolean;
  bucket?: string;
  logger: Logger;
}

export interface LocalStack {
  temporal: TemporalDevServer;
  s3: S3Server;
  /** Environment variables that point enrichflow's config at this stack. */
  env: Record<string, string>;
  /** Stops both servers: SIGTERM, then SIGKILL after `graceMs` (default 10 s). */
  stop(graceMs?: number): Promise<void>;
}

/** Thrown when a default port of the stack is already taken by something else. */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
  readonly code = 'PORT_IN_USE';
}

export function stackStateFile(dataDir: string): string {
  return path.join(dataDir, 'stack.json');
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const { dataDir, logger } = options;
  mkdirSync(dataDir, { recursive: true });
  if (!options.freePorts) {
    for (const [name, port] of Object.entries(DEFAULT_PORTS)) {
      if (name === 'sandbox') continue; // checked by whoever starts the sandbox
      if (await isPortOpen(port)) {
        throw new PortInUseError(
          `port ${port} (${name}) is already in use: is another 'enrichflow dev' running? Use --free-ports to start beside it.`,
        );
      }
    }
  }
  const started = Date.now();
  const [temporal, s3] = await Promise.all([
    startTemporalDevServer({
      dataDir: path.join(dataDir, 'temporal'),
      port: options.freePorts ? undefined : DEFAULT_PORTS.temporal,
      uiPort: options.freePorts ? undefined : DEFAULT_PORTS.temporalUi,
      headless: options.headless,
    }),
    startS3Server({
      dataDir: path.join(dataDir, 's3'),
      port: options.freePorts ? undefined : DEFAULT_PORTS.s3,
      bucket: options.bucket ?? 'enrichflow',
    }),
  ]);
  logger.info({ ms: Date.now() - started, temporal: temporal.address, s3: s3.endpoint }, 'local stack ready');
  const env: Record<string, string> = {
    ENRICHFLOW_TEMPORAL_ADDRESS: temporal.address,
    ENRICHFLOW_TEMPORAL_NAMESPACE: temporal.namespace,
    ENRICHFLOW_S3_ENDPOINT: s3.endpoint,
    ENRICHFLOW_S3_REGION: s3.region,
    ENRICHFLOW_S3_FORCE_PATH_STYLE: 'true',
    ENRICHFLOW_S3_ACCESS_KEY_ID: s3.accessKeyId,
    ENRICHFLOW_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
  };
  const stateFile = stackStateFile(dataDir);
  writeFileSync(
    stateFile,
    JSON.stringify(
      {
        pid: process.pid,
        temporalUi: temporal.uiUrl,
        bucket: s3.bucket,
        env: { ...env, ENRICHFLOW_S3_SECRET_ACCESS_KEY: undefined },
      },
      null,
      2,
    ),
  );
  let stopping: Promise<void> | undefined;
  return {
    temporal,
    s3,
    env,
    stop(graceMs?: number) {
      stopping ??= (async () => {
        await Promise.all([temporal.stop(graceMs), s3.stop(graceMs)]);
        rmSync(stateFile, { force: true });
        logger.info('local stack stopped');
      })();
      return stopping;
    },
  };
}
