// The run of one enrichment job: plan the input, match rows to ids, enrich every requested dataset in
// its own child workflow, then commit Parquet tables, the manifest and `_SUCCESS`. The workflow id is
// the run id, derived from the job name and run key, so starting the same run twice does the work once.
// A retry re-runs only the batches a finished run recorded as failed, and commits the run again.
import { CancellationScope, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { PipelineActivities } from '../activities/index.js';
import { activityOptions } from '../pipeline/attempts.js';
import {
  employerDatasets,
  type EmployerPlanSummary,
  type EnrichDataset,
  type EnrichPlanSummary,
  type EnrichRunInput,
  type PendingBatches,
  type RunSummary,
  type StageName,
  type StagePlan,
  type StageResult,
  type TableSummary,
} from '../pipeline/run-types.js';
import { stageBatching } from '../pipeline/run-layout.js';
import { budgetAfter, createRunTracker, splitBudget, type DatasetDone } from './run-tracker.js';

export { runProgressQuery, splitBudget, stageWorkflowId } from './run-tracker.js';

// Planning and committing read and write whole tables: long, so they heartbeat, and a retry starts over
// (their outputs have deterministic names, so a retry overwrites rather than duplicates).
const { planRun, buildEnrichPlan, buildEmployerPlan, planRetry } = proxyActivities<PipelineActivities>(
  activityOptions('tablePlanning'),
);
const { writeMatchesTable } = proxyActivities<PipelineActivities>(activityOptions('tableCommit'));

export interface EnrichRunWorkflowInput extends EnrichRunInput {
  /** Task queue of the API activities (where the shared rate budget is enforced). */
  apiTaskQueue: string;
  /**
   * A new attempt of a run that failed or was cancelled: batches whose results an earlier attempt
   * wrote are taken from them instead of being called again (the same run id plans the same batches).
   */
  reuseResults?: boolean;
}

export interface RetryRunWorkflowInput {
  /** The run whose failed batches are re-run; its output is updated in place. */
  previous: RunSummary;
  apiTaskQueue: string;
  /** Call budget of this retry (a run stopped at budget resumes under a new one). */
  maxCalls?: number;
}

export async function enrichRunWorkflow(input: EnrichRunWorkflowInput): Promise<RunSummary> {
  const { apiTaskQueue, reuseResults, ...request } = input;
  const runId = workflowInfo().workflowId;
  const tracker = createRunTracker(runId, request, apiTaskQueue, reuseResults);
  const { state, run } = tracker;
  const startedAt = new Date().toISOString();
  try {
    const plan = await planRun({ run, input: request.input, datasets: request.datasets });
    state.plan = plan;
    const stages: StageResult[] = [];
    let budget = request.maxCalls;
    if (plan.match) {
      state.stage = 'matching';
      const matched = await tracker.runStage(plan.match, budget !== undefined ? { budget } : {});
      stages.push(matched);
      budget = budgetAfter(budget, matched);
    }
    state.stage = 'enriching';
    const enrichPlan = await buildEnrichPlan({
      run,
      datasets: request.datasets,
      idsProvided: plan.idsProvided,
      ...(plan.entity ? { entity: plan.entity } : {}),
      ...freshnessOf({ request, startedAt }),
    });
    state.enrichPlan = enrichPlan;
    // The matches table (input columns and all) is written while the datasets call the service: the
    // id plan above is all they need.
    const matchesTable = writeMatchesTable({
      run,
      idsProvided: plan.idsProvided,
      ...(plan.entity ? { entity: plan.entity } : {}),
    });
    // Awaited below; until then a failure must not count as unhandled.
    matchesTable.catch(() => undefined);
    const employers = employerDatasets(request.datasets, plan.entity);
    if (employers.length === 0) {
      const { results, tables } = await tracker.runDatasets(
        enrichPlan.stages.map((stagePlan) => ({ plan: stagePlan })),
        budget,
      );
      stages.push(...results);
      await matchesTable;
      return await tracker.commit(plan, enrichPlan, stages, startedAt, undefined, tables);
    }
    const withEmployers = await runPeopleAndEmployers(
      tracker,
      enrichPlan,
      employers,
      budget,
      freshnessOf({ request, startedAt }),
      matchesTable,
    );
    stages.push(...withEmployers.stages);
    return await tracker.commit(
      plan,
      withEmployers.enrichPlan,
      stages,
      startedAt,
      undefined,
      withEmployers.committed,
    );
  } catch (error) {
    throw tracker.explain(error);
  }
}

type Tracker = ReturnType<typeof createRunTracker>;
type Freshness = { maxAgeMs?: number; asOf?: number };

/** An incremental run judges freshness against its start, on every attempt and retry. */
function freshnessOf(summary: Pick<RunSummary, 'request' | 'startedAt'>): Freshness {
  return summary.request.maxAgeMs !== undefined
    ? { maxAgeMs: summary.request.maxAgeMs, asOf: Date.parse(summary.startedAt) }
    : {};
}

/** An employer plan as a summary keeps it (the batches a retry appended are the retry's business). */
function employerSummary({
  appended: _appended,
  ...summary
}: EmployerPlanSummary & { appended: unknown }): EmployerPlanSummary {
  return summary;
}

/**
 * The dataset stages of a people run that names business datasets. Profiles go first: they name the
 * employers. The other people datasets follow as a chain (the first as the profiles start their last
 * batch); once the profiles table is committed the employers are planned from it, and the employer
 * datasets join the end of the chain (the first as the last people stage starts its last batch), so
 * that the people's tables are committed while the employers' calls go on and only the last
 * employer table is left for the end. A call budget is shared in proportion to batches, the employers
 * counted at one per person until their plan is known.
 */
async function runPeopleAndEmployers(
  tracker: Tracker,
  enrichPlan: EnrichPlanSummary,
  employers: EnrichDataset[],
  budget: number | undefined,
  freshness: Freshness,
  /** The `prospect_matches` table being written: the employer plan adds its link column to it. */
  matchesTable: Promise<unknown>,
): Promise<{ stages: StageResult[]; enrichPlan: EnrichPlanSummary; committed: TableSummary[] }> {
  const { run, state } = tracker;
  const people = [
    ...enrichPlan.stages.filter((s) => s.stage === 'profiles'),
    ...enrichPlan.stages.filter((s) => s.stage !== 'profiles'),
  ];
  const perPerson = employers.map((d) => Math.ceil(enrichPlan.uniqueIds / stageBatching(d).batchSize));
  const shares = splitBudget(budget, [...people.map((s) => s.totalBatches), ...perPerson]);
  const peopleBudget = shares?.slice(0, people.length).reduce((sum, n) => sum + n, 0);
  return CancellationScope.cancellable(async () => {
    const chain = tracker.chainDatasets(
      people.map((plan) => ({ plan })),
      peopleBudget,
    );
    const lastPeople = people[people.length - 1];
    const employed = (async () => {
      const profiled = people[0]?.stage === 'profiles' ? await chain[0] : undefined;
      await matchesTable;
      const employerPlan = employerSummary(
        await buildEmployerPlan({ run, datasets: employers, ...freshness }),
      );
      state.enrichPlan = { ...enrichPlan, employers: employerPlan };
      // What the people's stages may still spend, as the chain shared it.
      const peopleShares = splitBudget(
        peopleBudget,
        people.map((s) => s.totalBatches),
      );
      const othersShare = (peopleBudget ?? 0) - (profiled ? (peopleShares?.[0] ?? 0) : 0);
      const left =
        budget === undefined ? undefined : Math.max(0, budget - (profiled?.result.calls ?? 0) - othersShare);
      return {
        employerPlan,
        done: await tracker.settle(
          tracker.chainDatasets(
            employerPlan.stages.map((plan) => ({ plan })),
            left,
            lastPeople && { stage: lastPeople.stage, running: chain[chain.length - 1]! },
          ),
        ),
      };
    })();
    const [peopleDone, employerDone] = await tracker.settle<DatasetDone[] | EmployerWork>([
      Promise.all(chain),
      employed,
    ]);
    const done = [...(peopleDone as DatasetDone[]), ...(employerDone as EmployerWork).done];
    return {
      stages: done.map((d) => d.result),
      enrichPlan: { ...enrichPlan, employers: (employerDone as EmployerWork).employerPlan },
      committed: done.map((d) => d.table),
    };
  });
}

type EmployerWork = { employerPlan: EmployerPlanSummary; done: DatasetDone[] };

/** Adds a retry's stage figures to the run's: calls and records accumulate, failures are the retry's. */
function mergeStage(
  before: StageResult | undefined,
  retry: StageResult | undefined,
): StageResult | undefined {
  if (!before) return retry;
  if (!retry) return before;
  // What the first run left unstarted was taken up by the retry: only the retry's own remainder counts.
  const { unstarted: _taken, ...earlier } = before;
  return {
    ...earlier,
    // A retry's plan can be longer: rows matched in it bring batches for their new ids.
    totalBatches: Math.max(before.totalBatches, retry.totalBatches),
    doneBatches: before.doneBatches + retry.doneBatches,
    failedBatches: retry.failedBatches,
    records: before.records + retry.records,
    misses: before.misses + retry.misses,
    calls: before.calls + retry.calls,
    updatedAt: retry.updatedAt,
    failureFiles: retry.failureFiles,
    ...(retry.unstarted ? { unstarted: retry.unstarted } : {}),
  };
}

export async function retryRunWorkflow(input: RetryRunWorkflowInput): Promise<RunSummary> {
  const { previous } = input;
  const retryId = workflowInfo().workflowId;
  const tracker = createRunTracker(previous.runId, previous.request, input.apiTaskQueue);
  const { state, run } = tracker;
  state.plan = previous.plan;
  state.enrichPlan = previous.enrichPlan;
  try {
    const failed = await planRetry({ run, retryId });
    const retried = new Map<StageName, StageResult>();
    // A stage's pending work: its failed batches, and what a budget left unstarted.
    const pendingOf = (stage: StageName) => {
      const unstarted = previous.stages.find((s) => s.stage === stage)?.unstarted;
      return {
        batches: [...(failed.find((p) => p.stage === stage)?.batches ?? []), ...(unstarted?.splits ?? [])],
        ...(unstarted ? { resumeFrom: unstarted.next, resumeTo: unstarted.end } : {}),
      };
    };
    let budget = input.maxCalls;
    let enrichPlan = previous.enrichPlan;
    let appended: PendingBatches[] = [];
    let rematched = false;
    const matchStage = previous.plan.match?.stage ?? 'match';
    const pendingMatch = pendingOf(matchStage);
    if (previous.plan.match && (pendingMatch.batches.length > 0 || pendingMatch.resumeFrom !== undefined)) {
      state.stage = 'matching';
      const matched = await tracker.runStage(previous.plan.match, {
        explicitBatches: pendingMatch.batches,
        ...(pendingMatch.resumeFrom !== undefined
          ? { resumeFrom: pendingMatch.resumeFrom, resumeTo: pendingMatch.resumeTo }
          : {}),
        ...(budget !== undefined ? { budget } : {}),
      });
      retried.set(matchStage, matched);
      rematched = true;
      budget = budgetAfter(budget, matched);
      // Rows matched now bring ids the first run never enriched: plan batches for those alone.
      const extended = await buildEnrichPlan({
        run,
        datasets: previous.request.datasets,
        idsProvided: previous.plan.idsProvided,
        ...(previous.plan.entity ? { entity: previous.plan.entity } : {}),
        append: true,
        ...freshnessOf(previous),
      });
      enrichPlan = {
        ...enrichPlan,
        matchedRows: extended.matchedRows,
        unmatchedRows: extended.unmatchedRows,
        uniqueIds: extended.uniqueIds,
        stages: extended.stages,
      };
      appended = extended.appended;
      state.enrichPlan = enrichPlan;
      await writeMatchesTable({
        run,
        idsProvided: previous.plan.idsProvided,
        ...(previous.plan.entity ? { entity: previous.plan.entity } : {}),
      });
    }
    state.stage = 'enriching';
    const workOf = (plans: StagePlan[], added: PendingBatches[]) =>
      plans
        .map((plan) => {
          const pending = pendingOf(plan.stage);
          // Batches appended for newly matched ids lie past the range a resume works through.
          const more = added.find((p) => p.stage === plan.stage)?.batches ?? [];
          return { plan, ...pending, batches: [...pending.batches, ...more] };
        })
        .filter((w) => w.batches.length > 0 || w.resumeFrom !== undefined);
    let work = workOf(enrichPlan.stages, appended);
    let committed: TableSummary[] = [];
    const employers = employerDatasets(previous.request.datasets, previous.plan.entity);
    if (employers.length > 0) {
      // Profiles first: a person profiled for the first time may bring an employer the run lacks.
      const profiling = work.filter((w) => w.plan.stage === 'profiles');
      const profiled = await tracker.runDatasets(profiling, budget);
      for (const result of profiled.results) {
        retried.set(result.stage, result);
        budget = budgetAfter(budget, result);
      }
      committed = profiled.tables;
      let employersAdded: PendingBatches[] = [];
      if (profiling.length > 0 || rematched || !enrichPlan.employers) {
        const planned = await buildEmployerPlan({
          run,
          datasets: employers,
          append: enrichPlan.employers !== undefined,
          ...freshnessOf(previous),
        });
        enrichPlan = { ...enrichPlan, employers: employerSummary(planned) };
        employersAdded = planned.appended;
        state.enrichPlan = enrichPlan;
      }
      work = [
        ...work.filter((w) => w.plan.stage !== 'profiles'),
        ...workOf(enrichPlan.employers?.stages ?? [], employersAdded),
      ];
    }
    const rerun = await tracker.runDatasets(work, budget);
    for (const result of rerun.results) retried.set(result.stage, result);
    committed = [...committed, ...rerun.tables];
    const stageNames: StageName[] = [
      ...(previous.plan.match ? [previous.plan.match.stage] : []),
      ...previous.request.datasets,
    ];
    const stages = stageNames
      .map((name) =>
        mergeStage(
          previous.stages.find((s) => s.stage === name),
          retried.get(name),
        ),
      )
      .filter((s): s is StageResult => s !== undefined);
    return await tracker.commit(
      previous.plan,
      enrichPlan,
      stages,
      previous.startedAt,
      [...(previous.retries ?? []), retryId],
      committed,
    );
  } catch (error) {
    throw tracker.explain(error);
  }
}
