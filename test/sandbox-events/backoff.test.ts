// Retry timing of webhook deliveries: doubling from the base delay, capped, with jitter that only
// ever shortens a wait and never below (1 - jitter) of it.
import { describe, expect, it } from 'vitest';
import { DEFAULT_DELIVERY_OPTIONS, retryDelayMs } from '../../sandbox/events/index.js';

const options = { ...DEFAULT_DELIVERY_OPTIONS, baseDelayMs: 100, maxDelayMs: 1_000, jitter: 0.5 };

describe('retryDelayMs', () => {
  it('doubles per failed attempt up to the cap when jitter draws nothing', () => {
    const delays = [1, 2, 3, 4, 5, 6, 30].map((attempts) => retryDelayMs(attempts, options, () => 0));
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });

  it('takes at most `jitter` of the delay off', () => {
    expect(retryDelayMs(3, options, () => 0.999_999)).toBe(200);
    for (let i = 0; i < 200; i += 1) {
      const delay = retryDelayMs(4, options, Math.random);
      expect(delay).toBeGreaterThanOrEqual(400);
      expect(delay).toBeLessThanOrEqual(800);
    }
  });
});
