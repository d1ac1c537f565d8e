// Child processes of the local stack: started with their output in a log file, polled for readiness
// with a deadline (never a fixed sleep), and stopped with SIGTERM, then SIGKILL if they hang.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/** Thrown when a stack process exits or fails its readiness check before the deadline. */
export class StackStartError extends Error {
  override readonly name = 'StackStartError';
  readonly code = 'STACK_START_FAILED';
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  readonly exited: Promise<number | string>;
  stop(graceMs?: number): Promise<void>;
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export function startProcess(options: StartProcessOptions): ManagedProcess {
  mkdirSync(path.dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const child: ChildProcess = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      log.end();
      resolve(code ?? signal ?? 'unknown');
    });
    child.once('error', (error) => {
      log.write(`spawn error: ${error.message}\n`);
      log.end();
      resolve('spawn-error');
    });
  });
  let stopping: Promise<void> | undefined;
  return {
    name: options.name,
    pid: child.pid ?? -1,
    logFile: options.logFile,
    exited,
    stop(graceMs = 10_000) {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const outcome = await Promise.race([
          exited.then(() => 'exited'),
          delay(graceMs).then(() => 'timeout'),
        ]);
        if (outcome === 'timeout') {
          child.kill('SIGKILL');
          await exited;
        }
      })();
      return stopping;
    },
  };
}

/**
 * Polls `check` until it returns true, the process exits, or the deadline passes.
 * The interval grows from 50 ms to 500 ms so fast starts are seen quickly without busy-waiting.
 */
export async function waitUntilReady(
  proc: ManagedProcess,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitedWith: number | string | undefined;
  void proc.exited.then((code) => {
    exitedWith = code;
  });
  let interval = 50;
  while (Date.now() < deadline) {
    if (exitedWith !== undefined) {
      throw new StackStartError(
        `${proc.name} exited (${exitedWith}) before it was ready; see ${proc.logFile}`,
      );
    }
    if (await check().catch(() => false)) return;
    await delay(interval);
    interval = Math.min(500, interval * 2);
  }
  await proc.stop();
  throw new StackStartError(`${proc.name} was not ready within ${timeoutMs} ms; see ${proc.logFile}`);
}
