// The window commit activity on a local folder: hundreds of small inbox batches (as a busy receiver
// writes them) merge into one table within the worker's memory cap, each event once, and the merged
// batches leave the inbox.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEventActivities } from '../../activities/events.js';
import { queryRows, sqlString, withDuckDb } from '../../storage/duckdb.js';
import { sinkLayout, type SinkEventRecord } from '../../pipeline/sink-layout.js';
import { silentLogger } from '../../lib/logger.js';
import { openObjectStore } from '../../storage/open-store.js';
import { joinKey } from '../../storage/object-store.js';

const dir = mkdtempSync(path.join(tmpdir(), 'events-window-commit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('window commit', () => {
  it('merges 800 inbox batches into one table, each event once', async () => {
    const output = `${dir}/out/`;
    const resolveStore = (location: string) => openObjectStore(location);
    const { store, prefix } = resolveStore(output);
    const windowStart = Date.parse('2026-11-22T03:00:00Z');
    const batches = 800;
    for (let b = 0; b < batches; b += 1) {
      // 15 deliveries a batch: 14 new events and one repeated from the batch before.
      const records: SinkEventRecord[] = Array.from({ length: 15 }, (_, i) => {
        const n = i === 14 && b > 0 ? (b - 1) * 14 : b * 14 + i;
        return {
          event_id: `ev-${n}`,
          event_name: 'new_product',
          event_time: new Date(windowStart + n).toISOString(),
          entity_id: 'b'.repeat(32),
          entity_type: 'business',
          tenant_id: null,
          partner_id: 'crm',
          enrollment_key: 'crm-sync',
          data: { product_name: `P${n}`, note: 'x'.repeat(200) },
          received_at: new Date(windowStart + 3_600_000 + b).toISOString(),
        };
      });
      const key = joinKey(
        prefix,
        'events',
        sinkLayout.inboxBatch(null, windowStart, `b${String(b).padStart(4, '0')}`),
      );
      await store.put(key, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    }
    const activities = createEventActivities({ resolveStore, logger: silentLogger });
    const commit = await activities.commitEventWindow({
      output,
      tenant: null,
      windowStart,
      windowMs: 3_600_000,
      complete: true,
    });
    const unique = batches * 14;
    expect(commit).toMatchObject({ rows: unique, merged: batches * 15, duplicates: batches * 15 - unique });
    expect(commit.table.files.map((f) => f.key)).toEqual([
      'tenant=_none/window=20261122T030000Z/part-0.parquet',
    ]);
    const file = path.join(dir, 'out', 'events', 'tenant=_none', 'window=20261122T030000Z', 'part-0.parquet');
    const [counts] = await withDuckDb({}, (connection) =>
      queryRows<{ rows: number; ids: number }>(
        connection,
        `SELECT count(*)::INTEGER AS rows, count(DISTINCT event_id)::INTEGER AS ids FROM read_parquet(${sqlString(file)})`,
      ),
    );
    expect(counts).toEqual({ rows: unique, ids: unique });
    const inbox = path.join(
      dir,
      'out',
      'events',
      '_work',
      'inbox',
      'tenant=_none',
      'window=20261122T030000Z',
    );
    expect(existsSync(inbox) ? readdirSync(inbox) : []).toEqual([]);
  });
});
