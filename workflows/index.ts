// Every workflow the worker registers; the Temporal bundler starts here.
export { batchStageWorkflow } from './batch-stage.js';
export { enrichRunWorkflow, retryRunWorkflow } from './enrich-run.js';
export { exportPagesWorkflow, exportPostsWorkflow, exportRunWorkflow } from './export-run.js';
export { eventSlotWorkflow } from './events-intake.js';
export { eventWindowWorkflow } from './events-sink.js';
export { eventsPullWorkflow } from './events-pull.js';
