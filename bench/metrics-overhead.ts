// Cost of enrichflow's metrics per Data Service call (issue 7): what `instrumentCalls` adds to one
// call — a counter, a latency histogram and the records/misses counters — with the Prometheus
// exporter on, inside an activity context, against a call that does nothing. Prints µs per call.
//   npx tsx bench/metrics-overhead.ts [--calls 20000]
import { MockActivityEnvironment } from '@temporalio/testing';
import { Runtime } from '@temporalio/worker';
import { parseArgs } from 'node:util';
import type { EnrichmentCalls } from '../activities/client-port.js';
import { instrumentCalls } from '../activities/metrics.js';
import { freePort } from '../stack/ports.js';

const { values: args } = parseArgs({ options: { calls: { type: 'string', default: '20000' } } });
const calls = Number(args.calls);
const address = `127.0.0.1:${await freePort()}`;
const runtime = Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress: address } } } });

const ids = Array.from({ length: 50 }, (_, i) => `b${i}`);
const data = ids.slice(5).map((id) => ({ business_id: id, data: {} }));
const bare = {
  bulkEnrich: () => Promise.resolve({ body: { data } }),
  matchBusinesses: () => Promise.resolve({ body: { matched_businesses: [] } }),
  enrichHierarchy: () => Promise.resolve({ body: {} }),
} as unknown as EnrichmentCalls;
const instrumented = instrumentCalls(bare);
const env = new MockActivityEnvironment({ activityType: 'callBatch' }, { metricMeter: runtime.metricMeter });

async function time(client: EnrichmentCalls): Promise<number> {
  const started = performance.now();
  await env.run(async () => {
    for (let i = 0; i < calls; i += 1) await client.bulkEnrich('firmographics', { business_ids: ids });
  });
  return performance.now() - started;
}

await time(instrumented); // warm-up: JIT and the exporter's first registrations
const plain = await time(bare);
const measured = await time(instrumented);
const perCall = ((measured - plain) * 1000) / calls;
const scrape = await (await fetch(`http://${address}/metrics`)).text();
const counted = /enrichflow_calls\{[^}]*\} (\d+)/.exec(scrape)?.[1];
process.stdout.write(
  `${calls} calls: bare ${plain.toFixed(0)} ms, instrumented ${measured.toFixed(0)} ms; ` +
    `metrics cost ${perCall.toFixed(1)} µs per call (enrichflow_calls scraped: ${counted})\n`,
);
process.exit(0);
