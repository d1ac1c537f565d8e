// Connections to Temporal from the configuration: a local dev server in plain text, or a cluster or
// Temporal Cloud over TLS with mTLS certificates or an API key.
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import { readFileSync } from 'node:fs';
import type { EnrichflowConfig } from '../config/index.js';
import { tracingRequested } from './tracing-config.js';

function tlsOptions(config: EnrichflowConfig['temporal']): NativeConnectionOptions['tls'] {
  if (!config.tls) return undefined;
  if (config.tlsCertPath && config.tlsKeyPath) {
    return {
      clientCertPair: { crt: readFileSync(config.tlsCertPath), key: readFileSync(config.tlsKeyPath) },
    };
  }
  return true;
}

export async function connectWorkerConnection(
  config: EnrichflowConfig['temporal'],
): Promise<NativeConnection> {
  return NativeConnection.connect({
    address: config.address,
    tls: tlsOptions(config),
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
  });
}

export async function connectClient(config: EnrichflowConfig['temporal']): Promise<Client> {
  const options: ConnectionOptions = {
    address: config.address,
    tls: tlsOptions(config),
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    connectTimeout: '10 seconds',
  };
  const connection = await Connection.connect(options);
  // With an OTLP endpoint set, the runs this client starts are traced from their start on.
  if (!tracingRequested()) return new Client({ connection, namespace: config.namespace });
  const { startTracing, clientInterceptors } = await import('./tracing.js');
  await startTracing('enrichflow-cli');
  return new Client({ connection, namespace: config.namespace, interceptors: clientInterceptors() });
}
