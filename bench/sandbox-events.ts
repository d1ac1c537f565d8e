// Benchmark of the sandbox's events part: how long the seeded 90-day history takes for N businesses,
// and how many signed webhook deliveries per second the outbox pushes to a local receiver that
// answers 200 at once. Run: npx tsx bench/sandbox-events.ts [--businesses 200000] [--deliveries 2000]
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { EventsService, generateEvents } from '../sandbox/events/index.js';

const { values } = parseArgs({
  options: {
    businesses: { type: 'string', default: '200000' },
    deliveries: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '8' },
  },
});
const businesses = Number(values.businesses);
const deliveries = Number(values.deliveries);
const concurrency = Number(values.concurrency);

const dir = mkdtempSync(join(tmpdir(), 'bench-sandbox-events-'));
try {
  const instance = await DuckDBInstance.create(join(dir, 'sandbox.duckdb'));
  const connection = await instance.connect();
  await connection.run(
    `CREATE TABLE businesses AS SELECT lower(md5('business-' || i::VARCHAR)) AS business_id FROM range(${businesses}) t(i)`,
  );
  let started = performance.now();
  const history = await generateEvents({ connection, seed: 'bench' });
  const generationMs = performance.now() - started;
  connection.closeSync();
  console.log(
    `history: ${history.events} events for ${businesses} businesses in ${(generationMs / 1000).toFixed(2)} s ` +
      `(${Math.round(history.events / (generationMs / 1000))} events/s)`,
  );

  let received = 0;
  let allReceived: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    allReceived = resolve;
  });
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200).end();
      received += 1;
      if (received === deliveries) allReceived();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;

  const service = await EventsService.start({ db: instance, deliveryOptions: { concurrency } });
  const scope = { keyName: 'bench', tenant: '' };
  const businessId = 'a'.repeat(32);
  await service.store.registerWebhook(scope, 'bench-partner', `http://127.0.0.1:${port}/hook`, Date.now());
  await service.store.addEnrollment(
    scope,
    { enrollment_key: 'bench', event_types: ['new_product'], business_ids: [businessId] },
    Date.now(),
  );
  started = performance.now();
  for (let sent = 0; sent < deliveries; sent += 100) {
    const batch = Math.min(100, deliveries - sent);
    await service.emit(
      Array.from({ length: batch }, () => ({ business_id: businessId, event_name: 'new_product' as const })),
      'admin',
    );
  }
  const queuedMs = performance.now() - started;
  await done;
  const deliveredMs = performance.now() - started;
  await service.stop();
  await new Promise((resolve) => receiver.close(resolve));
  instance.closeSync();
  console.log(
    `outbox: ${deliveries} events queued in ${(queuedMs / 1000).toFixed(2)} s; all delivered after ` +
      `${(deliveredMs / 1000).toFixed(2)} s = ${Math.round(deliveries / (deliveredMs / 1000))} deliveries/s ` +
      `(concurrency ${concurrency})`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
