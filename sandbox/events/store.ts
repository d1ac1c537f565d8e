// The events part of the sandbox database: events, enrollments, webhooks and the delivery outbox,
// in the same DuckDB file as the rest of the data. Events and their deliveries are written in one
// transaction (a transactional outbox), so an event is never stored without its deliveries.
import { randomUUID } from 'node:crypto';
import {
  BIGINT,
  INTEGER,
  LIST,
  VARCHAR,
  listValue,
  type DuckDBConnection,
  type DuckDBInstance,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { BusinessEventType } from '../../contract/enums.js';
import type { BusinessEvent } from '../../contract/schemas/businesses.js';
import type { EventData } from './catalog.js';
import { newWebhookSecret } from './signing.js';

/** Who owns enrollments and webhooks: the api key's name plus the `tenant` header ('' when absent). */
export interface EventScope {
  keyName: string;
  tenant: string;
}

export interface EnrollmentRecord {
  enrollment_id: string;
  enrollment_key: string;
  event_types: string[];
  business_ids: string[];
}

export interface EnrollmentInput {
  enrollment_key: string;
  event_types: readonly string[];
  business_ids: readonly string[];
}

export interface WebhookRecord {
  partner_id: string;
  webhook_url: string;
  webhook_secret: string;
  created_at: string;
  last_modified_time: string;
}

export interface NewBusinessEvent {
  event_id: string;
  business_id: string;
  event_name: BusinessEventType;
  event_time_ms: number;
  data: EventData;
  /** `generated` (seeded history), `stream` (simulated) or `admin` (emitted on demand). */
  origin: 'generated' | 'stream' | 'admin';
}

export interface EventQuery {
  businessIds: readonly string[];
  eventTypes: readonly string[];
  fromMs?: number | undefined;
  toMs?: number | undefined;
  /** Added to the time of every generated (seeded) event, on the wire and in the time filter. */
  generatedShiftMs?: number | undefined;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'abandoned';

/** A due delivery with what the sender needs; url and secret are read at send time, so a
 * re-registered webhook receives pending deliveries at its new address under its new secret. */
export interface DeliveryJob {
  delivery_id: string;
  event_id: string;
  body: string;
  attempts: number;
  webhook_url: string | null;
  webhook_secret: string | null;
}

export type DeliveryOutcome =
  | { delivery_id: string; kind: 'delivered'; status: number; atMs: number }
  | { delivery_id: string; kind: 'retry'; status: number | null; error: string; nextAttemptMs: number }
  | { delivery_id: string; kind: 'abandoned'; status: number | null; error: string };

export interface DeliveryRow {
  delivery_id: string;
  event_id: string;
  partner_id: string;
  enrollment_id: string;
  status: DeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string;
  delivered_at: string | null;
}

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS events (
     event_id VARCHAR NOT NULL,
     business_id VARCHAR NOT NULL,
     event_name VARCHAR NOT NULL,
     event_time TIMESTAMP NOT NULL,
     data VARCHAR NOT NULL,
     origin VARCHAR NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS events_meta (name VARCHAR NOT NULL, value VARCHAR NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS event_enrollments (
     enrollment_id VARCHAR NOT NULL,
     key_name VARCHAR NOT NULL,
     tenant VARCHAR NOT NULL,
     enrollment_key VARCHAR NOT NULL,
     event_types VARCHAR[] NOT NULL,
     business_ids VARCHAR[] NOT NULL,
     created_at TIMESTAMP NOT NULL,
     updated_at TIMESTAMP NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS event_webhooks (
     key_name VARCHAR NOT NULL,
     tenant VARCHAR NOT NULL,
     partner_id VARCHAR NOT NULL,
     webhook_url VARCHAR NOT NULL,
     webhook_secret VARCHAR NOT NULL,
     created_at TIMESTAMP NOT NULL,
     last_modified_time TIMESTAMP NOT NULL)`,
  `CREATE SEQUENCE IF NOT EXISTS event_delivery_seq`,
  `CREATE TABLE IF NOT EXISTS event_deliveries (
     delivery_id VARCHAR NOT NULL,
     seq BIGINT NOT NULL,
     event_id VARCHAR NOT NULL,
     key_name VARCHAR NOT NULL,
     tenant VARCHAR NOT NULL,
     partner_id VARCHAR NOT NULL,
     enrollment_id VARCHAR NOT NULL,
     body VARCHAR NOT NULL,
     status VARCHAR NOT NULL,
     attempts INTEGER NOT NULL,
     next_attempt_at TIMESTAMP NOT NULL,
     last_status INTEGER,
     last_error VARCHAR,
     created_at TIMESTAMP NOT NULL,
     delivered_at TIMESTAMP)`,
];

/** Creates the events tables when missing; the generator and the plugin both call it. */
export async function ensureEventsSchema(connection: DuckDBConnection): Promise<void> {
  for (const statement of SCHEMA) await connection.run(statement);
}

const ts = (ms: number): bigint => BigInt(Math.round(ms)) * 1000n;
/** A VARCHAR column value; anything else means the schema and the code disagree. */
function text(value: unknown): string {
  if (typeof value === 'string') return value;
  throw new TypeError(`events store: expected text, got ${typeof value}`);
}
const textOrNull = (value: unknown): string | null => (value === null ? null : text(value));
/** An integer column value (INTEGER arrives as number, BIGINT as bigint). */
function int(value: unknown): number {
  if (typeof value === 'number' || typeof value === 'bigint') return Number(value);
  throw new TypeError(`events store: expected a number, got ${typeof value}`);
}
const intOrNull = (value: unknown): number | null => (value === null ? null : int(value));
const iso = (ms: unknown): string => new Date(int(ms)).toISOString();
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);
const listTypes = (...names: string[]) => Object.fromEntries(names.map((name) => [name, LIST(VARCHAR)]));

/** Runs one callback at a time: a DuckDB connection runs one statement at a time, and a transaction
 * must not interleave with other work on the same connection. */
class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

export class EventsStore {
  private readonly queue = new SerialQueue();
  private businessCount: number | undefined;
  private closed = false;

  private constructor(private readonly connection: DuckDBConnection) {}

  /** Opens a connection of its own on the shared instance and creates missing tables. */
  static async open(instance: DuckDBInstance): Promise<EventsStore> {
    const connection = await instance.connect();
    await ensureEventsSchema(connection);
    return new EventsStore(connection);
  }

  /** Waits for queued work, then releases the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.run(() => Promise.resolve());
    this.connection.closeSync();
  }

  private async rows(sql: string, values?: Record<string, DuckDBValue>, listParams: string[] = []) {
    const reader = await this.connection.runAndReadAll(sql, values, listTypes(...listParams));
    return reader.getRowObjectsJS();
  }

  private transaction<T>(work: () => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      await this.connection.run('BEGIN TRANSACTION');
      try {
        const result = await work();
        await this.connection.run('COMMIT');
        return result;
      } catch (error) {
        await this.connection.run('ROLLBACK');
        throw error;
      }
    });
  }

  // ---- enrollments ----

  listEnrollments(scope: EventScope): Promise<EnrollmentRecord[]> {
    return this.queue.run(async () => {
      const rows = await this.rows(
        `SELECT enrollment_id, enrollment_key, event_types, business_ids FROM event_enrollments
         WHERE key_name = $key AND tenant = $tenant ORDER BY created_at, enrollment_id`,
        { key: scope.keyName, tenant: scope.tenant },
      );
      return rows.map((row) => ({
        enrollment_id: text(row.enrollment_id),
        enrollment_key: text(row.enrollment_key),
        event_types: strings(row.event_types),
        business_ids: strings(row.business_ids),
      }));
    });
  }

  addEnrollment(scope: EventScope, input: EnrollmentInput, nowMs: number): Promise<EnrollmentRecord> {
    const record: EnrollmentRecord = {
      enrollment_id: randomUUID(),
      enrollment_key: input.enrollment_key,
      event_types: unique(input.event_types),
      business_ids: unique(input.business_ids),
    };
    return this.queue.run(async () => {
      await this.connection.run(
        `INSERT INTO event_enrollments VALUES
           ($id, $key, $tenant, $ekey, $types, $ids, make_timestamp($now::BIGINT), make_timestamp($now::BIGINT))`,
        {
          id: record.enrollment_id,
          key: scope.keyName,
          tenant: scope.tenant,
          ekey: record.enrollment_key,
          types: listValue(record.event_types),
          ids: listValue(record.business_ids),
          now: ts(nowMs),
        },
        listTypes('types', 'ids'),
      );
      return record;
    });
  }

  /** Replaces key, types and ids of an enrollment of this scope; undefined when the scope has none with that id. */
  updateEnrollment(
    scope: EventScope,
    enrollmentId: string,
    input: EnrollmentInput,
    nowMs: number,
  ): Promise<EnrollmentRecord | undefined> {
    const record: EnrollmentRecord = {
      enrollment_id: enrollmentId,
      enrollment_key: input.enrollment_key,
      event_types: unique(input.event_types),
      business_ids: unique(input.business_ids),
    };
    return this.queue.run(async () => {
      const result = await this.connection.run(
        `UPDATE event_enrollments
           SET enrollment_key = $ekey, event_types = $types, business_ids = $ids, updated_at = make_timestamp($now::BIGINT)
         WHERE enrollment_id = $id AND key_name = $key AND tenant = $tenant`,
        {
          id: enrollmentId,
          key: scope.keyName,
          tenant: scope.tenant,
          ekey: record.enrollment_key,
          types: listValue(record.event_types),
          ids: listValue(record.business_ids),
          now: ts(nowMs),
        },
        listTypes('types', 'ids'),
      );
      return result.rowsChanged > 0 ? record : undefined;
    });
  }

  /** False when this scope has no enrollment with that id. Pending deliveries stay: they were due
   * when the event happened. */
  deleteEnrollment(scope: EventScope, enrollmentId: string): Promise<boolean> {
    return this.queue.run(async () => {
      const result = await this.connection.run(
        `DELETE FROM event_enrollments WHERE enrollment_id = $id AND key_name = $key AND tenant = $tenant`,
        { id: enrollmentId, key: scope.keyName, tenant: scope.tenant },
      );
      return result.rowsChanged > 0;
    });
  }

  // ---- webhooks ----

  /** One webhook per partner in a scope: registering again replaces the URL and rotates the secret. */
  registerWebhook(
    scope: EventScope,
    partnerId: string,
    webhookUrl: string,
    nowMs: number,
  ): Promise<WebhookRecord> {
    const secret = newWebhookSecret();
    return this.transaction(async () => {
      const params = { key: scope.keyName, tenant: scope.tenant, partner: partnerId };
      const updated = await this.connection.run(
        `UPDATE event_webhooks SET webhook_url = $url, webhook_secret = $secret, last_modified_time = make_timestamp($now::BIGINT)
         WHERE key_name = $key AND tenant = $tenant AND partner_id = $partner`,
        { ...params, url: webhookUrl, secret, now: ts(nowMs) },
      );
      if (updated.rowsChanged === 0) {
        await this.connection.run(
          `INSERT INTO event_webhooks VALUES ($key, $tenant, $partner, $url, $secret, make_timestamp($now::BIGINT), make_timestamp($now::BIGINT))`,
          { ...params, url: webhookUrl, secret, now: ts(nowMs) },
        );
      }
      const record = await this.readWebhook(scope, partnerId);
      if (!record) throw new Error('webhook row vanished inside its own transaction');
      return record;
    });
  }

  /** The webhook of a partner in this scope, or undefined. */
  getWebhook(scope: EventScope, partnerId: string): Promise<WebhookRecord | undefined> {
    return this.queue.run(() => this.readWebhook(scope, partnerId));
  }

  /** False when the scope has no webhook for the partner. Its pending deliveries are then abandoned
   * by the worker (nowhere to send them). */
  deleteWebhook(scope: EventScope, partnerId: string): Promise<boolean> {
    return this.queue.run(async () => {
      const result = await this.connection.run(
        `DELETE FROM event_webhooks WHERE key_name = $key AND tenant = $tenant AND partner_id = $partner`,
        { key: scope.keyName, tenant: scope.tenant, partner: partnerId },
      );
      return result.rowsChanged > 0;
    });
  }

  private async readWebhook(scope: EventScope, partnerId: string): Promise<WebhookRecord | undefined> {
    const [row] = await this.rows(
      `SELECT partner_id, webhook_url, webhook_secret, epoch_ms(created_at) AS created_ms,
              epoch_ms(last_modified_time) AS modified_ms
       FROM event_webhooks WHERE key_name = $key AND tenant = $tenant AND partner_id = $partner`,
      { key: scope.keyName, tenant: scope.tenant, partner: partnerId },
    );
    if (!row) return undefined;
    return {
      partner_id: text(row.partner_id),
      webhook_url: text(row.webhook_url),
      webhook_secret: text(row.webhook_secret),
      created_at: iso(row.created_ms),
      last_modified_time: iso(row.modified_ms),
    };
  }

  // ---- events ----

  fetchEvents(query: EventQuery): Promise<BusinessEvent[]> {
    const conditions = [
      'business_id IN (SELECT unnest($ids))',
      'event_name IN (SELECT unnest($types))',
      ...(query.fromMs === undefined ? [] : ['time_ms >= $from']),
      ...(query.toMs === undefined ? [] : ['time_ms <= $to']),
    ];
    const values: Record<string, DuckDBValue> = {
      ids: listValue([...query.businessIds]),
      types: listValue([...query.eventTypes]),
      shift: BigInt(Math.round(query.generatedShiftMs ?? 0)),
      ...(query.fromMs === undefined ? {} : { from: BigInt(Math.round(query.fromMs)) }),
      ...(query.toMs === undefined ? {} : { to: BigInt(Math.round(query.toMs)) }),
    };
    return this.queue.run(async () => {
      const rows = await this.rows(
        `SELECT event_id, business_id, event_name, time_ms, data FROM (
           SELECT event_id, business_id, event_name, data,
                  epoch_ms(event_time) + CASE WHEN origin = 'generated' THEN $shift::BIGINT ELSE 0 END AS time_ms
           FROM events)
         WHERE ${conditions.join(' AND ')} ORDER BY time_ms DESC, event_id`,
        values,
        ['ids', 'types'],
      );
      return rows.map((row) => ({
        event_id: text(row.event_id),
        event_name: text(row.event_name) as BusinessEventType,
        event_time: iso(row.time_ms),
        business_id: text(row.business_id),
        data: JSON.parse(text(row.data)) as EventData,
      }));
    });
  }

  /** End of the seeded history (`events_meta.anchor`, epoch ms), or undefined when none was generated. */
  historyAnchorMs(): Promise<number | undefined> {
    return this.queue.run(async () => {
      const [row] = await this.rows(`SELECT value FROM events_meta WHERE name = 'anchor'`);
      const anchor = row ? Date.parse(text(row.value)) : Number.NaN;
      return Number.isNaN(anchor) ? undefined : anchor;
    });
  }

  /**
   * Stores new events and, in the same transaction, one outbox row per (event, enrollment that
   * covers its business and type, webhook of the enrollment's scope). Returns the number queued.
   */
  recordEvents(events: readonly NewBusinessEvent[], nowMs: number): Promise<number> {
    if (events.length === 0) return Promise.resolve(0);
    // Set-based: one statement per table however many events, since each statement costs about a
    // millisecond whatever its size.
    const eventIds = events.map((event) => event.event_id);
    const businessIds = events.map((event) => event.business_id);
    const names = events.map((event) => event.event_name);
    return this.transaction(async () => {
      await this.connection.run(
        `INSERT INTO events
         SELECT unnest($ids), unnest($businesses), unnest($names), make_timestamp(unnest($times)), unnest($data), $origin`,
        {
          ids: listValue(eventIds),
          businesses: listValue(businessIds),
          names: listValue(names),
          times: listValue(events.map((event) => ts(event.event_time_ms))),
          data: listValue(events.map((event) => JSON.stringify(event.data))),
          origin: events[0]?.origin ?? 'admin',
        },
        { ...listTypes('ids', 'businesses', 'names', 'data'), times: LIST(BIGINT) },
      );
      const targets = await this.rows(
        `SELECT ev.i, en.enrollment_id, en.enrollment_key, en.key_name, en.tenant, w.partner_id
         FROM (SELECT unnest($businesses) AS business_id, unnest($names) AS event_name,
                      unnest(range(len($businesses))) AS i) ev
         JOIN event_enrollments en
           ON list_contains(en.business_ids, ev.business_id) AND list_contains(en.event_types, ev.event_name)
         JOIN event_webhooks w ON w.key_name = en.key_name AND w.tenant = en.tenant
         ORDER BY ev.i, en.created_at, en.enrollment_id, w.partner_id`,
        { businesses: listValue(businessIds), names: listValue(names) },
        ['businesses', 'names'],
      );
      if (targets.length === 0) return 0;
      const columns = {
        ids: [] as string[],
        events: [] as string[],
        keys: [] as string[],
        tenants: [] as string[],
      };
      const more = { partners: [] as string[], enrollments: [] as string[], bodies: [] as string[] };
      for (const target of targets) {
        const event = events[int(target.i)];
        if (!event) throw new Error('events store: a delivery target points at no event');
        const tenant = text(target.tenant);
        const partnerId = text(target.partner_id);
        columns.ids.push(randomUUID());
        columns.events.push(event.event_id);
        columns.keys.push(text(target.key_name));
        columns.tenants.push(tenant);
        more.partners.push(partnerId);
        more.enrollments.push(text(target.enrollment_id));
        more.bodies.push(
          JSON.stringify({
            tenant_id: tenant === '' ? null : tenant,
            partner_id: partnerId,
            event_id: event.event_id,
            event_name: event.event_name,
            entity_id: event.business_id,
            entity_type: 'business',
            data: { ...event.data, event_time: new Date(event.event_time_ms).toISOString() },
            enrollment_key: text(target.enrollment_key),
          }),
        );
      }
      await this.connection.run(
        `INSERT INTO event_deliveries
         SELECT id, nextval('event_delivery_seq'), event, key, tenant, partner, enrollment, body, 'pending', 0,
                make_timestamp($now::BIGINT), NULL, NULL, make_timestamp($now::BIGINT), NULL
         FROM (SELECT unnest($ids) AS id, unnest($events) AS event, unnest($keys) AS key, unnest($tenants) AS tenant,
                      unnest($partners) AS partner, unnest($enrollments) AS enrollment, unnest($bodies) AS body)`,
        {
          ...Object.fromEntries(
            Object.entries({ ...columns, ...more }).map(([name, list]) => [name, listValue(list)]),
          ),
          now: ts(nowMs),
        },
        listTypes('ids', 'events', 'keys', 'tenants', 'partners', 'enrollments', 'bodies'),
      );
      return targets.length;
    });
  }

  /** A business for a simulated event: from an enrollment half the time (so enrolled businesses see
   * traffic even among 200,000), otherwise any business; undefined when there are none. */
  randomBusinessId(random: {
    next(): number;
    int(min: number, max: number): number;
  }): Promise<string | undefined> {
    return this.queue.run(async () => {
      if (random.next() < 0.5) {
        const enrolled = await this.rows(
          `SELECT DISTINCT unnest(business_ids) AS business_id FROM event_enrollments ORDER BY 1`,
        );
        if (enrolled.length > 0) return text(enrolled[random.int(0, enrolled.length - 1)]?.business_id);
      }
      try {
        if (this.businessCount === undefined) {
          const [row] = await this.rows(`SELECT count(*) AS n FROM businesses`);
          this.businessCount = int(row?.n ?? 0);
        }
        if (this.businessCount === 0) return undefined;
        const [row] = await this.rows(`SELECT business_id FROM businesses LIMIT 1 OFFSET $offset`, {
          offset: random.int(0, this.businessCount - 1),
        });
        return row ? text(row.business_id) : undefined;
      } catch {
        // No businesses table (an events-only database): nothing to simulate for.
        this.businessCount = 0;
        return undefined;
      }
    });
  }

  // ---- outbox ----

  dueDeliveries(nowMs: number, limit: number, exclude: ReadonlySet<string>): Promise<DeliveryJob[]> {
    return this.queue.run(async () => {
      const rows = await this.rows(
        `SELECT d.delivery_id, d.event_id, d.body, d.attempts, w.webhook_url, w.webhook_secret
         FROM event_deliveries d
         LEFT JOIN event_webhooks w ON w.key_name = d.key_name AND w.tenant = d.tenant AND w.partner_id = d.partner_id
         WHERE d.status = 'pending' AND d.next_attempt_at <= make_timestamp($now::BIGINT)
           AND d.delivery_id NOT IN (SELECT unnest($exclude))
         ORDER BY d.next_attempt_at, d.seq LIMIT $limit`,
        { now: ts(nowMs), exclude: listValue([...exclude]), limit },
        ['exclude'],
      );
      return rows.map((row) => ({
        delivery_id: text(row.delivery_id),
        event_id: text(row.event_id),
        body: text(row.body),
        attempts: int(row.attempts),
        webhook_url: textOrNull(row.webhook_url),
        webhook_secret: textOrNull(row.webhook_secret),
      }));
    });
  }

  /** When the earliest pending delivery falls due (epoch ms), or undefined when none is pending. */
  nextDueAt(exclude: ReadonlySet<string>): Promise<number | undefined> {
    return this.queue.run(async () => {
      const [row] = await this.rows(
        `SELECT epoch_ms(min(next_attempt_at)) AS due FROM event_deliveries
         WHERE status = 'pending' AND delivery_id NOT IN (SELECT unnest($exclude))`,
        { exclude: listValue([...exclude]) },
        ['exclude'],
      );
      return row?.due === null || row?.due === undefined ? undefined : int(row.due);
    });
  }

  /** Records the outcomes of attempts, all in one statement (the worker batches them). */
  recordOutcomes(outcomes: readonly DeliveryOutcome[]): Promise<void> {
    if (outcomes.length === 0) return Promise.resolve();
    const status = (outcome: DeliveryOutcome) => (outcome.kind === 'retry' ? 'pending' : outcome.kind);
    return this.queue.run(async () => {
      await this.connection.run(
        `UPDATE event_deliveries AS d
         SET status = u.status, attempts = d.attempts + 1, last_status = u.http_status, last_error = u.error,
             next_attempt_at = coalesce(make_timestamp(u.next_at), d.next_attempt_at),
             delivered_at = make_timestamp(u.delivered_at)
         FROM (SELECT unnest($ids) AS id, unnest($statuses) AS status, unnest($http) AS http_status,
                      unnest($errors) AS error, unnest($next) AS next_at, unnest($delivered) AS delivered_at) u
         WHERE d.delivery_id = u.id`,
        {
          ids: listValue(outcomes.map((outcome) => outcome.delivery_id)),
          statuses: listValue(outcomes.map(status)),
          http: listValue(outcomes.map((outcome) => outcome.status)),
          errors: listValue(outcomes.map((outcome) => (outcome.kind === 'delivered' ? null : outcome.error))),
          next: listValue(
            outcomes.map((outcome) => (outcome.kind === 'retry' ? ts(outcome.nextAttemptMs) : null)),
          ),
          delivered: listValue(
            outcomes.map((outcome) => (outcome.kind === 'delivered' ? ts(outcome.atMs) : null)),
          ),
        },
        {
          ...listTypes('ids', 'statuses', 'errors'),
          http: LIST(INTEGER),
          next: LIST(BIGINT),
          delivered: LIST(BIGINT),
        },
      );
    });
  }

  listDeliveries(filter: {
    eventId?: string | undefined;
    status?: DeliveryStatus | undefined;
  }): Promise<DeliveryRow[]> {
    const conditions = ['TRUE'];
    const values: Record<string, DuckDBValue> = {};
    if (filter.eventId !== undefined) {
      conditions.push('event_id = $event');
      values.event = filter.eventId;
    }
    if (filter.status !== undefined) {
      conditions.push('status = $status');
      values.status = filter.status;
    }
    return this.queue.run(async () => {
      const rows = await this.rows(
        `SELECT delivery_id, event_id, partner_id, enrollment_id, status, attempts, last_status, last_error,
                epoch_ms(next_attempt_at) AS next_ms, epoch_ms(delivered_at) AS delivered_ms
         FROM event_deliveries WHERE ${conditions.join(' AND ')} ORDER BY seq`,
        values,
      );
      return rows.map((row) => ({
        delivery_id: text(row.delivery_id),
        event_id: text(row.event_id),
        partner_id: text(row.partner_id),
        enrollment_id: text(row.enrollment_id),
        status: text(row.status) as DeliveryStatus,
        attempts: int(row.attempts),
        last_status: intOrNull(row.last_status),
        last_error: textOrNull(row.last_error),
        next_attempt_at: iso(row.next_ms),
        delivered_at: row.delivered_ms === null ? null : iso(row.delivered_ms),
      }));
    });
  }
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
