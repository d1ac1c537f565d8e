// The pages of a search export: a sliding window of page activities over every slice (cursor chains
// for slices no filter can split), continuing as new before its history grows large.
import { condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ExportStageProgress, PageFailure, SliceOutcome, SliceWork } from '../pipeline/export-types.js';
import { requestsOfFailure } from '../pipeline/attempts.js';
import { type ApiRetryPolicy, type RunLocation } from '../pipeline/run-types.js';
import {
  FATAL_ERRORS,
  DEFAULT_ATTEMPTS,
  UNITS_PER_GENERATION,
  MAX_FAILURE_DETAILS,
  finishSlice,
  apiActivities,
  exportStageProgressQuery,
  newStage,
  type FailureInfo,
  failureInfo,
  fatalFailure,
} from './export-shared.js';

interface SliceState extends SliceOutcome {
  planned: number;
  extendable: boolean;
  /** Offset: last page to fetch; next page to launch; pages in flight. */
  lastPage: number;
  nextPage: number;
  inFlight: number;
  /** Cursor: the next cursor (undefined before the first page), pages done, chain ended. */
  cursor?: string | null;
  seq: number;
  chainDone: boolean;
  finished: boolean;
}

/** Pages a slice is expected to take: its planned offset pages, or its cursor chain's length so far. */
function estimatedPages(slice: SliceState, pageSize: number): number {
  return slice.method === 'cursor'
    ? Math.max(slice.seq, Math.ceil(slice.planned / pageSize))
    : slice.lastPage;
}

export interface ExportPagesInput {
  run: RunLocation;
  slices: SliceWork[];
  apiTaskQueue: string;
  windowSize: number;
  cap: number;
  pageSize: number;
  apiRetry?: ApiRetryPolicy;
  callTimeoutMs?: number;
  carry?: {
    states: SliceState[];
    outcomes: SliceOutcome[];
    failures: PageFailure[];
    progress: ExportStageProgress;
  };
}

export interface ExportPagesResult {
  slices: SliceOutcome[];
  failures: PageFailure[];
  progress: ExportStageProgress;
}

/**
 * Every page of the given slices: offset pages in a sliding window across slices (front slices first,
 * so slices finish — and are marked done — in order), one page at a time for cursor chains. A slice
 * whose records grew while it was fetched gets its extra pages, up to the cap.
 */
export async function exportPagesWorkflow(input: ExportPagesInput): Promise<ExportPagesResult> {
  const { run, cap, pageSize } = input;
  const api = apiActivities(input.apiTaskQueue, input.apiRetry, input.callTimeoutMs);
  const attempts = input.apiRetry?.maximumAttempts ?? DEFAULT_ATTEMPTS;
  const states: SliceState[] =
    input.carry?.states ??
    input.slices.map((s) => ({
      index: s.index,
      method: s.method,
      planned: s.planned,
      extendable: s.extendable ?? false,
      pages: 0,
      failedPages: 0,
      records: 0,
      calls: 0,
      maxTotal: 0,
      overCap: false,
      lastPage: s.method === 'cursor' ? 0 : s.pages,
      nextPage: 1,
      inFlight: 0,
      seq: 0,
      chainDone: false,
      finished: false,
    }));
  const outcomes: SliceOutcome[] = [...(input.carry?.outcomes ?? [])];
  const failures: PageFailure[] = [...(input.carry?.failures ?? [])];
  const progress: ExportStageProgress = input.carry?.progress ?? newStage('pages');
  if (!input.carry) {
    progress.totalBatches = states.reduce((sum, s) => sum + estimatedPages(s, pageSize), 0);
  }
  setHandler(exportStageProgressQuery, () => progress);

  let inFlight = 0;
  let bookkeeping = 0;
  let completed = 0;
  let version = 0;
  let fatal: FailureInfo | undefined;

  const touch = () => {
    version += 1;
    progress.inFlight = inFlight;
    progress.updatedAt = Date.now();
  };

  const fail = (slice: SliceState, page: number, error: unknown) => {
    const info = failureInfo(error);
    const tries = info.retriedOut ? attempts : 1;
    const calls = requestsOfFailure(error, tries);
    slice.calls += calls;
    progress.calls += calls;
    if (FATAL_ERRORS.has(info.type)) {
      fatal ??= info;
      return;
    }
    slice.failedPages += 1;
    progress.failedBatches += 1;
    if (failures.length < MAX_FAILURE_DETAILS) {
      failures.push({
        stage: 'pages',
        slice: slice.index,
        page,
        errorType: info.type,
        message: info.message,
        attempts: tries,
      });
    }
  };

  /** Ends a slice whose pages are all done (or extends it when its records grew), and marks it done. */
  const settle = (slice: SliceState) => {
    if (slice.finished || slice.inFlight > 0) return;
    if (slice.method === 'cursor') {
      if (!slice.chainDone) return;
    } else {
      if (slice.nextPage <= slice.lastPage) return;
      if (slice.extendable && slice.failedPages === 0) {
        const wanted = Math.ceil(Math.min(slice.maxTotal, cap) / pageSize);
        if (wanted > slice.lastPage) {
          progress.totalBatches += wanted - slice.lastPage;
          slice.lastPage = wanted;
          return;
        }
      }
      // Offset totals stop at the cap: a slice planned under it that reports the cap has outgrown it.
      slice.overCap = slice.extendable && slice.planned < cap && slice.maxTotal >= cap;
    }
    slice.finished = true;
    const outcome: SliceOutcome = {
      index: slice.index,
      method: slice.method,
      pages: slice.pages,
      failedPages: slice.failedPages,
      records: slice.records,
      calls: slice.calls,
      maxTotal: slice.maxTotal,
      overCap: slice.overCap,
    };
    // A slice with failed pages is not marked done: a retry of the run fetches its missing pages.
    if (slice.failedPages > 0) {
      outcomes.push(outcome);
      return;
    }
    bookkeeping += 1;
    void finishSlice({ run, outcome })
      .then(() => outcomes.push(outcome))
      .catch((error: unknown) => {
        fatal ??= failureInfo(error);
      })
      .finally(() => {
        bookkeeping -= 1;
        touch();
      });
  };

  const launchPage = (slice: SliceState, page: number) => {
    slice.inFlight += 1;
    inFlight += 1;
    void api
      .fetchPage({ run, slice: slice.index, page })
      .then(
        (result) => {
          slice.pages += 1;
          slice.records += result.records;
          slice.calls += result.calls;
          slice.maxTotal = Math.max(slice.maxTotal, result.total);
          progress.doneBatches += 1;
          progress.records += result.records;
          progress.calls += result.calls;
        },
        (error: unknown) => fail(slice, page, error),
      )
      .finally(() => {
        slice.inFlight -= 1;
        inFlight -= 1;
        completed += 1;
        settle(slice);
        touch();
      });
  };

  const launchCursor = (slice: SliceState) => {
    const seq = slice.seq + 1;
    slice.inFlight += 1;
    inFlight += 1;
    void api
      .fetchCursorPage({ run, slice: slice.index, seq, cursor: slice.cursor ?? 'null' })
      .then(
        (result) => {
          slice.seq = seq;
          slice.pages += 1;
          slice.records += result.records;
          slice.calls += result.calls;
          slice.maxTotal = Math.max(slice.maxTotal, result.total);
          slice.cursor = result.nextCursor;
          slice.chainDone = result.nextCursor === null || slice.records >= slice.planned;
          // The chain's length shows as it goes: keep the total in step with it.
          const estimate = Math.ceil(slice.planned / pageSize);
          if (seq > estimate) progress.totalBatches += 1;
          else if (slice.chainDone) progress.totalBatches -= estimate - seq;
          progress.doneBatches += 1;
          progress.records += result.records;
          progress.calls += result.calls;
        },
        (error: unknown) => {
          // A chain cannot skip a page: the rest of the slice is lost, and recorded as failed.
          fail(slice, seq, error);
          slice.chainDone = true;
        },
      )
      .finally(() => {
        slice.inFlight -= 1;
        inFlight -= 1;
        completed += 1;
        settle(slice);
        touch();
      });
  };

  const nextLaunch = (): (() => void) | undefined => {
    for (const slice of states) {
      if (slice.finished) continue;
      if (slice.method === 'cursor') {
        if (slice.inFlight === 0 && !slice.chainDone) return () => launchCursor(slice);
        continue;
      }
      if (slice.nextPage <= slice.lastPage) {
        const page = slice.nextPage;
        slice.nextPage += 1;
        return () => launchPage(slice, page);
      }
    }
    return undefined;
  };

  const generationFull = () => completed >= UNITS_PER_GENERATION || workflowInfo().continueAsNewSuggested;
  // Slices carried over unfinished may already be complete (their last pages finished before the switch).
  for (const slice of states) settle(slice);

  for (;;) {
    while (!fatal && inFlight < input.windowSize && !generationFull()) {
      const launch = nextLaunch();
      if (!launch) break;
      launch();
    }
    touch();
    if (fatal) break;
    const pending = states.some((s) => !s.finished);
    if (inFlight === 0 && bookkeeping === 0 && (!pending || generationFull())) break;
    const seen = version;
    await condition(() => version !== seen || fatal !== undefined);
  }
  if (fatal) throw fatalFailure(fatal);
  const unfinished = states.filter((s) => !s.finished);
  if (unfinished.length > 0) {
    return await continueAsNew<typeof exportPagesWorkflow>({
      ...input,
      carry: { states: unfinished, outcomes, failures, progress },
    });
  }
  progress.inFlight = 0;
  progress.updatedAt = Date.now();
  return { slices: outcomes.sort((a, b) => a.index - b.index), failures, progress };
}
