// What `runs watch` prints for a run whose dataset stages run as a chain: stages not started yet show
// as waiting, with their batches, below the running ones.
import { describe, expect, test } from 'vitest';
import { renderSnapshot } from '../../cli/progress.js';
import type { RunProgress, StageProgress } from '../../pipeline/run-types.js';

describe('runs watch', () => {
  test('a chained run shows the running stage and the stages still waiting', () => {
    const now = Date.now();
    const running: StageProgress = {
      stage: 'firmographics',
      totalBatches: 40,
      doneBatches: 10,
      failedBatches: 0,
      inFlight: 8,
      records: 480,
      misses: 20,
      calls: 10,
      startedAt: now - 5_000,
      updatedAt: now,
    };
    const run: RunProgress = {
      runId: 'r1',
      stage: 'enriching',
      children: { firmographics: 'r1/firmographics' },
      stages: {},
      startedAt: now - 10_000,
      plan: { inputRows: 2_000, rejectedRows: 0, uniqueKeys: 2_000, idsProvided: true },
      enrichPlan: {
        matchedRows: 2_000,
        unmatchedRows: 0,
        uniqueIds: 2_000,
        stages: [
          { stage: 'firmographics', totalBatches: 40, batchesPerChunk: 20, totalItems: 2_000 },
          { stage: 'technographics', totalBatches: 40, batchesPerChunk: 20, totalItems: 2_000 },
        ],
      },
    };
    const lines = renderSnapshot({ run, stages: [running] }, now);
    expect(lines.find((l) => l.includes('firmographics'))).toMatch(/25%\s+10\/40 batches/);
    expect(lines.at(-1)).toMatch(/^\s+technographics\s+waiting\s+40 batches$/);
    expect(lines.filter((l) => l.includes('firmographics'))).toHaveLength(1);
  });
});
