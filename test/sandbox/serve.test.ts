// The sandbox as a running server: `startSandbox` on a free port with the events plugin inside (auth and
// tenant handed over, the business `events` filter reading its event history), and the CLI command's flags.
import { Command } from 'commander';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSandboxCommand } from '../../cli/commands/sandbox.js';
import { ROUTES } from '../../contract/index.js';
import { startSandbox, type RunningSandbox } from '../../sandbox/serve.js';
import { API_KEY, OTHER_KEY, tempDir } from './support.js';

describe('startSandbox', () => {
  const dir = tempDir();
  let running: RunningSandbox;
  // The generated event history ends at this date; a clock there keeps it "recent".
  const now = Date.parse('2026-01-01T00:00:00Z');

  beforeAll(async () => {
    running = await startSandbox({
      port: 0,
      dataDir: dir.dir,
      seed: 'serve-test',
      businesses: 800,
      prospects: 1500,
      apiKeys: [
        { name: 'alpha', key: API_KEY },
        { name: 'beta', key: OTHER_KEY },
      ],
      clock: () => now,
    });
  });
  afterAll(async () => {
    await running.close();
    dir.remove();
  });

  async function post(path: string, body: unknown, key = API_KEY) {
    const response = await request(`${running.url}${path}`, {
      method: 'POST',
      headers: { api_key: key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
  }

  it('listens on a free port and serves the API', async () => {
    expect(running.port).toBeGreaterThan(0);
    const version = await request(`${running.url}/version/`);
    expect(version.statusCode).toBe(200);
    expect(await version.body.json()).toBe('0.2.286');
  });

  it('hands the key name and tenant to the events plugin', async () => {
    const none = await request(`${running.url}${ROUTES.listEnrollments.path}`);
    expect(none.statusCode).toBe(401);
    await none.body.dump();
    const id = running.app.sandbox.store.businessIds[0] as string;
    const created = await post(ROUTES.createEnrollments.path, {
      enrollment_key: 'key-1',
      event_types: ['new_product'],
      business_ids: [id],
    });
    expect(created.status).toBe(200);
    const list = async (key: string) => {
      const response = await request(`${running.url}${ROUTES.listEnrollments.path}`, {
        headers: { api_key: key },
      });
      return ((await response.body.json()) as { enrollments: unknown[] }).enrollments.length;
    };
    expect(await list(API_KEY)).toBe(1);
    expect(await list(OTHER_KEY)).toBe(0);
  });

  it('filters businesses by recent events from the event history', async () => {
    const since = new Date(now - 30 * 86_400_000).toISOString().replace('Z', '');
    const rows = await running.app.sandbox.store.query(
      `SELECT DISTINCT business_id FROM events WHERE event_name IN ('new_product', 'new_office') AND event_time >= CAST($since AS TIMESTAMP)`,
      { since },
    );
    const expected = new Set(rows.map((row) => String(row.business_id)));
    expect(expected.size).toBeGreaterThan(0);
    const result = await post(ROUTES.fetchBusinesses.path, {
      mode: 'preview',
      size: 1000,
      page_size: 500,
      filters: { events: { values: ['new_product', 'new_office'], last_occurrence: 30 } },
    });
    expect(result.status).toBe(200);
    expect(result.body.total_results).toBe(expected.size);
    for (const business of result.body.data as { business_id: string }[])
      expect(expected.has(business.business_id)).toBe(true);
  });
});

describe('enrichflow sandbox serve', () => {
  it('documents its flags in --help', () => {
    const program = new Command().exitOverride();
    let help = '';
    program.configureOutput({ writeOut: (text) => (help += text), writeErr: (text) => (help += text) });
    registerSandboxCommand(program);
    expect(() => program.parse(['node', 'enrichflow', 'sandbox', 'serve', '--help'])).toThrow();
    for (const flag of [
      '--port',
      '--data-dir',
      '--seed',
      '--businesses',
      '--prospects',
      '--api-key',
      '--rate-limit',
      '--admin-key',
      '--strict',
      '--now',
      '--record-cache-mb',
      '--preload',
      '--prospect-record-cache-mb',
      '--preload-prospects',
    ]) {
      expect(help).toContain(flag);
    }
    expect(help).toContain('dev-key-enrichflow');
  });

  it('refuses a dataset to preload that is not of its kind, naming the flag', async () => {
    const program = new Command().exitOverride();
    registerSandboxCommand(program);
    const serve = (flag: string, value: string) =>
      program.parseAsync(['node', 'enrichflow', 'sandbox', 'serve', '--port', '0', flag, value]);
    await expect(serve('--preload-prospects', 'profiles,firmographics')).rejects.toThrow(
      "--preload-prospects: 'firmographics' is not a prospect bulk dataset (one of profiles, contacts_information, network_posts)",
    );
    await expect(serve('--preload', 'profiles')).rejects.toThrow(
      "--preload: 'profiles' is not a bulk dataset",
    );
  });
});
