// Renders a run's progress for `runs watch` and `enrich`: a bar per stage with batches, records,
// call rate and an ETA, from the run workflow's query and its stage children's queries.
import type { Client } from '@temporalio/client';
import type { RunProgress, StageName, StageProgress } from '../pipeline/run-types.js';
import { QUERY_PROGRESS } from '../pipeline/run-types.js';

export interface RunSnapshot {
  run: RunProgress;
  stages: StageProgress[];
}

export async function snapshotRun(client: Client, runId: string): Promise<RunSnapshot> {
  const run = await client.workflow.getHandle(runId).query<RunProgress>(QUERY_PROGRESS);
  const stages: StageProgress[] = [];
  for (const [stage, childId] of Object.entries(run.children) as [StageName, string][]) {
    const finished = run.stages[stage];
    if (finished) {
      stages.push(finished);
      continue;
    }
    try {
      stages.push(await client.workflow.getHandle(childId).query<StageProgress>(QUERY_PROGRESS));
    } catch {
      // The child may be between continue-as-new runs; it shows again on the next refresh.
    }
  }
  return { run, stages };
}

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export function renderStage(p: StageProgress, now = Date.now(), width = 24): string {
  const total = Math.max(1, p.totalBatches);
  const done = p.doneBatches + p.failedBatches;
  const ratio = Math.min(1, done / total);
  const filled = Math.round(ratio * width);
  const elapsed = Math.max(1, (p.updatedAt || now) - p.startedAt);
  const rate = (p.calls / elapsed) * 1000;
  const remaining = done > 0 && done < total ? (elapsed / done) * (total - done) : 0;
  const eta = done >= total ? 'done' : done > 0 ? `ETA ${duration(remaining)}` : 'starting';
  const failed =
    (p.failedBatches ? `  ${p.failedBatches} failed` : '') +
    (p.budget !== undefined ? `  budget ${p.calls}/${p.budget} calls` : '') +
    (p.paused ? '  paused' : '');
  return (
    `  ${p.stage.padEnd(30)} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%` +
    `  ${done}/${p.totalBatches} batches  ${p.records} records  ${rate.toFixed(1)} calls/s  ${eta}${failed}`
  );
}

export function renderSnapshot(snapshot: RunSnapshot, now = Date.now()): string[] {
  const { run } = snapshot;
  const lines = [`run ${run.runId}   stage: ${run.stage}   elapsed ${duration(now - run.startedAt)}`];
  if (run.plan) {
    lines.push(
      `  input: ${run.plan.inputRows} rows, ${run.plan.rejectedRows} rejected, ${run.plan.uniqueKeys} unique ${run.plan.idsProvided ? 'ids' : 'match keys'}`,
    );
  }
  if (run.enrichPlan) {
    lines.push(
      `  matched: ${run.enrichPlan.matchedRows} rows, ${run.enrichPlan.unmatchedRows} unmatched, ${run.enrichPlan.uniqueIds} unique ${run.plan?.entity === 'prospects' ? 'prospect' : 'business'} ids${run.enrichPlan.employers ? `, ${run.enrichPlan.employers.uniqueIds} employers` : ''}`,
    );
  }
  for (const stage of snapshot.stages) lines.push(renderStage(stage, now));
  // Planned stages not started yet: a chain starts each as the one before starts its last batch.
  const planned = [...(run.enrichPlan?.stages ?? []), ...(run.enrichPlan?.employers?.stages ?? [])];
  for (const plan of planned) {
    if (!run.children[plan.stage])
      lines.push(`  ${plan.stage.padEnd(30)} waiting  ${plan.totalBatches} batches`);
  }
  if (run.paused) {
    lines.push(
      `  PAUSED at ${run.paused.stage} for ${duration(now - run.paused.since)}: ${run.paused.reason}`,
      `  top up the key's credits, then: enrichflow runs resume ${run.runId}`,
    );
  }
  return lines;
}
