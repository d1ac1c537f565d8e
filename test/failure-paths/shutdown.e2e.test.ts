// Clean stops, with the real processes: `enrichflow dev` and `enrichflow demo` stop every process they
// started (Temporal server, S3 server; the sandbox and worker in-process) within 10 s of SIGTERM or
// Ctrl-C and exit 0, leaving no child; `enrichflow worker` and `webhooks serve` drain and exit 0.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { saveWebhookSecret, defaultSecretFile } from '../../events/webhook-secrets.js';
import { cliEnv, testConfig } from '../support/pipeline-harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const started: ChildProcess[] = [];

afterEach(() => {
  // A test that failed half-way must not leave its processes to the next one.
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function enrichflow(args: string[], env: NodeJS.ProcessEnv = process.env): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/enrichflow-src.ts', ...args], {
    cwd: ROOT,
    env,
  });
  started.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Resolves once the process has printed `text` (fails if it exits first). */
async function printed(running: Running, text: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (running.output().includes(text)) {
        running.child.stdout!.off('data', check);
        running.child.stderr!.off('data', check);
        resolve();
      }
    };
    running.child.stdout!.on('data', check);
    running.child.stderr!.on('data', check);
    void running.exited.then((code) =>
      reject(new Error(`exited (${code}) before printing "${text}":\n${running.output()}`)),
    );
    check();
  });
}

/** The live (not zombie) child processes of `pid`, from /proc. */
function childrenOf(pid: number): { pid: number; command: string }[] {
  const found: { pid: number; command: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid && fields[0] !== 'Z') {
        found.push({ pid: Number(entry), command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) });
      }
    } catch {
      // gone while we looked
    }
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Sends `signal` and measures how long the process takes to exit; checks none of `children` is left. */
async function stopAndMeasure(running: Running, signal: NodeJS.Signals) {
  const children = childrenOf(running.child.pid!).filter((c) => c.command !== 'esbuild');
  const start = Date.now();
  running.child.kill(signal);
  const code = await running.exited;
  const ms = Date.now() - start;
  return { code, ms, children, left: children.filter((c) => alive(c.pid)) };
}

test(
  'enrichflow dev: SIGTERM stops the servers, sandbox and worker within 10 s, exit 0',
  {
    timeout: 180_000,
  },
  async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'enrichflow-dev-stop-'));
    const dev = enrichflow(['dev', '--free-ports', '--headless', '--data-dir', dataDir]);
    await printed(dev, 'Press Ctrl-C to stop.');
    const { code, ms, children, left } = await stopAndMeasure(dev, 'SIGTERM');
    expect(children.map((c) => c.command).sort()).toEqual(['temporal', 'versitygw']);
    expect(code, dev.output()).toBe(0);
    expect(ms).toBeLessThan(10_000);
    expect(left).toEqual([]);
    expect(dev.output()).toContain('enrichflow local stack stopped');
    expect(dev.output()).not.toContain('IllegalStateError');
    console.info(`enrichflow dev stopped on SIGTERM in ${ms} ms`);
  },
);

test('enrichflow dev: Ctrl-C (SIGINT) does the same', { timeout: 180_000 }, async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'enrichflow-dev-int-'));
  const dev = enrichflow(['dev', '--free-ports', '--headless', '--no-sandbox', '--data-dir', dataDir], {
    ...process.env,
    ENRICHFLOW_API_KEY: 'any-key',
  });
  await printed(dev, 'Press Ctrl-C to stop.');
  const { code, ms, left } = await stopAndMeasure(dev, 'SIGINT');
  expect(code, dev.output()).toBe(0);
  expect(ms).toBeLessThan(10_000);
  expect(left).toEqual([]);
  console.info(`enrichflow dev stopped on SIGINT in ${ms} ms`);
});

test(
  'enrichflow demo: Ctrl-C mid-run stops every process it started within 10 s, exit 0',
  {
    timeout: 180_000,
  },
  async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'enrichflow-demo-stop-'));
    const demo = enrichflow(['demo', '--data-dir', dataDir, '--output', path.join(dataDir, 'out')]);
    await printed(demo, 'Started run');
    const { code, ms, children, left } = await stopAndMeasure(demo, 'SIGINT');
    expect(children.map((c) => c.command).sort()).toEqual(['temporal', 'versitygw']);
    expect(code, demo.output()).toBe(0);
    expect(ms).toBeLessThan(10_000);
    expect(left).toEqual([]);
    console.info(`enrichflow demo stopped on SIGINT in ${ms} ms`);
  },
);

test(
  'enrichflow worker and webhooks serve: SIGTERM drains and exits 0 within 10 s',
  { timeout: 120_000 },
  async () => {
    const config = testConfig('http://127.0.0.1:9');
    const env = { ...cliEnv(config), ENRICHFLOW_API_KEY: 'a-key', LOG_LEVEL: 'info' };
    const worker = enrichflow(['worker'], env);
    await printed(worker, 'worker running');
    const stoppedWorker = await stopAndMeasure(worker, 'SIGTERM');
    expect(stoppedWorker.code, worker.output()).toBe(0);
    expect(stoppedWorker.ms).toBeLessThan(10_000);

    const secrets = mkdtempSync(path.join(tmpdir(), 'enrichflow-secrets-'));
    await saveWebhookSecret(defaultSecretFile(secrets, null, 'acme'), {
      partner_id: 'acme',
      tenant: null,
      webhook_url: 'http://127.0.0.1/hook',
      webhook_secret: 'not-a-real-secret',
      registered_at: new Date().toISOString(),
      service_url: 'http://127.0.0.1:9',
    });
    const receiver = enrichflow(
      [
        'webhooks',
        'serve',
        '--output',
        mkdtempSync(path.join(tmpdir(), 'enrichflow-events-')),
        '--port',
        '0',
      ],
      { ...env, ENRICHFLOW_WEBHOOK_SECRETS_DIR: secrets },
    );
    await printed(receiver, 'http://');
    const stoppedReceiver = await stopAndMeasure(receiver, 'SIGTERM');
    expect(stoppedReceiver.code, receiver.output()).toBe(0);
    expect(stoppedReceiver.ms).toBeLessThan(10_000);
    console.info(`worker stopped on SIGTERM in ${stoppedWorker.ms} ms, receiver in ${stoppedReceiver.ms} ms`);
  },
);
