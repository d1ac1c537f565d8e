// Every workflow the worker registers; the Temporal bundler starts here.
export { batchStageWorkflow } from './batch-stage.js';
export { enrichRunWorkflow, retryRunWorkflow } from './enrich-run.js';
export { exportRunWorkflow } from './export-run.js';
export { exportPagesWorkflow } from './export-pages.js';
export { exportPostsWorkflow } from './export-posts.js';
export { eventSlotWorkflow } from './events-intake.js';
export { eventWindowWorkflow } from './events-sink.js';
export { eventsPullWorkflow } from './events-pull.js';

import type {
  EVENT_SLOT_WORKFLOW,
  EVENT_WINDOW_WORKFLOW,
  EVENTS_PULL_WORKFLOW,
} from '../pipeline/events-types.js';
import type * as registered from './index.js';

/**
 * The workflow names that parts which may not import workflows (the receiver, schedules) start or
 * signal them by: a name that is not a registered workflow fails to compile here.
 */
export type WorkflowName = keyof typeof registered;
type Checked<T extends WorkflowName> = T;
export type NamedElsewhere = Checked<
  typeof EVENT_SLOT_WORKFLOW | typeof EVENT_WINDOW_WORKFLOW | typeof EVENTS_PULL_WORKFLOW
>;
