// A counting door in front of the sandbox: what the service received, when, and what it answered, for
// tests and benchmarks that check call counts and the rate budget against the service's own view.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DoorRequest {
  at: number;
  method: string;
  path: string;
  /** The request's JSON body, when it had one. */
  body: Record<string, unknown> | undefined;
  status: number;
  /** Milliseconds from arrival until the sandbox's answer was sent on (0 until then). */
  ms: number;
}

/**
 * The sandbox's door: an HTTP proxy that forwards every request and records when it arrived, its
 * route and the status the sandbox answered, so a test can count requests per window and 429s.
 */
export interface SandboxDoor {
  url: string;
  requests: DoorRequest[];
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startSandboxDoor(target: string): Promise<SandboxDoor> {
  const requests: DoorRequest[] = [];
  const server = createServer((request, response) => {
    void (async () => {
      const at = Date.now();
      const body = await readBody(request);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name))
          headers[name] = value;
      }
      let parsed: Record<string, unknown> | undefined;
      try {
        parsed = body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : undefined;
      } catch {
        parsed = undefined;
      }
      const record: DoorRequest = {
        at,
        method: request.method ?? 'GET',
        path: request.url ?? '/',
        body: parsed,
        status: 0,
        ms: 0,
      };
      requests.push(record);
      try {
        const upstream = await fetch(`${target}${request.url ?? '/'}`, {
          method: request.method ?? 'GET',
          headers,
          ...(body.length ? { body } : {}),
        });
        record.status = upstream.status;
        const out: Record<string, string> = {};
        upstream.headers.forEach((value, name) => {
          if (!['content-encoding', 'transfer-encoding', 'connection', 'content-length'].includes(name))
            out[name] = value;
        });
        const bytes = Buffer.from(await upstream.arrayBuffer());
        out['content-length'] = String(bytes.length);
        response.writeHead(upstream.status, out);
        response.end(bytes);
        record.ms = Date.now() - at;
      } catch {
        record.ms = Date.now() - at;
        record.status = 502;
        response.writeHead(502).end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The most requests that arrived in any window of `windowMs` (a sliding window over arrival times). */
export function peakInWindow(requests: DoorRequest[], windowMs: number): number {
  const times = requests.map((r) => r.at).sort((a, b) => a - b);
  let peak = 0;
  let start = 0;
  for (let end = 0; end < times.length; end += 1) {
    while (times[end]! - times[start]! >= windowMs) start += 1;
    peak = Math.max(peak, end - start + 1);
  }
  return peak;
}
