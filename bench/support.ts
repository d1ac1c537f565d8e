// What the benchmarks share: child processes run through tsx, the sandbox and a worker in their own
// processes, inputs drawn from the sandbox's businesses, waiting for a server or for a worker's pollers,
// and a process's memory read from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { DEFAULT_SEED } from '../sandbox/app.js';
import { generateBusinessRows } from '../sandbox/data/businesses.js';
import { freePort } from '../stack/ports.js';

export const ROOT = path.resolve(import.meta.dirname, '..');

/** Starts `node [nodeFlags] --import tsx <argv>` from the repository, stderr shown; adds it to `children`. */
export function tsxProcess(
  children: ChildProcess[],
  argv: string[],
  env: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
): ChildProcess {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', ...argv], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

/** Polls `url` until it answers 2xx; fails at once if `child` (the server) has exited. */
export async function waitFor(url: string, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`${url}: the process exited (${child.exitCode})`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not come up`);
}

/** Waits until a worker polls every task queue, so a timed run does not include the worker's start. */
export async function waitForPollers(client: Client, queues: string[]): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (const name of queues) {
    for (;;) {
      const described = await client.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name },
        taskQueueType: name.endsWith('-api') ? 2 : 1,
      });
      if ((described.pollers ?? []).length > 0) break;
      if (Date.now() > deadline) throw new Error(`no worker polls ${name}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** RSS of a process (`VmRSS`, now) or its peak so far (`VmHWM`), MB. */
export function rssMb(pid: number | 'self', field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
}

/**
 * How `docker-compose.yml` runs a worker, for benchmarks that start one: V8's old space capped at
 * `heapMb` (0 = Node's default) and its young generation at 8 MB semi-spaces (Node's default is 16 MB,
 * in the main thread and the workflow thread alike: ~30 MB of RSS for a few more scavenges), and two
 * malloc arenas (DuckDB's and the Temporal core's threads otherwise get one each, ~60 MB of freed
 * memory held in them between commits).
 */
export function workerNodeFlags(heapMb: number): string[] {
  return [...(heapMb > 0 ? [`--max-old-space-size=${heapMb}`] : []), '--max-semi-space-size=8'];
}
export const WORKER_ENV = { MALLOC_ARENA_MAX: '2' } as const;

/** The admin routes of a benchmark's sandbox (faults, rate-limit reset, status). */
export async function sandboxAdmin(
  base: string,
  adminKey: string,
  method: string,
  route: string,
  body?: unknown,
): Promise<unknown> {
  const response = await fetch(`${base}/_admin/${route}`, {
    method,
    headers: { 'x-admin-key': adminKey, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
  return response.headers.get('content-type')?.includes('json') ? response.json() : undefined;
}

/**
 * Writes a CSV of `rows` companies drawn from the sandbox's own businesses (same seed), by name and
 * domain, starting at the `offset`th draw (two inputs with different offsets overlap only by chance).
 */
export function writeCompanyInput(file: string, businesses: number, rows: number, offset = 0): void {
  const world = generateBusinessRows(DEFAULT_SEED, businesses).filter((b) => b.domain);
  const lines = ['name,domain'];
  for (let i = offset; i < offset + rows; i += 1) {
    const b = world[(i * 7919) % world.length]!;
    lines.push(`"${b.name.replace(/"/g, '""')}",${b.domain}`);
  }
  writeFileSync(file, lines.join('\n') + '\n');
}

export interface BenchSandboxOptions {
  businesses: number;
  ratePerSecond: number;
  apiKey: string;
  adminKey: string;
  /** Datasets served from memory (the indexes and these loaded before the sandbox counts as warm). */
  preload?: string[];
}

/** Starts the sandbox in its own process on a free port; resolves when it answers (and is warm). */
export async function startBenchSandbox(
  children: ChildProcess[],
  options: BenchSandboxOptions,
): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const preload = options.preload ?? [];
  const child = tsxProcess(
    children,
    [
      'bin/enrichflow-src.ts',
      'sandbox',
      'serve',
      '--port',
      String(port),
      '--data-dir',
      path.join(ROOT, '.data', `bench-sandbox-${options.businesses}`),
      '--businesses',
      String(options.businesses),
      '--prospects',
      '1000',
      '--rate-limit',
      String(options.ratePerSecond * 60),
      '--api-key',
      `bench:${options.apiKey}`,
      '--admin-key',
      options.adminKey,
      // The stand-in service serves the datasets from memory, as the real one would not slow down with
      // the dataset asked for: the benchmark measures the pipeline, not the sandbox's cache.
      ...(preload.length ? ['--record-cache-mb', '1024', '--preload', preload.join(',')] : []),
    ],
    { LOG_LEVEL: 'warn' },
  );
  await waitFor(`${url}/healthcheck/http`, 600_000, child);
  const deadline = Date.now() + 300_000;
  for (;;) {
    const status = (await sandboxAdmin(url, options.adminKey, 'GET', 'status')) as {
      indexes_ready: boolean;
      datasets_in_memory: string[];
    };
    if (status.indexes_ready && preload.every((d) => status.datasets_in_memory.includes(d))) break;
    if (Date.now() > deadline) throw new Error(`sandbox not warm: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  return { url, process: child };
}

/**
 * Starts a worker process as users run it: the compiled CLI when it is built, else the sources through
 * tsx; with `workerNodeFlags` and `WORKER_ENV`.
 */
export function startBenchWorker(
  children: ChildProcess[],
  env: NodeJS.ProcessEnv,
  nodeFlags: string[],
): { process: ChildProcess; compiled: boolean } {
  const compiled = existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'));
  if (!compiled) {
    const child = tsxProcess(
      children,
      ['bin/enrichflow-src.ts', 'worker'],
      { ...env, ...WORKER_ENV },
      nodeFlags,
    );
    return { process: child, compiled };
  }
  const child = spawn(process.execPath, [...nodeFlags, 'bin/enrichflow.js', 'worker'], {
    cwd: ROOT,
    env: { ...process.env, ...env, ...WORKER_ENV },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return { process: child, compiled };
}
