// Enrollment families over the Data Service: every enrollment that shares an `enrollment_key` is one
// family (the CLI's "one key"), created, listed, reconciled and deleted together. The calls follow the
// plan of enrollment-plan.ts; `call` wraps each request (the CLI adds retries of 429s and 5xx).
import type { BusinessEventType } from '../contract/enums.js';
import type { DataServiceClient } from '../client/index.js';
import {
  EnrollmentInputError,
  planEnrollmentSync,
  type EnrollmentSyncPlan,
  type ExistingEnrollment,
} from './enrollment-plan.js';

type EnrollmentClient = Pick<
  DataServiceClient,
  'listEnrollments' | 'createEnrollments' | 'updateEnrollments' | 'deleteEnrollments'
>;

export type CallWrapper = <T>(what: string, call: () => Promise<T>) => Promise<T>;
const direct: CallWrapper = (_what, call) => call();

export interface EnrollmentFamily {
  enrollment_key: string;
  enrollment_ids: string[];
  event_types: string[];
  business_ids: string[];
}

/** Every enrollment of the caller (api key + tenant), grouped by key, keys in first-seen order. */
export async function listEnrollmentFamilies(
  client: EnrollmentClient,
  call: CallWrapper = direct,
): Promise<EnrollmentFamily[]> {
  const { body } = await call('list enrollments', () => client.listEnrollments());
  const families = new Map<string, EnrollmentFamily>();
  for (const enrollment of body.enrollments) {
    const family = families.get(enrollment.enrollment_key) ?? {
      enrollment_key: enrollment.enrollment_key,
      enrollment_ids: [],
      event_types: [],
      business_ids: [],
    };
    family.enrollment_ids.push(enrollment.enrollment_id);
    family.event_types = [...new Set([...family.event_types, ...enrollment.event_types])];
    family.business_ids.push(...enrollment.business_ids);
    families.set(enrollment.enrollment_key, family);
  }
  return [...families.values()];
}

async function existingOf(
  client: EnrollmentClient,
  key: string,
  call: CallWrapper,
): Promise<ExistingEnrollment[]> {
  const { body } = await call('list enrollments', () => client.listEnrollments());
  return body.enrollments.filter((enrollment) => enrollment.enrollment_key === key);
}

export interface SyncResult {
  plan: EnrollmentSyncPlan;
  /** Ids of the family's enrollments afterwards. */
  enrollmentIds: string[];
  businessIds: number;
}

async function apply(
  client: EnrollmentClient,
  plan: EnrollmentSyncPlan,
  call: CallWrapper,
  onProgress?: (done: number, total: number) => void,
): Promise<string[]> {
  const total = plan.create.length + plan.update.length + plan.delete.length;
  let done = 0;
  const step = () => onProgress?.(++done, total);
  const ids = [...plan.unchanged];
  // Creates, then updates, then deletes: a business that stays enrolled is never uncovered meanwhile.
  for (const change of plan.create) {
    const { body } = await call('create enrollment', () => client.createEnrollments(change));
    ids.push(body.enrollment_id);
    step();
  }
  for (const change of plan.update) {
    await call('update enrollment', () => client.updateEnrollments(change));
    ids.push(change.enrollment_id);
    step();
  }
  for (const id of plan.delete) {
    await call('delete enrollment', () => client.deleteEnrollments({ enrollment_id: id }));
    step();
  }
  return ids;
}

/** Creates a new family; refuses a key that already has enrollments (reconcile it with `syncEnrollmentFamily`). */
export async function createEnrollmentFamily(
  client: EnrollmentClient,
  input: { key: string; eventTypes: BusinessEventType[]; businessIds: string[] },
  options: { call?: CallWrapper; onProgress?: (done: number, total: number) => void } = {},
): Promise<SyncResult> {
  const call = options.call ?? direct;
  const existing = await existingOf(client, input.key, call);
  if (existing.length > 0) {
    throw new EnrollmentInputError(
      `enrollment key "${input.key}" already has ${existing.length} enrollment(s); use "enrollments update --key ${input.key}" to change it`,
    );
  }
  const plan = planEnrollmentSync(input.key, input.eventTypes, input.businessIds, []);
  const enrollmentIds = await apply(client, plan, call, options.onProgress);
  return { plan, enrollmentIds, businessIds: input.businessIds.length };
}

/**
 * Makes the family of `key` hold exactly `businessIds` (default: the ids it has) for `eventTypes`
 * (default: the types it has), changing as few enrollments as possible. Also finishes a create that
 * stopped half-way.
 */
export async function syncEnrollmentFamily(
  client: EnrollmentClient,
  input: { key: string; eventTypes?: BusinessEventType[]; businessIds?: string[] },
  options: { call?: CallWrapper; onProgress?: (done: number, total: number) => void } = {},
): Promise<SyncResult> {
  const call = options.call ?? direct;
  const existing = await existingOf(client, input.key, call);
  if (existing.length === 0 && (!input.eventTypes || !input.businessIds)) {
    throw new EnrollmentInputError(
      `enrollment key "${input.key}" has no enrollments; create it with "enrollments create" (event types and ids)`,
    );
  }
  const eventTypes =
    input.eventTypes ?? ([...new Set(existing.flatMap((e) => e.event_types))] as BusinessEventType[]);
  const businessIds = input.businessIds ?? [...new Set(existing.flatMap((e) => e.business_ids))];
  const plan = planEnrollmentSync(input.key, eventTypes, businessIds, existing);
  const enrollmentIds = await apply(client, plan, call, options.onProgress);
  return { plan, enrollmentIds, businessIds: businessIds.length };
}

/** Deletes every enrollment of the family; returns how many. */
export async function deleteEnrollmentFamily(
  client: EnrollmentClient,
  key: string,
  call: CallWrapper = direct,
): Promise<number> {
  const existing = await existingOf(client, key, call);
  for (const enrollment of existing) {
    await call('delete enrollment', () =>
      client.deleteEnrollments({ enrollment_id: enrollment.enrollment_id }),
    );
  }
  return existing.length;
}
