// A deterministic firmographics-like table for the Parquet benchmarks: strings, ints, doubles, a
// boolean, a UTC timestamp, a LIST of strings, a STRUCT and a LIST of STRUCTs, with ~30 % nulls.
import type { ParquetSchema } from './parquet/schema.js';

export const FIRMOGRAPHICS_SCHEMA: ParquetSchema = [
  { name: 'business_id', type: 'string' },
  { name: 'name', type: 'string' },
  { name: 'domain', type: 'string' },
  { name: 'website', type: 'string' },
  { name: 'description', type: 'string' },
  { name: 'industry', type: 'string' },
  { name: 'country_code', type: 'string' },
  { name: 'employees', type: 'int32' },
  { name: 'founded_year', type: 'int32' },
  { name: 'revenue_usd', type: 'int64' },
  { name: 'growth_rate', type: 'double' },
  { name: 'rating', type: 'double' },
  { name: 'is_public', type: 'boolean' },
  { name: 'updated_at', type: 'timestamptz' },
  { name: 'naics_codes', type: { list: 'string' } },
  {
    name: 'headquarters',
    type: {
      struct: [
        { name: 'city', type: 'string' },
        { name: 'region', type: 'string' },
        { name: 'country', type: 'string' },
        { name: 'postal_code', type: 'string' },
      ],
    },
  },
  {
    name: 'offices',
    type: {
      list: {
        struct: [
          { name: 'city', type: 'string' },
          { name: 'employees', type: 'int32' },
        ],
      },
    },
  },
];

export interface FirmographicsRow {
  business_id: string;
  name: string | null;
  domain: string | null;
  website: string | null;
  description: string | null;
  industry: string | null;
  country_code: string | null;
  employees: number | null;
  founded_year: number | null;
  revenue_usd: number | null;
  growth_rate: number | null;
  rating: number | null;
  is_public: boolean | null;
  updated_at: Date | null;
  naics_codes: string[] | null;
  headquarters: {
    city: string | null;
    region: string | null;
    country: string | null;
    postal_code: string | null;
  } | null;
  offices: { city: string | null; employees: number | null }[] | null;
}

/** A small, fast PRNG (mulberry32) so every writer sees the same rows. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'cloud',
  'data',
  'systems',
  'labs',
  'global',
  'health',
  'energy',
  'capital',
  'logistics',
  'foods',
  'software',
  'analytics',
  'robotics',
  'media',
  'retail',
];
const INDUSTRIES = [
  'Software',
  'Healthcare',
  'Manufacturing',
  'Retail',
  'Finance',
  'Energy',
  'Logistics',
  'Media',
];
const CITIES = [
  'Paris',
  'Berlin',
  'Austin',
  'Toronto',
  'Lyon',
  'Madrid',
  'Osaka',
  'Denver',
  'Leeds',
  'Porto',
];
const COUNTRIES = ['FR', 'DE', 'US', 'CA', 'ES', 'JP', 'GB', 'PT'];

/** Rows `from`..`from + count - 1` of the table. */
export function firmographicsBatch(from: number, count: number): FirmographicsRow[] {
  const random = prng(from + 1);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const maybe = <T>(value: T): T | null => (random() < 0.3 ? null : value);
  const rows: FirmographicsRow[] = new Array<FirmographicsRow>(count);
  for (let k = 0; k < count; k++) {
    const i = from + k;
    const word = pick(WORDS);
    const domain = `${word}${i}.example.com`;
    const naics = Math.floor(random() * 5);
    const offices = Math.floor(random() * 4);
    rows[k] = {
      business_id: `biz_${i.toString(36).padStart(8, '0')}`,
      name: maybe(`${word[0]!.toUpperCase()}${word.slice(1)} ${pick(WORDS)} ${i}`),
      domain: maybe(domain),
      website: maybe(`https://www.${domain}/`),
      description: maybe(
        `${pick(INDUSTRIES)} company offering ${pick(WORDS)} and ${pick(WORDS)} services to ${pick(WORDS)} customers in ${pick(CITIES)} since ${1950 + (i % 70)}.`,
      ),
      industry: maybe(pick(INDUSTRIES)),
      country_code: maybe(pick(COUNTRIES)),
      employees: maybe(Math.floor(random() * 50_000)),
      founded_year: maybe(1900 + Math.floor(random() * 125)),
      revenue_usd: maybe(Math.floor(random() * 5e12)),
      growth_rate: maybe(Math.round((random() - 0.3) * 1e6) / 1e6),
      rating: maybe(Math.round(random() * 50) / 10),
      is_public: maybe(random() < 0.2),
      updated_at: maybe(new Date(Date.UTC(2024, 0, 1) + Math.floor(random() * 3e10))),
      naics_codes: maybe(Array.from({ length: naics }, () => String(100000 + Math.floor(random() * 900000)))),
      headquarters: maybe({
        city: maybe(pick(CITIES)),
        region: maybe(`R${Math.floor(random() * 50)}`),
        country: pick(COUNTRIES),
        postal_code: maybe(String(10000 + Math.floor(random() * 89999))),
      }),
      offices: maybe(
        Array.from({ length: offices }, () => ({
          city: pick(CITIES),
          employees: maybe(Math.floor(random() * 500)),
        })),
      ),
    };
  }
  return rows;
}

/** One SQL row summarising a table's values, to compare files written by different writers. */
export const FINGERPRINT_SQL = `SELECT
  count(*) AS row_count,
  count(name) AS names,
  sum(length(description)) AS description_chars,
  sum(employees) AS employees,
  sum(revenue_usd) AS revenue,
  round(sum(growth_rate), 3) AS growth,
  count_if(is_public) AS public,
  max(epoch_ms(updated_at)) AS max_updated_ms,
  sum(len(naics_codes)) AS naics,
  count(headquarters.city) AS hq_cities,
  sum(len(offices)) AS offices,
  sum((SELECT sum(o.employees) FROM unnest(offices) AS u(o))) AS office_employees
FROM read_parquet($file)`;
