// Starts the sandbox on a port: what `enrichflow sandbox serve`, the local stack and the tests call.
import type { FastifyInstance } from 'fastify';
import { buildSandbox, type SandboxOptions } from './app.js';

export interface StartSandboxOptions extends SandboxOptions {
  /** TCP port; 0 picks a free one. Default 8787. */
  port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
}

export interface RunningSandbox {
  /** Base address, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  app: FastifyInstance;
  close(): Promise<void>;
}

export const DEFAULT_SANDBOX_PORT = 8787;

export async function startSandbox(options: StartSandboxOptions): Promise<RunningSandbox> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? DEFAULT_SANDBOX_PORT;
  const probeUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // With port 0 the address is known only after listen; the OpenAPI document then names none.
  const app = await buildSandbox({ ...(port !== 0 ? { publicUrl: probeUrl } : {}), ...options });
  try {
    await app.listen({ host, port });
  } catch (error) {
    await app.close();
    throw error;
  }
  const address = app.server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
  let closing: Promise<void> | null = null;
  return {
    url,
    port: actualPort,
    app,
    close: () => (closing ??= app.close()),
  };
}
