// Where a run keeps its files, relative to the run's prefix `<output>/<runId>/`. Final tables sit at
// the top (`<table>/part-0.parquet`, `manifest.json`, `_SUCCESS` last); working files live under
// `_work/`, which warehouse loaders skip by convention. Names are deterministic so a retried
// activity overwrites its own output instead of adding to it.
import { describeBatch } from './batch-queue.js';
import type { BatchRef, StageName } from './run-types.js';

/** Ids per `bulk_enrich` call and keys per match call (spec: 1 to 50). */
export const BATCH_SIZE = 50;
/** Batches stored together in one plan file, so a worker fetches a plan file once for many calls. */
export const BATCHES_PER_CHUNK = 20;
/** Plan files for one-id-per-call stages (hierarchies) hold more batches. */
export const SINGLE_ID_BATCHES_PER_CHUNK = 1_000;

const pad = (n: number, width = 5) => String(n).padStart(width, '0');

export const runLayout = {
  manifest: 'manifest.json',
  success: '_SUCCESS',
  report: 'report.md',
  tablePrefix: (table: string) => `${table}/`,
  tablePart: (table: string, index: number) => `${table}/part-${index}.parquet`,
  plannedRows: '_work/plan/rows.parquet',
  plannedRejects: '_work/plan/rejects.parquet',
  planSummary: '_work/plan/summary.json',
  /** The latest `RunSummary` (the run's or its latest retry's), for the next retry. */
  runSummary: '_work/summary.json',
  matchChunk: (chunk: number) => `_work/plan/match/chunk-${pad(chunk)}.json`,
  /** The plan files of id batches: shared by the datasets of one batch size, or one dataset's own (`idPlan`). */
  idPlanPrefix: (batchSize: number, idPlan?: string) => `_work/plan/${idPlan ?? `ids-${batchSize}`}/`,
  idChunk: (batchSize: number, chunk: number, idPlan?: string) =>
    `${runLayout.idPlanPrefix(batchSize, idPlan)}chunk-${pad(chunk)}.json`,
  resultsPrefix: (stage: StageName) => `_work/results/${stage}/`,
  result: (stage: StageName, batch: BatchRef) => `_work/results/${stage}/${describeBatch(batch)}.jsonl`,
  failuresPrefix: '_work/failures/',
  failures: (stage: StageName, generation: number, sequence: number) =>
    `_work/failures/${stage}-g${pad(generation, 3)}-${pad(sequence, 4)}.json`,
};

/**
 * The freshness ledger of a dataset, relative to the OUTPUT prefix (shared by the job's runs): one row per
 * business id ever asked for, with when and whether the service had data for it.
 */
export const ledgerKey = (dataset: StageName) => `_ledger/${dataset}.parquet`;

/** Batch size and chunking of a stage: one id per call for hierarchies, 50 otherwise. */
export function stageBatching(stage: StageName): { batchSize: number; batchesPerChunk: number } {
  return stage === 'company_hierarchies'
    ? { batchSize: 1, batchesPerChunk: SINGLE_ID_BATCHES_PER_CHUNK }
    : { batchSize: BATCH_SIZE, batchesPerChunk: BATCHES_PER_CHUNK };
}
