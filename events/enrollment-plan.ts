// Enrollments as the CLI manages them: many business ids under one `enrollment_key`, split into
// enrollments of at most 20 ids (the service's limit per request). Every enrollment of a family carries
// the same key, so each delivery names the family it came from. Pure: planned here, sent by the CLI.
import { BUSINESS_EVENT_TYPES, type BusinessEventType } from '../contract/enums.js';
import { MAX_ENROLLMENT_IDS, MIN_ENROLLMENT_KEY_LENGTH } from '../contract/limits.js';

/** Thrown when event types, a key or business ids cannot be used; nothing has been sent yet. */
export class EnrollmentInputError extends Error {
  override readonly name = 'EnrollmentInputError';
  readonly code = 'ENROLLMENT_INPUT_INVALID';
}

const BUSINESS_ID = /^[0-9a-f]{32}$/;

/** Distance between two short strings, to suggest the type the user probably meant. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(
        Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * Reads a comma-separated list of event types (`all` = every documented type), checked against the
 * documented list; unknown names are refused together, each with the closest documented name.
 */
export function parseEventTypes(text: string): BusinessEventType[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 0) throw new EnrollmentInputError('no event types given');
  if (names.length === 1 && names[0] === 'all') return [...BUSINESS_EVENT_TYPES];
  const known = new Set<string>(BUSINESS_EVENT_TYPES);
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    const hints = unknown.map((name) => {
      const closest = [...BUSINESS_EVENT_TYPES].sort(
        (x, y) => editDistance(name, x) - editDistance(name, y),
      )[0];
      return `"${name}"${closest ? ` (did you mean ${closest}?)` : ''}`;
    });
    throw new EnrollmentInputError(
      `unknown event type${unknown.length > 1 ? 's' : ''} ${hints.join(', ')}; ` +
        `documented types: ${BUSINESS_EVENT_TYPES.join(', ')}`,
    );
  }
  return [...new Set(names)] as BusinessEventType[];
}

export function checkEnrollmentKey(key: string): string {
  if (key.length < MIN_ENROLLMENT_KEY_LENGTH) {
    throw new EnrollmentInputError(
      `enrollment key "${key}" is too short: at least ${MIN_ENROLLMENT_KEY_LENGTH} characters`,
    );
  }
  return key;
}

/** Unique, validated business ids in first-seen order; ids that are not 32 hex digits are refused. */
export function normaliseBusinessIds(ids: readonly string[]): string[] {
  const unique = [...new Set(ids.map((id) => id.trim().toLowerCase()).filter(Boolean))];
  const bad = unique.filter((id) => !BUSINESS_ID.test(id));
  if (bad.length > 0) {
    const shown = bad.slice(0, 5).map((id) => `"${id}"`);
    throw new EnrollmentInputError(
      `${bad.length} business id${bad.length > 1 ? 's are' : ' is'} not 32 hex digits: ${shown.join(', ')}${bad.length > 5 ? ', …' : ''}`,
    );
  }
  return unique;
}

/** An existing enrollment of the family, as the service lists it. */
export interface ExistingEnrollment {
  enrollment_id: string;
  enrollment_key: string;
  event_types: readonly string[];
  business_ids: readonly string[];
}

export interface EnrollmentChange {
  enrollment_key: string;
  event_types: BusinessEventType[];
  business_ids: string[];
}

/** What to send to make a family hold exactly the wanted ids and types. */
export interface EnrollmentSyncPlan {
  create: EnrollmentChange[];
  update: (EnrollmentChange & { enrollment_id: string })[];
  delete: string[];
  unchanged: string[];
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((value) => set.has(value));
}

/**
 * Plans the calls that turn the existing enrollments of a key into the wanted ones. An id that stays
 * wanted stays in the enrollment that already holds it, so no business is ever between two enrollments
 * (no missed events while the calls run); new ids fill free room first, then new enrollments of up
 * to 20. Send creates first, then updates, then deletes.
 */
export function planEnrollmentSync(
  key: string,
  eventTypes: readonly BusinessEventType[],
  wantedIds: readonly string[],
  existing: readonly ExistingEnrollment[],
  limit = MAX_ENROLLMENT_IDS,
): EnrollmentSyncPlan {
  const wanted = new Set(wantedIds);
  const placed = new Set<string>();
  const family = existing.filter((enrollment) => enrollment.enrollment_key === key);
  const kept = family.map((enrollment) => {
    const ids = enrollment.business_ids.filter((id) => wanted.has(id) && !placed.has(id));
    for (const id of ids) placed.add(id);
    return { enrollment, ids };
  });
  const fresh = wantedIds.filter((id) => !placed.has(id));
  for (const slot of kept) {
    while (slot.ids.length < limit && fresh.length > 0 && slot.ids.length > 0) {
      slot.ids.push(fresh.shift() as string);
    }
  }
  // Enrollments left empty are reused for new ids before any new one is created.
  for (const slot of kept) {
    while (slot.ids.length < limit && fresh.length > 0) slot.ids.push(fresh.shift() as string);
  }
  const plan: EnrollmentSyncPlan = { create: [], update: [], delete: [], unchanged: [] };
  for (const { enrollment, ids } of kept) {
    if (ids.length === 0) {
      plan.delete.push(enrollment.enrollment_id);
    } else if (sameSet(ids, enrollment.business_ids) && sameSet(eventTypes, enrollment.event_types)) {
      plan.unchanged.push(enrollment.enrollment_id);
    } else {
      plan.update.push({
        enrollment_id: enrollment.enrollment_id,
        enrollment_key: key,
        event_types: [...eventTypes],
        business_ids: ids,
      });
    }
  }
  for (let i = 0; i < fresh.length; i += limit) {
    plan.create.push({
      enrollment_key: key,
      event_types: [...eventTypes],
      business_ids: fresh.slice(i, i + limit),
    });
  }
  return plan;
}
