// A tiny node:http server on a free port that answers with whatever a test says, and records what it
// received: enough to test how the client classifies statuses, bodies and broken connections.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type CannedHandler = (request: ReceivedRequest, res: ServerResponse, raw: IncomingMessage) => void;

export interface CannedServer {
  url: string;
  received: ReceivedRequest[];
  /** Replaces the handler for the following requests. */
  answer(handler: CannedHandler): void;
  close(): Promise<void>;
}

/** JSON response with optional extra headers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export async function startCannedServer(): Promise<CannedServer> {
  const received: ReceivedRequest[] = [];
  let handler: CannedHandler = (_request, res) => sendJson(res, 500, { detail: 'no answer set' });
  const server = createServer((raw, res) => {
    const chunks: Buffer[] = [];
    raw.on('data', (chunk: Buffer) => chunks.push(chunk));
    raw.on('end', () => {
      const request = {
        method: raw.method ?? '',
        url: raw.url ?? '',
        headers: raw.headers,
        body: Buffer.concat(chunks).toString(),
      };
      received.push(request);
      handler(request, res, raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answer(next) {
      handler = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}
