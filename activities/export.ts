// The search-export activities, built over their dependencies and put under the attempt discipline:
// planning and committing on the main queue (behind the memory gate), page and posts calls on the API
// task queue under the shared rate budget.
import { createExportPageActivities } from './api/export-pages.js';
import { disciplined } from './attempt.js';
import { createExportShared, type ExportActivityDeps } from './export-context.js';
import { createExportCommitActivities } from './tables/export-commit.js';
import { createExportFinishActivities } from './tables/export-finish.js';
import { createExportPlanActivities } from './tables/export-plan.js';

export { ExportSpecError, type ExportActivityDeps, type ExportCalls } from './export-context.js';

export function createExportActivities(deps: ExportActivityDeps) {
  const shared = createExportShared(deps);
  return disciplined(
    {
      ...createExportPlanActivities(deps, shared),
      ...createExportPageActivities(deps, shared),
      ...createExportCommitActivities(deps, shared),
      ...createExportFinishActivities(deps, shared),
    },
    {
      prepareExport: 'tablePlanning',
      probeCount: 'apiCall',
      measureStats: 'apiCall',
      saveExportPlan: 'bookkeeping',
      fetchPage: 'pageFetch',
      fetchCursorPage: 'pageFetch',
      finishSlice: 'bookkeeping',
      commitExportRecords: 'tableCommit',
      fetchPosts: 'pageFetch',
      commitExportPosts: 'tableCommit',
      commitExport: 'tableCommit',
    },
    ['commitExportRecords', 'commitExportPosts', 'commitExport'],
    deps.gate,
  );
}

export type ExportActivities = ReturnType<typeof createExportActivities>;
