// Businesses, their hierarchy records and their bulk-dataset records as batches of column values, ready
// for the appenders of `businesses`, `hierarchies` and the twelve `dataset_<name>` tables. Like the
// prospect batches, they come from a worker thread for large worlds and inline for small ones.
import type { DuckDBAppender } from '@duckdb/node-api';
import { BULK_DATASETS, type BulkDataset } from '../../contract/datasets.js';
import { REVENUE_RANGES } from '../../contract/enums.js';
import { industryIdOf } from './industries.js';
import { regionIdOf } from './places.js';
import { generateBusinessRows, techLists, type BusinessRow } from './businesses.js';
import { memberText } from './normalize.js';
import { seedKey } from './random.js';
import { datasetRecord, fetchRecord, hierarchyRecord, type RecordContext } from './records.js';

/** Columns of the `businesses` table, in order. */
export const BUSINESS_TABLE_COLUMNS = [
  ['bix', 'INTEGER'],
  ['business_id', 'VARCHAR'],
  ['name', 'VARCHAR'],
  ['name_norm', 'VARCHAR'],
  ['name_lc', 'VARCHAR'],
  ['domain', 'VARCHAR'],
  ['website', 'VARCHAR'],
  ['has_website', 'BOOLEAN'],
  ['network_slug', 'VARCHAR'],
  ['country_code', 'VARCHAR'],
  ['country_name', 'VARCHAR'],
  ['region_code', 'VARCHAR'],
  ['region_name', 'VARCHAR'],
  ['city', 'VARCHAR'],
  ['city_region_country', 'VARCHAR'],
  ['city_region', 'VARCHAR'],
  ['naics', 'VARCHAR'],
  ['naics_description', 'VARCHAR'],
  ['network_category', 'VARCHAR'],
  ['listing_category', 'VARCHAR'],
  ['size_range', 'VARCHAR'],
  ['revenue_range', 'VARCHAR'],
  ['age_range', 'VARCHAR'],
  ['locations_range', 'VARCHAR'],
  /** Membership texts `|a|b|` (lower case) of technologies, tech categories, keywords, `topic=level`. */
  ['tech', 'VARCHAR'],
  ['tech_categories', 'VARCHAR'],
  ['keywords', 'VARCHAR'],
  ['intent_topics', 'VARCHAR'],
  ['is_public', 'BOOLEAN'],
  ['parent_bix', 'INTEGER'],
  ['root_bix', 'INTEGER'],
  /** Positions in the generator's catalogues (INDUSTRIES, REGION_LIST, the region's cities, the size and
   * revenue enums): the business index the prospect filters use is loaded from these. */
  ['industry_id', 'UTINYINT'],
  ['region_id', 'SMALLINT'],
  ['city_id', 'UTINYINT'],
  ['size_rank', 'UTINYINT'],
  ['revenue_rank', 'UTINYINT'],
  /** The record `POST /v1/businesses` returns in mode full. */
  ['fetch_json', 'VARCHAR'],
] as const;
export const BUSINESS_COLUMNS = BUSINESS_TABLE_COLUMNS.length;
/** Values per record row (hierarchies and datasets): bix, business_id, json. */
export const RECORD_COLUMNS = 3;

type Value = string | number | boolean | null;

export interface BusinessBatch {
  /** Row-major values of `businesses` rows. */
  businesses: Value[];
  /** Row-major values of `hierarchies` rows. */
  hierarchies: (string | number)[];
  /** Row-major values of each dataset table's rows; businesses without a record have none. */
  datasets: Record<BulkDataset, (string | number)[]>;
}

function businessValues(row: BusinessRow): Value[] {
  const { technologies, categories } = techLists(row);
  return [
    row.bix,
    row.businessId,
    row.name,
    row.nameNorm,
    row.name.toLowerCase(),
    row.domain,
    row.website,
    row.website !== null,
    row.networkSlug,
    row.country.code,
    row.country.name,
    row.regionIso,
    row.region.name,
    row.city.name,
    row.cityRegionCountry,
    row.cityRegion,
    row.industry.naics,
    row.industry.naicsDescription,
    row.industry.networkCategory,
    row.industry.listingCategory,
    row.sizeRange,
    row.revenueRange,
    row.ageRange,
    row.locationsRange,
    memberText(technologies),
    memberText(categories),
    memberText(row.keywords),
    memberText(row.intentTopics.map((t) => `${t.topic}=${t.level}`)),
    row.isPublic,
    row.parentBix,
    row.rootBix,
    industryIdOf(row.industry),
    regionIdOf(row.region),
    row.region.cities.indexOf(row.city),
    row.sizeRank,
    REVENUE_RANGES.indexOf(row.revenueRange),
    JSON.stringify(fetchRecord(row)),
  ];
}

/** Yields the businesses [0, count) of a seed with their records, `batchSize` businesses at a time. */
export function* businessBatches(
  seed: string | number,
  count: number,
  batchSize: number,
): Generator<BusinessBatch> {
  const rows = generateBusinessRows(seed, count);
  const context: RecordContext = {
    key: seedKey(seed),
    rows,
    publicBixes: rows.filter((row) => row.isPublic).map((row) => row.bix),
  };
  for (let start = 0; start < count; start += batchSize) {
    const batch: BusinessBatch = {
      businesses: [],
      hierarchies: [],
      datasets: Object.fromEntries(
        BULK_DATASETS.map((dataset) => [dataset, []]),
      ) as unknown as BusinessBatch['datasets'],
    };
    for (const row of rows.slice(start, start + batchSize)) {
      batch.businesses.push(...businessValues(row));
      const hierarchy = hierarchyRecord(row, rows);
      if (hierarchy) batch.hierarchies.push(row.bix, row.businessId, JSON.stringify(hierarchy));
      for (const dataset of BULK_DATASETS) {
        const record = datasetRecord(dataset, row, context);
        if (record) batch.datasets[dataset].push(row.bix, row.businessId, JSON.stringify(record));
      }
    }
    yield batch;
  }
}

export interface BusinessAppenders {
  businesses: DuckDBAppender;
  hierarchies: DuckDBAppender;
  datasets: Record<BulkDataset, DuckDBAppender>;
}

const KINDS = BUSINESS_TABLE_COLUMNS.map(([, kind]) => kind);

function appendRecords(appender: DuckDBAppender, values: readonly (string | number)[]): number {
  for (let i = 0; i < values.length; i += RECORD_COLUMNS) {
    appender.appendInteger(values[i] as number);
    appender.appendVarchar(values[i + 1] as string);
    appender.appendVarchar(values[i + 2] as string);
    appender.endRow();
  }
  return values.length / RECORD_COLUMNS;
}

/** Appends one batch; returns how many rows went to each dataset and to the hierarchies. */
export function appendBusinessBatch(
  appenders: BusinessAppenders,
  batch: BusinessBatch,
): { hierarchies: number; datasets: Record<BulkDataset, number> } {
  const { businesses } = appenders;
  const values = batch.businesses;
  for (let i = 0; i < values.length; i += BUSINESS_COLUMNS) {
    for (let c = 0; c < BUSINESS_COLUMNS; c += 1) {
      const value = values[i + c];
      if (value === null || value === undefined) businesses.appendNull();
      else if (KINDS[c] === 'INTEGER') businesses.appendInteger(value as number);
      else if (KINDS[c] === 'SMALLINT') businesses.appendSmallInt(value as number);
      else if (KINDS[c] === 'UTINYINT') businesses.appendUTinyInt(value as number);
      else if (KINDS[c] === 'BOOLEAN') businesses.appendBoolean(value as boolean);
      else businesses.appendVarchar(value as string);
    }
    businesses.endRow();
  }
  const datasets = Object.fromEntries(
    BULK_DATASETS.map((dataset) => [
      dataset,
      appendRecords(appenders.datasets[dataset], batch.datasets[dataset]),
    ]),
  ) as Record<BulkDataset, number>;
  return { hierarchies: appendRecords(appenders.hierarchies, batch.hierarchies), datasets };
}
