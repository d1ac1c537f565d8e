// Every workflow the worker registers; the Temporal bundler starts here.
export { batchStageWorkflow } from './batch-stage.js';
export { enrichRunWorkflow, retryRunWorkflow } from './enrich-run.js';
