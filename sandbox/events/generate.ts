// The seeded history of business events: roughly the 90 days before a fixed anchor date, so the same
// seed gives the same events on any machine and any day. The data generator calls `generateEvents`
// after it has filled the businesses table.
import { DuckDBTimestampValue, type DuckDBConnection } from '@duckdb/node-api';
import { BUSINESS_EVENT_TYPES, type BusinessEventType } from '../../contract/enums.js';
import { buildEventData } from './catalog.js';
import { seededRandom, type EventRandom } from './random.js';
import { ensureEventsSchema } from './store.js';

/** The default end of the generated history; fixed, never "now", so output does not depend on the day. */
export const DEFAULT_EVENTS_ANCHOR = '2026-01-01T00:00:00.000Z';

export interface GenerateEventsOptions {
  connection: DuckDBConnection;
  seed: string | number;
  /** End of the history (ISO 8601 or Date); recorded in `events_meta`. Default DEFAULT_EVENTS_ANCHOR. */
  anchor?: string | Date;
  /** Length of the history in days; default 90. */
  days?: number;
  /** Businesses to generate for; default every `business_id` of the `businesses` table, in id order. */
  businessIds?: readonly string[];
  /** Share of businesses with at least one event, 0..1; default 0.6. */
  coverage?: number;
  /** Mean number of events of a business that has any; default 3. */
  meanEventsPerBusiness?: number;
}

export interface GenerateEventsResult {
  events: number;
  businessesWithEvents: number;
  anchor: string;
  from: string;
}

// Hiring and joiners are everyday news; IPOs and acquisitions are rare.
const TYPE_WEIGHTS: Record<string, number> = {
  ipo_announcement: 0.2,
  new_funding_round: 2,
  new_investment: 1,
  new_product: 3,
  new_office: 2,
  closing_office: 1,
  new_partnership: 3,
  employee_joined_company: 8,
  company_award: 2,
  outages_and_security_breaches: 1,
  cost_cutting: 1,
  merger_and_acquisitions: 0.8,
  lawsuits_and_legal_issues: 1,
};
const weightOf = (type: string): number =>
  TYPE_WEIGHTS[type] ?? (type.startsWith('hiring_in_') ? 4 : type.endsWith('all_departments') ? 1 : 2);

function typePicker(random: EventRandom): () => BusinessEventType {
  const cumulative: number[] = [];
  let total = 0;
  for (const type of BUSINESS_EVENT_TYPES) {
    total += weightOf(type);
    cumulative.push(total);
  }
  return () => {
    const target = random.next() * total;
    const index = cumulative.findIndex((edge) => target < edge);
    return BUSINESS_EVENT_TYPES[index === -1 ? BUSINESS_EVENT_TYPES.length - 1 : index] ?? 'new_product';
  };
}

export async function generateEvents(options: GenerateEventsOptions): Promise<GenerateEventsResult> {
  const { connection } = options;
  const anchorMs = new Date(options.anchor ?? DEFAULT_EVENTS_ANCHOR).getTime();
  if (Number.isNaN(anchorMs)) throw new RangeError(`invalid events anchor: ${String(options.anchor)}`);
  const days = options.days ?? 90;
  const coverage = options.coverage ?? 0.6;
  const mean = Math.max(1, options.meanEventsPerBusiness ?? 3);
  const spanSeconds = days * 86_400;

  await ensureEventsSchema(connection);
  const businessIds =
    options.businessIds ??
    (await connection.runAndReadAll('SELECT business_id FROM businesses ORDER BY business_id'))
      .getColumnsJS()[0]
      ?.map(String) ??
    [];

  const random = seededRandom(`events:${String(options.seed)}`);
  const pickType = typePicker(random);
  await connection.run(`DELETE FROM events WHERE origin = 'generated'`);
  const appender = await connection.createAppender('events');
  let events = 0;
  let businessesWithEvents = 0;
  try {
    for (const businessId of businessIds) {
      if (random.next() >= coverage) continue;
      businessesWithEvents += 1;
      // Geometric-like count: most businesses have a few events, some have many.
      const count = Math.min(25, 1 + Math.floor(-Math.log(1 - random.next()) * (mean - 1)));
      for (let i = 0; i < count; i += 1) {
        const eventTimeMs = anchorMs - random.int(0, spanSeconds - 1) * 1000;
        const type = pickType();
        appender.appendVarchar(random.hex(32));
        appender.appendVarchar(businessId);
        appender.appendVarchar(type);
        appender.appendTimestamp(new DuckDBTimestampValue(BigInt(eventTimeMs) * 1000n));
        appender.appendVarchar(JSON.stringify(buildEventData(type, random, eventTimeMs)));
        appender.appendVarchar('generated');
        appender.endRow();
        events += 1;
      }
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }

  const anchor = new Date(anchorMs).toISOString();
  const from = new Date(anchorMs - spanSeconds * 1000).toISOString();
  const meta = {
    anchor,
    from,
    days: String(days),
    seed: String(options.seed),
    generated_events: String(events),
  };
  await connection.run(`DELETE FROM events_meta`);
  for (const [name, value] of Object.entries(meta)) {
    await connection.run(`INSERT INTO events_meta VALUES ($name, $value)`, { name, value });
  }
  return { events, businessesWithEvents, anchor, from };
}
