// The attempt discipline without a server: the policy table agrees with the client's error classes, a
// hung or stalled attempt gives its slot and memory permit back, cancellation reaches the work's
// signal, and errors become the failures the retry policy reads, cause kept.
import type { ApplicationFailure } from '@temporalio/common';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { CallDeadlines, pacedCall } from '../../activities/api-pacing.js';
import {
  cancellationSignal,
  heartbeat,
  inAttempt,
  MemoryGate,
  requestsSent,
  toActivityFailure,
} from '../../activities/attempt.js';
import { nonRetryableErrorTypes, RateLimitedError, retryableErrorTypes } from '../../client/errors.js';
import {
  ACTIVITY_KINDS,
  activityOptions,
  ERROR_CLASSES,
  HEARTBEAT_EVERY_MS,
  NON_RETRYABLE_ERRORS,
  requestsOfFailure,
} from '../../pipeline/attempts.js';
import { InvalidLocationError, openObjectStore } from '../../storage/open-store.js';

const seconds = (text: string) => {
  const [n, unit] = text.split(' ');
  return Number(n) * (unit?.startsWith('minute') ? 60 : unit?.startsWith('hour') ? 3600 : 1);
};

describe('the policy table', () => {
  it('classifies every client error as the client does', () => {
    for (const name of retryableErrorTypes) expect(ERROR_CLASSES[name].retry, name).toBe(true);
    for (const name of nonRetryableErrorTypes) expect(NON_RETRYABLE_ERRORS, name).toContain(name);
  });

  it('notices a dead worker within 30 s, whatever the activity kind', () => {
    for (const [kind, policy] of Object.entries(ACTIVITY_KINDS)) {
      const options = activityOptions(kind as keyof typeof ACTIVITY_KINDS);
      expect(options.retry?.nonRetryableErrorTypes, kind).toEqual(NON_RETRYABLE_ERRORS);
      const heartbeatTimeout = 'heartbeatTimeout' in policy ? seconds(policy.heartbeatTimeout) : undefined;
      const bound = heartbeatTimeout ?? seconds(policy.startToCloseTimeout);
      expect(bound, kind).toBeLessThanOrEqual(60);
      if (heartbeatTimeout !== undefined) {
        expect(heartbeatTimeout, kind).toBeLessThanOrEqual(30);
        expect(heartbeatTimeout * 1000, kind).toBeGreaterThanOrEqual(3 * HEARTBEAT_EVERY_MS);
      }
    }
  });

  it('applies a run’s retry overrides to the API kind', () => {
    const options = activityOptions('apiCall', { taskQueue: 'api', retry: { maximumAttempts: 3 } });
    expect(options.taskQueue).toBe('api');
    expect(options.retry?.maximumAttempts).toBe(3);
  });
});

describe('errors become failures', () => {
  it('a 429 keeps its Retry-After as the next delay and its cause', () => {
    const error = new RateLimitedError('slow down', 1500, { status: 429 } as never);
    const failure = toActivityFailure(error) as ApplicationFailure;
    expect(failure.type).toBe('RateLimitedError');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(1500);
    expect(failure.cause).toBe(error);
  });

  it('a refused path fails at once with its code and path', () => {
    const error = Object.assign(new Error("ENOTDIR: not a directory, mkdir '/etc/hostname/out'"), {
      code: 'ENOTDIR',
      path: '/etc/hostname/out',
    });
    const failure = toActivityFailure(error) as ApplicationFailure;
    expect(failure.type).toBe('LocalPathError');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('/etc/hostname/out: ENOTDIR');
    expect(failure.cause).toBe(error);
  });

  it('an unknown error stays retryable and keeps its cause', () => {
    const error = new TypeError('boom');
    const failure = toActivityFailure(error) as ApplicationFailure;
    expect(failure.type).toBe('TypeError');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.cause).toBe(error);
  });

  it('virtual file systems are refused as locations before anything waits on them', () => {
    expect(() => openObjectStore('/proc/x/')).toThrow(InvalidLocationError);
    expect(() => openObjectStore('/sys/kernel/out/')).toThrow(/virtual file system/);
  });
});

describe('an attempt that will not return', () => {
  it('is abandoned when cancelled: the activity returns, and the work sees its signal fire', async () => {
    const env = new MockActivityEnvironment();
    let seen: AbortSignal | undefined;
    const hung = inAttempt('tableCommit', () => {
      seen = cancellationSignal();
      return new Promise<never>(() => undefined);
    });
    const running = env.run(hung, undefined);
    await expect.poll(() => seen).toBeDefined();
    env.cancel();
    await expect(running).rejects.toBeInstanceOf(CancelledFailure);
    expect(seen?.aborted).toBe(true);
  });

  it('is abandoned as stalled when it reports no progress, and gives its gate permit back', async () => {
    const env = new MockActivityEnvironment();
    const gate = new MemoryGate(1);
    const stuck = inAttempt('tableCommit', () => new Promise<never>(() => undefined), {
      gate,
      stallAfterMs: 200,
    });
    await expect(env.run(stuck, undefined)).rejects.toMatchObject({ type: 'StalledError' });
    // The permit came back: the next heavy attempt runs.
    const next = inAttempt('tableCommit', () => Promise.resolve('done'), { gate, stallAfterMs: 200 });
    await expect(new MockActivityEnvironment().run(next, undefined)).resolves.toBe('done');
  });

  it('is not stalled while it reports progress', async () => {
    const env = new MockActivityEnvironment();
    const busy = inAttempt(
      'tableCommit',
      async () => {
        for (let i = 0; i < 8; i += 1) {
          heartbeat({ step: i });
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        return 'finished';
      },
      // Five times the gap between heartbeats: only a stall, not a loaded machine, goes past it.
      { stallAfterMs: 1_000 },
    );
    await expect(env.run(busy, undefined)).resolves.toBe('finished');
  });
});

describe('calls counted as the service receives them', () => {
  const send = (fail?: Error) =>
    inAttempt('apiCall', async () => {
      await pacedCall('match', () => (fail ? Promise.reject(fail) : Promise.resolve('ok')));
      return requestsSent();
    });

  it('counts a request when it leaves, adding the earlier attempts', async () => {
    const heartbeats: unknown[] = [];
    const env = new MockActivityEnvironment({ attempt: 3, heartbeatDetails: { requests: 1 } });
    env.on('heartbeat', (details: unknown) => heartbeats.push(details));
    // Attempt 3, but the attempt before it died before sending: the service received 1 + this one.
    await expect(env.run(send(), undefined)).resolves.toBe(2);
    // The running total went out before the request did, for the next attempt to start from.
    expect(heartbeats[0]).toEqual({ requests: 2 });
  });

  it('a first attempt does not heartbeat for its request; a retry presumes it was sent', async () => {
    const heartbeats: unknown[] = [];
    const first = new MockActivityEnvironment({ attempt: 1 });
    first.on('heartbeat', (details: unknown) => heartbeats.push(details));
    await expect(first.run(send(), undefined)).resolves.toBe(1);
    expect(heartbeats).toEqual([]);
    // The retry finds no count in the heartbeat details: the first attempt's request, and its own.
    await expect(new MockActivityEnvironment({ attempt: 2 }).run(send(), undefined)).resolves.toBe(2);
  });

  it('an attempt that fails before sending counts nothing of its own, and its failure says so', async () => {
    const env = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: { requests: 1 } });
    const early = inAttempt('apiCall', () => Promise.reject(new Error('plan file unreadable')));
    const failure = await env.run(early, undefined).catch((error: unknown) => error);
    expect(requestsOfFailure(failure, 99)).toBe(1);
  });

  it('a failed request is counted in the failure the workflow reads', async () => {
    const env = new MockActivityEnvironment();
    const failure = await env
      .run(send(new RateLimitedError('slow down', 1000, { status: 429 } as never)), undefined)
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ type: 'RateLimitedError' });
    expect(requestsOfFailure(failure, 99)).toBe(1);
    // A failure without a count (a timeout) falls back to what the workflow assumes.
    expect(requestsOfFailure(new Error('timed out'), 3)).toBe(3);
  });
});

describe('the memory gate', () => {
  it('lets one through at a time, in order, and drops a waiter whose signal fires', async () => {
    const gate = new MemoryGate(1);
    const first = await gate.acquire(new AbortController().signal);
    const cancelled = new AbortController();
    const order: string[] = [];
    const dropped = gate.acquire(cancelled.signal).then(
      () => order.push('dropped got it'),
      () => order.push('dropped gave up'),
    );
    const second = gate.acquire(new AbortController().signal).then((release) => {
      order.push('second');
      return release;
    });
    cancelled.abort(new Error('cancelled'));
    await dropped;
    first();
    (await second)();
    expect(order).toEqual(['dropped gave up', 'second']);
  });

  it('a holder that waits on something else lends its permit, so other heavy work goes on', async () => {
    const gate = new MemoryGate(1);
    let started = 0;
    // Progress stops (a store that never answers); the attempt is not abandoned yet.
    const stuck = inAttempt('tableCommit', () => new Promise<never>(() => undefined), {
      gate,
      stallAfterMs: 60_000,
      lendPermitAfterMs: 100,
    });
    const stuckEnv = new MockActivityEnvironment();
    const running = stuckEnv.run(stuck, undefined);
    running.catch(() => undefined);
    const next = inAttempt(
      'tableCommit',
      () => {
        started += 1;
        return Promise.resolve('done');
      },
      { gate, lendPermitAfterMs: 100 },
    );
    await expect(new MockActivityEnvironment().run(next, undefined)).resolves.toBe('done');
    expect(started).toBe(1);
    stuckEnv.cancel();
    await expect(running).rejects.toBeInstanceOf(CancelledFailure);
  });
});

describe('call deadlines', () => {
  it('follow the observed latency, between the floor and the ceiling', () => {
    const deadlines = new CallDeadlines(3_000, 30_000, 10_000);
    expect(deadlines.timeoutFor('bulk')).toBe(10_000);
    for (let i = 0; i < 100; i += 1) deadlines.record('bulk', 50 + (i % 10));
    expect(deadlines.timeoutFor('bulk')).toBe(3_000);
    // An operation not seen yet borrows the others' latencies.
    expect(deadlines.timeoutFor('match')).toBe(3_000);
    for (let i = 0; i < 256; i += 1) deadlines.record('slow', 2_000);
    expect(deadlines.timeoutFor('slow')).toBe(8_000);
    for (let i = 0; i < 256; i += 1) deadlines.record('slower', 20_000);
    expect(deadlines.timeoutFor('slower')).toBe(30_000);
  });
});
