// The enrichment activities, built over their dependencies (a Data Service client, an object-store
// resolver, a logger) and put under the attempt discipline. They exchange object keys and counts with
// workflows; rows stay in the store. API activities (`api/`) run on the API task queue, where the rate
// budget lives; table activities (`tables/`) run on the main queue behind the memory gate.
import { createCallBatchActivities } from './api/call-batch.js';
import { disciplined } from './attempt.js';
import { createRunPlans, type ActivityDeps } from './run-plans.js';
import { createCommitRunActivities } from './tables/commit-run.js';
import { createCommitTableActivities } from './tables/commit-table.js';
import { createEmployerPlanActivities } from './tables/employer-plan.js';
import { createEnrichPlanActivities } from './tables/enrich-plan.js';
import { createPlanRunActivities } from './tables/plan-run.js';

export { InputFileError } from '../storage/plan-input.js';
export { BatchPlanError, type ActivityDeps } from './run-plans.js';

export function createActivities(deps: ActivityDeps) {
  const plans = createRunPlans(deps);
  return disciplined(
    {
      ...createPlanRunActivities(deps, plans),
      ...createCallBatchActivities(deps, plans),
      ...createEnrichPlanActivities(deps, plans),
      ...createEmployerPlanActivities(deps, plans),
      ...createCommitTableActivities(deps, plans),
      ...createCommitRunActivities(deps, plans),
    },
    {
      planRun: 'tablePlanning',
      callBatch: 'apiCall',
      buildEnrichPlan: 'tablePlanning',
      writeMatchesTable: 'tableCommit',
      buildEmployerPlan: 'tablePlanning',
      planRetry: 'tablePlanning',
      recordFailures: 'bookkeeping',
      commitTable: 'tableCommit',
      commitRun: 'tableCommit',
    },
    ['planRun', 'buildEnrichPlan', 'writeMatchesTable', 'buildEmployerPlan', 'commitTable', 'commitRun'],
    deps.gate,
  );
}

export type PipelineActivities = ReturnType<typeof createActivities>;
