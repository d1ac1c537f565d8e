// What the export tests share: a sandbox world of their own (small, so a lowered offset cap makes the
// planner split), a counting proxy in front of it that records every call's body, and the truth read
// straight from the sandbox's database.
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { EnrichflowConfig } from '../../config/index.js';
import { startExport } from '../../cli/export-run.js';
import type { ExportSpec } from '../../jobs/export-spec.js';
import { startSandbox, type RunningSandbox } from '../../sandbox/serve.js';
import type { ExportPlanResult, ExportSummary } from '../../pipeline/export-types.js';
import { ADMIN_KEY, API_KEY } from '../support/pipeline-harness.js';
import { startSandboxDoor, type DoorRequest, type SandboxDoor } from '../support/sandbox-door.js';

/** 2,000 businesses and 10,000 prospects: a few thousand per company size, so a cap of 1,000 splits. */
export async function startExportSandbox(name: string): Promise<RunningSandbox> {
  // A folder per test file: files run in parallel, and DuckDB lets one process hold a database.
  return startSandbox({
    dataDir: path.join(tmpdir(), `enrichflow-export-sandbox-${name}`),
    seed: 'export',
    businesses: 2_000,
    prospects: 10_000,
    port: 0,
    apiKeys: [{ name: 'e2e', key: API_KEY }],
    adminKey: ADMIN_KEY,
    rateLimitPerMinute: 0,
    events: false,
  });
}

/** Ids of the prospects a SQL condition over `prospects p JOIN businesses b` selects. */
export async function prospectIds(sandbox: RunningSandbox, where: string): Promise<string[]> {
  const rows = await sandbox.app.sandbox.store.query(
    `SELECT p.prospect_id AS id FROM prospects p JOIN businesses b ON b.bix = p.bix WHERE ${where}`,
  );
  return rows.map((r) => String(r.id));
}

/** The sandbox door (test/support/sandbox-door.ts), its requests also as `calls`. */
export type CountingProxy = SandboxDoor & { calls: DoorRequest[] };

/** An HTTP proxy that forwards to `target` and records every request, to count the calls a run made. */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const door = await startSandboxDoor(target);
  return Object.assign(door, { calls: door.requests });
}

/** Starts an export and waits for its result. */
export async function exportToEnd<T extends ExportSummary | ExportPlanResult = ExportSummary>(
  client: Client,
  config: EnrichflowConfig,
  spec: ExportSpec,
): Promise<T> {
  const { workflowId } = await startExport(client, config, spec);
  return (await client.workflow.getHandle(workflowId).result()) as T;
}
