// Preparing a search export: the spec checked and saved, the exclude list read, the plan saved, and
// each slice marked done.
import { cancellationSignal } from '../attempt.js';
import { MAX_EXCLUDE_IDS, MAX_FETCH_SIZE } from '../../contract/limits.js';
import { dimensionOutline, exportDimensions, validateExportFilters } from '../../pipeline/export-filters.js';
import { exportLayout } from '../../pipeline/export-layout.js';
import type {
  ExportPlan,
  ExportRunInput,
  PreparedExport,
  SliceOutcome,
} from '../../pipeline/export-types.js';
import type { RunLocation } from '../../pipeline/run-types.js';
import { RunFiles } from '../../storage/run-files.js';
import { preflightOutput } from '../preflight.js';

/** The calls of the Data Service an export makes (the undici client has them all). */
import type { ExportActivityDeps, ExportShared } from '../export-context.js';
import { ExportSpecError, specFailure, searchFingerprint, type ExportContext } from '../export-context.js';

export function createExportPlanActivities(deps: ExportActivityDeps, shared: ExportShared) {
  const { resolveStore } = deps;
  const { contextOf, readExclude, contexts, plans } = shared;

  return {
    /**
     * Checks the search, stores it with its slicing domains and exclude list in the run folder, and
     * returns what an earlier attempt of the same run left: its plan and its finished slices.
     */
    prepareExport: async ({
      run,
      request,
    }: {
      run: RunLocation;
      request: ExportRunInput;
    }): Promise<PreparedExport> => {
      // The CLI's output preflight again: a scheduled or resumed export whose output broke fails at once.
      await preflightOutput({ ...resolveStore(run.output), location: run.output });
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      try {
        const filters = validateExportFilters(request.target, request.filters, 'filters');
        const dimensions = exportDimensions(request.target, filters, request.splitBy);
        const excludeIds = request.exclude ? await readExclude(request.exclude, request.target) : [];
        const sent = excludeIds.length > 0 && excludeIds.length <= MAX_EXCLUDE_IDS;
        const pageSize = request.pageSize ?? 100;
        const cap = request.offsetCap ?? MAX_FETCH_SIZE;
        const fingerprint = searchFingerprint(request, pageSize, cap);
        let plan: ExportPlan | undefined;
        if (await files.store.exists(files.key(exportLayout.plan))) {
          const saved = await files.getJson<ExportPlan & { fingerprint?: string }>(exportLayout.plan);
          if (saved.fingerprint !== fingerprint) {
            throw new ExportSpecError(
              `${files.url} holds the plan of another search; give this export another --run-key or --output`,
            );
          }
          plan = saved;
        }
        const context: ExportContext = {
          target: request.target,
          filters,
          dimensions,
          exclude: sent ? excludeIds : undefined,
          pageSize,
          cap,
          cursor: request.cursor ?? true,
          fingerprint,
        };
        await files.putJson(exportLayout.exclude, excludeIds);
        await files.putJson(exportLayout.spec, context);
        contexts.delete(files.url);
        plans.delete(files.url);
        const done: SliceOutcome[] = [];
        for (const key of await files.list(exportLayout.slicesPrefix))
          done.push(await files.getJson<SliceOutcome>(key));
        return {
          dimensions: dimensions.map(dimensionOutline),
          exclude: { ids: excludeIds.length, sent },
          ...(plan ? { plan } : {}),
          done,
        };
      } catch (error) {
        throw specFailure(error);
      }
    },

    /** Saves the plan, so that a resumed run fetches the same slices and skips the finished ones. */
    saveExportPlan: async ({ run, plan }: { run: RunLocation; plan: ExportPlan }): Promise<void> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const context = await contextOf(files);
      await files.putJson(exportLayout.plan, { ...plan, fingerprint: context.fingerprint });
      plans.delete(files.url);
    },

    /** Marks a slice finished: a resumed run skips it. */
    finishSlice: async ({ run, outcome }: { run: RunLocation; outcome: SliceOutcome }): Promise<void> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      await files.putJson(exportLayout.sliceDone(outcome.index), outcome);
    },
  };
}
