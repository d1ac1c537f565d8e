// The export's calls to the Data Service, one per activity on the API task queue: counting probes,
// statistics, search pages (by offset or cursor) and posts, each page written to the run folder.
import { ApplicationFailure } from '@temporalio/activity';
import { CURSOR_START, MAX_FETCH_SIZE } from '../../contract/limits.js';
import { composeFilters } from '../../pipeline/export-filters.js';
import { exportLayout, POST_IDS_PER_CHUNK } from '../../pipeline/export-layout.js';
import type { Bound, Constraints, Count } from '../../pipeline/export-slicing.js';
import type { RunLocation } from '../../pipeline/run-types.js';
import { easeOff } from '../api-pacing.js';
import { requestsSent, toActivityFailure, cancellationSignal } from '../attempt.js';
import { RunFiles } from '../../storage/run-files.js';

/** The calls of the Data Service an export makes (the undici client has them all). */
import type { ExportActivityDeps, ExportShared } from '../export-context.js';
import { ExportSpecError, SLICE_STRIDE, PAGE_STRIDE, countLines, pageLines } from '../export-context.js';

export function createExportPageActivities(deps: ExportActivityDeps, shared: ExportShared) {
  const { resolveStore } = deps;
  const { call, cached, contextOf, planOf, exclusion, fetchSearch, fetchPageResponse, postIdChunks } = shared;

  return {
    /** One count of a slice: a one-record cursor page (exact, uncapped) or offset page (capped at the fetch size). */
    probeCount: async ({
      run,
      constraints,
    }: {
      run: RunLocation;
      constraints: Constraints;
    }): Promise<Count> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const context = await contextOf(files);
      const filters = composeFilters(context.filters, context.dimensions, constraints);
      const base = { mode: 'preview', filters, ...exclusion(context) };
      const body = context.cursor
        ? { ...base, size: 1, page_size: 1, next_cursor: CURSOR_START }
        : { ...base, size: MAX_FETCH_SIZE, page_size: 1, page: 1 };
      let response;
      try {
        response = await fetchSearch(context, body);
      } catch (error) {
        throw toActivityFailure(error, { items: 1 });
      }
      await easeOff(response.rateLimit);
      const n = response.body.total_results;
      // A service without cursor mode answers an offset page, whose total stops at `size`.
      const cursorAnswer = typeof response.body.page === 'object';
      return { n, exact: cursorAnswer || n < MAX_FETCH_SIZE };
    },

    /** Counts of a split on company size or revenue from one `stats` call (business exports). */
    measureStats: async ({
      run,
      constraints,
      field,
      bounds,
    }: {
      run: RunLocation;
      constraints: Constraints;
      field: string;
      bounds: Bound[];
    }): Promise<Count[]> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const context = await contextOf(files);
      const dimension = context.dimensions.find((d) => d.field === field);
      if (!dimension?.values) throw new ExportSpecError(`${field} is not a value dimension of this export`);
      const filters = composeFilters(context.filters, context.dimensions, constraints);
      let response;
      try {
        response = await call('businessStats')({ filters });
      } catch (error) {
        throw toActivityFailure(error, { items: 1 });
      }
      await easeOff(response.rateLimit);
      const table =
        field === 'company_size'
          ? response.body.stats.number_of_employees_per_category
          : response.body.stats.revenue_per_category;
      const perValue = new Map<string, number>();
      for (const counts of Object.values(table)) {
        for (const [value, n] of Object.entries(counts)) perValue.set(value, (perValue.get(value) ?? 0) + n);
      }
      const values = dimension.values.map(String);
      const inDomain = values.reduce((sum, v) => sum + (perValue.get(v) ?? 0), 0);
      return bounds.map((bound) =>
        'outside' in bound
          ? { n: Math.max(0, response.body.total_results - inDomain), exact: true }
          : {
              n: values.slice(bound.from, bound.to + 1).reduce((sum, v) => sum + (perValue.get(v) ?? 0), 0),
              exact: true,
            },
      );
    },

    /**
     * One offset page of a slice, written to its own file. A page whose file exists (an earlier attempt
     * wrote it) is not fetched again.
     */
    fetchPage: async ({
      run,
      slice,
      page,
    }: {
      run: RunLocation;
      slice: number;
      page: number;
    }): Promise<{ records: number; total: number; calls: number; reused: boolean }> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const key = files.key(exportLayout.page(slice, page));
      if (await files.store.exists(key)) {
        return {
          records: countLines((await files.store.getBytes(key)).toString('utf8')),
          total: 0,
          calls: 0,
          reused: true,
        };
      }
      const [context, plan] = await Promise.all([contextOf(files), planOf(files)]);
      const planned = plan.slices[slice];
      if (!planned) throw new ExportSpecError(`slice ${slice} is not in the plan`);
      const body = {
        mode: 'full',
        size: Math.min(MAX_FETCH_SIZE, Math.max(context.pageSize, context.cap)),
        page_size: context.pageSize,
        page,
        filters: composeFilters(context.filters, context.dimensions, planned.constraints),
        ...exclusion(context),
      };
      const got = pageLines(
        await fetchPageResponse(context, body),
        slice * SLICE_STRIDE + page * PAGE_STRIDE,
      );
      await files.store.put(key, got.text);
      await easeOff(got.rateLimit);
      return { records: got.records, total: got.total, calls: requestsSent(), reused: false };
    },

    /** One page of a slice's cursor chain; returns the next cursor (null at the end). */
    fetchCursorPage: async ({
      run,
      slice,
      seq,
      cursor,
    }: {
      run: RunLocation;
      slice: number;
      seq: number;
      cursor: string;
    }): Promise<{ records: number; total: number; nextCursor: string | null; calls: number }> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const [context, plan] = await Promise.all([contextOf(files), planOf(files)]);
      const planned = plan.slices[slice];
      if (!planned) throw new ExportSpecError(`slice ${slice} is not in the plan`);
      const body = {
        mode: 'full',
        size: MAX_FETCH_SIZE,
        page_size: context.pageSize,
        next_cursor: cursor,
        filters: composeFilters(context.filters, context.dimensions, planned.constraints),
        ...exclusion(context),
      };
      const got = pageLines(await fetchPageResponse(context, body), slice * SLICE_STRIDE + seq * PAGE_STRIDE);
      if (got.nextCursor === undefined) {
        throw ApplicationFailure.create({
          type: 'CursorUnsupportedError',
          message:
            'the service answered a cursor request with an offset page: it has no cursor mode (run with --no-cursor)',
          nonRetryable: true,
        });
      }
      await files.store.put(files.key(exportLayout.cursorPage(slice, seq)), got.text);
      await easeOff(got.rateLimit);
      return { records: got.records, total: got.total, nextCursor: got.nextCursor, calls: requestsSent() };
    },

    /** The posts record of one exported prospect; a prospect without posts is a miss, not an error. */
    fetchPosts: async ({
      run,
      index,
    }: {
      run: RunLocation;
      index: number;
    }): Promise<{ records: number; misses: number; calls: number }> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      const chunk = Math.floor(index / POST_IDS_PER_CHUNK);
      const ids = await cached(postIdChunks, `${files.url}|${chunk}`, () =>
        files.getJson<string[]>(exportLayout.postIds(chunk)),
      );
      const prospectId = ids[index % POST_IDS_PER_CHUNK];
      if (!prospectId) throw new ExportSpecError(`posts item ${index} is not in the plan`);
      const key = files.key(exportLayout.post(index));
      // Done by an earlier attempt or run (misses are recorded too): not called again.
      if (await files.store.exists(key)) {
        const done = JSON.parse((await files.store.getBytes(key)).toString('utf8')) as { data: unknown };
        return done.data === null ? { records: 0, misses: 1, calls: 0 } : { records: 1, misses: 0, calls: 0 };
      }
      let data: unknown;
      let rateLimit;
      try {
        const response = await call('enrichProspectPosts')({ prospect_id: prospectId });
        data = response.body.data;
        rateLimit = response.rateLimit;
      } catch (error) {
        if (!(error instanceof Error && error.name === 'NotFoundError'))
          throw toActivityFailure(error, { items: 1 });
      }
      await easeOff(rateLimit);
      const found = data !== null && data !== undefined;
      await files.store.put(
        key,
        `${JSON.stringify({ k: index, prospect_id: prospectId, data: found ? data : null })}\n`,
      );
      return found
        ? { records: 1, misses: 0, calls: requestsSent() }
        : { records: 0, misses: 1, calls: requestsSent() };
    },
  };
}
