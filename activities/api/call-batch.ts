// One call to the Data Service for one batch of a stage (match or a dataset), on the API task queue;
// its records go to the batch's result file.
import { isBulkDataset } from '../../contract/datasets.js';
import { describeBatch } from '../../pipeline/batch-queue.js';
import {
  isPeopleDataset,
  prospectDatasetOf,
  type BatchOutcome,
  type BatchRef,
  type RunLocation,
  type StageName,
} from '../../pipeline/run-types.js';
import type { RateLimitInfo } from '../client-port.js';
import { easeOff, pacedCall } from '../api-pacing.js';
import { requestsSent, toActivityFailure, cancellationSignal } from '../attempt.js';
import { runLayout, stageBatching } from '../../pipeline/run-layout.js';
import { ObjectNotFoundError } from '../../storage/object-store.js';
import { RunFiles } from '../../storage/run-files.js';

import { type ActivityDeps, type RunPlans } from '../run-plans.js';
import { BatchPlanError, toJsonLines, type MatchKey, type ProspectMatchKey } from '../run-plans.js';

export function createCallBatchActivities(deps: ActivityDeps, plans: RunPlans) {
  const { calls, resolveStore } = deps;
  const { batchItems } = plans;

  return {
    /** One call to the service for one batch; its records go to the batch's result file. */
    callBatch: async ({
      run,
      stage,
      batch,
      parameters,
      idPlan,
      reuse,
    }: {
      run: RunLocation;
      stage: StageName;
      batch: BatchRef;
      parameters?: Record<string, unknown>;
      /** The stage's own plan files, when it has them (incremental runs). */
      idPlan?: string;
      /** Take the batch's result file when an earlier attempt of the run wrote it (no call). */
      reuse?: boolean;
    }): Promise<BatchOutcome> => {
      const files = RunFiles.open(resolveStore, run, { signal: cancellationSignal() });
      if (reuse) {
        const earlier = await reusedOutcome(files, runLayout.result(stage, batch), stage);
        if (earlier) return earlier;
      }
      if (stage === 'match' || stage === 'prospect_match') {
        // A people batch's keys (emails, phones, names) go to the service and nowhere else: the result
        // file keeps key ids and prospect ids, a failure the counts.
        const people = stage === 'prospect_match';
        const keys = await batchItems<MatchKey | ProspectMatchKey>(
          files,
          runLayout.matchChunk(batch.chunk),
          batch,
        );
        const items = keys.map(({ key_id: _id, ...fields }) =>
          Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null && v !== undefined)),
        );
        let answer: { ids: (string | null | undefined)[]; rateLimit?: RateLimitInfo | undefined };
        try {
          answer = await pacedCall(stage, async (options) => {
            if (people) {
              const { body, rateLimit } = await calls.matchProspects({ prospects_to_match: items }, options);
              return { ids: body.matched_prospects.map((m) => m.prospect_id), rateLimit };
            }
            const { body, rateLimit } = await calls.matchBusinesses({ businesses_to_match: items }, options);
            return { ids: body.matched_businesses.map((m) => m.business_id), rateLimit };
          });
        } catch (error) {
          throw toActivityFailure(people ? withoutServiceWords(error) : error, { items: items.length });
        }
        const idField = people ? 'prospect_id' : 'business_id';
        const results = keys.map((key, i) => ({ key_id: key.key_id, [idField]: answer.ids[i] ?? null }));
        await files.store.put(files.key(runLayout.result(stage, batch)), toJsonLines(results));
        await easeOff(answer.rateLimit);
        const matched = results.filter((r) => r[idField] !== null).length;
        return { records: matched, misses: results.length - matched, calls: requestsSent() };
      }
      const { batchSize, batchesPerChunk } = stageBatching(stage);
      if (batch.index >= batchesPerChunk)
        throw new BatchPlanError(`batch ${describeBatch(batch)} is out of range`);
      const ids = await batchItems<string>(files, runLayout.idChunk(batchSize, batch.chunk, idPlan), batch);
      if (isPeopleDataset(stage)) {
        let response;
        try {
          response = await pacedCall(stage, (options) =>
            calls.bulkEnrichProspects(
              prospectDatasetOf(stage),
              { prospect_ids: ids, ...(parameters ? { parameters } : {}) },
              options,
            ),
          );
        } catch (error) {
          throw toActivityFailure(error, { items: ids.length });
        }
        const lines = response.body.data;
        const found = new Set(lines.map((line) => line.prospect_id));
        const misses = ids.filter((id) => !found.has(id)).map((id) => ({ prospect_id: id, data: null }));
        await files.store.put(files.key(runLayout.result(stage, batch)), toJsonLines([...lines, ...misses]));
        await easeOff(response.rateLimit);
        return { records: lines.length, misses: misses.length, calls: requestsSent() };
      }
      let lines: { business_id: string; data: unknown }[];
      let rateLimit: RateLimitInfo | undefined;
      try {
        if (stage === 'company_hierarchies') {
          const [businessId] = ids;
          if (!businessId) throw new BatchPlanError(`batch ${describeBatch(batch)} is empty`);
          const response = await pacedCall(stage, (options) =>
            calls.enrichHierarchy(
              { business_id: businessId, ...(parameters ? { parameters } : {}) },
              options,
            ),
          );
          lines = response.body.data ? [{ business_id: businessId, data: response.body.data }] : [];
          rateLimit = response.rateLimit;
        } else if (isBulkDataset(stage)) {
          const response = await pacedCall(stage, (options) =>
            calls.bulkEnrich(stage, { business_ids: ids, ...(parameters ? { parameters } : {}) }, options),
          );
          lines = response.body.data;
          rateLimit = response.rateLimit;
        } else {
          throw new BatchPlanError(`unknown stage ${String(stage)}`);
        }
      } catch (error) {
        if (error instanceof BatchPlanError) throw error;
        throw toActivityFailure(error, { items: ids.length });
      }
      // Misses are written too (data null): the table leaves them out, the freshness ledger counts them
      // as asked for.
      const found = new Set(lines.map((line) => line.business_id));
      const misses = ids.filter((id) => !found.has(id)).map((id) => ({ business_id: id, data: null }));
      await files.store.put(files.key(runLayout.result(stage, batch)), toJsonLines([...lines, ...misses]));
      await easeOff(rateLimit);
      return { records: lines.length, misses: misses.length, calls: requestsSent() };
    },
  };
}

/**
 * The outcome of a batch an earlier attempt of the run completed, from its result file (written whole,
 * so one that exists is complete); undefined when there is none. No call is made, so none is counted.
 */
async function reusedOutcome(
  files: RunFiles,
  key: string,
  stage: StageName,
): Promise<BatchOutcome | undefined> {
  let text: string;
  try {
    text = (await files.store.getBytes(files.key(key), { signal: cancellationSignal() })).toString('utf8');
  } catch (error) {
    if (error instanceof ObjectNotFoundError) return undefined;
    throw error;
  }
  let records = 0;
  let misses = 0;
  for (const line of text.split('\n')) {
    if (!line) continue;
    const row = JSON.parse(line) as {
      business_id?: string | null;
      prospect_id?: string | null;
      data?: unknown;
    };
    const found =
      stage === 'match'
        ? row.business_id !== null && row.business_id !== undefined
        : stage === 'prospect_match'
          ? row.prospect_id !== null && row.prospect_id !== undefined
          : row.data !== null;
    if (found) records += 1;
    else misses += 1;
  }
  return { records, misses, calls: 0 };
}

/**
 * A failed people match call as its class, HTTP status and retry delay only: the service's words (a
 * 422's detail above all) may quote a match key, an email, a phone or a name, and a failure travels into
 * Temporal history, logs and the failures table. The class name is all retries and bisection read.
 */
function withoutServiceWords(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const status = (error as { status?: unknown }).status;
  const redacted = new Error(
    `prospect match: ${error.name}${typeof status === 'number' ? ` (HTTP ${status})` : ''}; the service's message is left out, as it may quote a match key`,
  );
  redacted.name = error.name;
  const { retryAfterMs } = error as { retryAfterMs?: unknown };
  if (typeof retryAfterMs === 'number') Object.assign(redacted, { retryAfterMs });
  return redacted;
}
