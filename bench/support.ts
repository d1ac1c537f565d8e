// What the benchmarks share: child processes run through tsx, waiting for a server or for a worker's
// pollers, and a process's memory read from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';

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
