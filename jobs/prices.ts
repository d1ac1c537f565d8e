// The price table a dry run estimates credits with: credits per returned record, per dataset, and per
// matched key for the match step. The service bills only returned records (errors and empty results
// are not billed), so a price applies to what comes back, never to a call. Neither the spec nor the
// provider's documentation gives a price for the prospect operations (prospect match, profiles,
// contacts_information), so they have none unless a price file names them (or gives a `default`): a
// dry run says they are unpriced rather than guess.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { isPeopleDataset, type EnrichDataset } from '../pipeline/run-types.js';
import { ENRICH_DATASETS } from './job-spec.js';

/** Thrown when a price file cannot be read or holds a wrong entry; the message names the entry. */
export class PriceTableError extends Error {
  override readonly name = 'PriceTableError';
  readonly code = 'PRICE_TABLE_INVALID';
}

export interface PriceTable {
  /** Credits per matched key (a match result carrying a business id). */
  match: number;
  /** Credits per matched key of a people list (`prospect_match`); null: no price is known. */
  prospectMatch: number | null;
  /** Credits per returned record, per dataset; null: no price is known (prospect datasets by default). */
  datasets: Record<EnrichDataset, number | null>;
  /** Where the prices came from: `built-in defaults` or the file. */
  source: string;
}

/** Every company dataset 1 credit per record, matching free; the prospect operations unpriced. */
export const DEFAULT_RECORD_PRICE = 1;
export const DEFAULT_MATCH_PRICE = 0;
const NON_DATASET_KEYS = ['match', 'prospect_match', 'default'];

export function defaultPriceTable(): PriceTable {
  return {
    match: DEFAULT_MATCH_PRICE,
    prospectMatch: null,
    datasets: Object.fromEntries(
      ENRICH_DATASETS.map((d) => [d, isPeopleDataset(d) ? null : DEFAULT_RECORD_PRICE]),
    ) as Record<EnrichDataset, number | null>,
    source: 'built-in defaults',
  };
}

/**
 * Builds a price table from a parsed file: a mapping whose keys are dataset names, `match`,
 * `prospect_match`, or `default` (the price of every dataset not listed), and whose values are
 * credits ≥ 0. Without a `default`, unlisted company datasets cost 1 and unlisted prospect datasets
 * stay unpriced; `prospect_match` is unpriced unless given.
 * ```yaml
 * default: 1
 * match: 0
 * company_hierarchies: 3
 * prospect_match: 0
 * ```
 */
export function parsePriceTable(value: unknown, source: string): PriceTable {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new PriceTableError(
      `${source}: a price table must be a mapping of dataset names (or "match", "default") to credits, e.g. {"firmographics": 2, "match": 0}`,
    );
  }
  const problems: string[] = [];
  const prices = new Map<string, number>();
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    if (!NON_DATASET_KEYS.includes(key) && !(ENRICH_DATASETS as readonly string[]).includes(key)) {
      problems.push(
        `${key}: not a dataset; expected "match", "prospect_match", "default" or one of ${ENRICH_DATASETS.join(', ')}`,
      );
      continue;
    }
    if (typeof raw !== 'number' || !Number.isFinite(raw) || raw < 0) {
      problems.push(`${key}: expected a number of credits ≥ 0, got ${JSON.stringify(raw) ?? String(raw)}`);
      continue;
    }
    prices.set(key, raw);
  }
  if (problems.length > 0) {
    throw new PriceTableError(
      `${source} is not a valid price table:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  }
  const fallback = prices.get('default');
  return {
    match: prices.get('match') ?? DEFAULT_MATCH_PRICE,
    prospectMatch: prices.get('prospect_match') ?? null,
    datasets: Object.fromEntries(
      ENRICH_DATASETS.map((d) => [
        d,
        prices.get(d) ?? fallback ?? (isPeopleDataset(d) ? null : DEFAULT_RECORD_PRICE),
      ]),
    ) as Record<EnrichDataset, number | null>,
    source,
  };
}

/** Reads a price table from a YAML or JSON file (`.json` is read as JSON, anything else as YAML). */
export function readPriceTableFile(file: string): PriceTable {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new PriceTableError(`${file}: cannot read the price table (${(error as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new PriceTableError(
      `${file}: not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`,
    );
  }
  return parsePriceTable(parsed, file);
}
