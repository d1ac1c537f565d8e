// Prospects as batches of column values, ready for the `prospects`, `prospect_posts` and
// `prospect_contacts` appenders.
// The same producer runs in a worker thread (large worlds: generation and DuckDB ingestion overlap on
// two cores) or inline (small worlds and tests); both give the same rows in the same order.
import type { DuckDBAppender } from '@duckdb/node-api';
import { employerWeights, type BusinessRow } from './businesses.js';
import { titleIdOf } from './people.js';
import { generateProspect, type ProspectContext } from './prospects.js';
import { seedKey } from './random.js';

/**
 * Columns of the `prospects` table, in order, with their appender kinds. Filters work on the small
 * numeric columns; matching uses the hashes, slug and folded name; `record_json` is what fetch returns.
 */
export const PROSPECT_TABLE_COLUMNS = [
  ['pix', 'INTEGER'],
  ['prospect_id', 'VARCHAR'],
  ['bix', 'INTEGER'],
  ['title_id', 'SMALLINT'],
  ['region_id', 'SMALLINT'],
  ['contact_flags', 'UTINYINT'],
  ['total_months', 'SMALLINT'],
  ['current_months', 'SMALLINT'],
  ['full_name_norm', 'VARCHAR'],
  ['email_hash', 'VARCHAR'],
  ['personal_email_hash', 'VARCHAR'],
  ['phone_hash', 'VARCHAR'],
  ['network_slug', 'VARCHAR'],
  // Stored uncompressed: a fetch reads scattered records of a page, and decompressing whole vectors
  // for a few rows each costs several times more than the larger file.
  ['record_json', 'VARCHAR USING COMPRESSION uncompressed'],
] as const;
export const PROSPECT_COLUMNS = PROSPECT_TABLE_COLUMNS.length;
/** Bits of `contact_flags`. */
export const HAS_EMAIL = 1;
export const HAS_PHONE = 2;
/** Values per posts row and per contacts row: pix, prospect_id, json. */
export const POSTS_COLUMNS = 3;

export interface ProspectBatch {
  /** Row-major values of `prospects` rows. */
  prospects: (string | number | null)[];
  /** Row-major values of `prospect_posts` rows. */
  posts: (string | number)[];
  /** Row-major values of `prospect_contacts` rows. */
  contacts: (string | number)[];
}

/** Yields the prospects [0, count) of a seed in batches of `batchSize`. */
export function* prospectBatches(
  seed: string | number,
  rows: readonly BusinessRow[],
  count: number,
  batchSize: number,
): Generator<ProspectBatch> {
  const context: ProspectContext = {
    key: seedKey(seed),
    rows,
    employerWeights: employerWeights(rows),
    emails: new Set(),
    phones: new Set(),
  };
  for (let start = 0; start < count; start += batchSize) {
    const end = Math.min(count, start + batchSize);
    const batch: ProspectBatch = { prospects: [], posts: [], contacts: [] };
    for (let pix = start; pix < end; pix += 1) {
      const p = generateProspect(pix, context);
      batch.prospects.push(
        p.pix,
        p.prospectId,
        p.bix,
        titleIdOf(p.title),
        p.regionId,
        (p.emailHash !== null ? HAS_EMAIL : 0) | (p.phoneHash !== null ? HAS_PHONE : 0),
        p.totalExperienceMonths,
        p.currentRoleMonths,
        p.fullNameNorm,
        p.emailHash,
        p.personalEmailHash,
        p.phoneHash,
        p.networkSlug,
        p.recordJson,
      );
      if (p.postsJson !== null) batch.posts.push(p.pix, p.prospectId, p.postsJson);
      if (p.contactsJson !== null) batch.contacts.push(p.pix, p.prospectId, p.contactsJson);
    }
    yield batch;
  }
}

const KINDS = PROSPECT_TABLE_COLUMNS.map(([, kind]) => kind);

function appendKeyedJson(appender: DuckDBAppender, values: readonly (string | number)[]): number {
  for (let i = 0; i < values.length; i += POSTS_COLUMNS) {
    appender.appendInteger(values[i] as number);
    appender.appendVarchar(values[i + 1] as string);
    appender.appendVarchar(values[i + 2] as string);
    appender.endRow();
  }
  return values.length / POSTS_COLUMNS;
}

export interface ProspectAppenders {
  prospects: DuckDBAppender;
  posts: DuckDBAppender;
  contacts: DuckDBAppender;
}

/** Appends one batch; returns the number of posts and contacts rows appended. */
export function appendProspectBatch(
  appenders: ProspectAppenders,
  batch: ProspectBatch,
): { posts: number; contacts: number } {
  const { prospects } = appenders;
  const values = batch.prospects;
  for (let i = 0; i < values.length; i += PROSPECT_COLUMNS) {
    for (let c = 0; c < PROSPECT_COLUMNS; c += 1) {
      const value = values[i + c];
      if (value === null || value === undefined) {
        prospects.appendNull();
        continue;
      }
      switch (KINDS[c]) {
        case 'INTEGER':
          prospects.appendInteger(value as number);
          break;
        case 'SMALLINT':
          prospects.appendSmallInt(value as number);
          break;
        case 'UTINYINT':
          prospects.appendUTinyInt(value as number);
          break;
        default:
          prospects.appendVarchar(value as string);
      }
    }
    prospects.endRow();
  }
  return {
    posts: appendKeyedJson(appenders.posts, batch.posts),
    contacts: appendKeyedJson(appenders.contacts, batch.contacts),
  };
}
