// Writes samples/companies.csv: ~300 input companies for the demo, taken from the default seed's
// businesses and written the way people's spreadsheets look (a name with a website, a bare domain, a URL
// with www/https/paths, a network page, odd casing), plus companies that match nothing and a few
// unusable rows. Run: npx tsx sandbox/sample-input.ts [output path]
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_BUSINESSES, DEFAULT_SEED } from './app.js';
import { generateBusinessRows, type BusinessRow } from './data/businesses.js';
import { streamFor, seedKey, type SeededRandom } from './data/random.js';

export const SAMPLE_COLUMNS = ['company', 'website', 'domain', 'network_url', 'country'] as const;
export const SAMPLE_ROWS = 300;
export const SAMPLE_PATH = fileURLToPath(new URL('../samples/companies.csv', import.meta.url));

function csvField(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function randomCase(r: SeededRandom, text: string): string {
  const roll = r.next();
  if (roll < 0.1) return text.toUpperCase();
  if (roll < 0.2) return text.toLowerCase();
  return text;
}

function websiteVariant(r: SeededRandom, domain: string): string {
  const variants = [
    `https://www.${domain}`,
    `http://${domain}`,
    `www.${domain}`,
    `https://${domain}/`,
    `https://www.${domain}/about-us`,
    `https://${domain}/en/contact?ref=list`,
    `${domain}`,
    `HTTPS://WWW.${domain.toUpperCase()}`,
  ];
  return r.pick(variants);
}

const UNKNOWN_STEMS = [
  'Quillmere',
  'Zephyrant',
  'Brambleton',
  'Oxcroft',
  'Umbravale',
  'Kestrowan',
  'Pellucid',
  'Thistlebay',
];
const UNKNOWN_WORDS = ['Analytics', 'Builders', 'Foods', 'Logistics', 'Studio', 'Partners'];

/** The sample rows for a seed: a header and SAMPLE_ROWS data rows, as CSV lines. */
export function sampleInputLines(
  seed: string | number = DEFAULT_SEED,
  businesses: number = DEFAULT_BUSINESSES,
): string[] {
  const rows = generateBusinessRows(seed, businesses);
  const r = streamFor(seedKey(seed), 'sample-input', 0);
  const domains = new Set(rows.flatMap((row) => (row.domain ? [row.domain] : [])));
  const picked = r.sample(rows, SAMPLE_ROWS);
  const lines = [SAMPLE_COLUMNS.join(',')];
  for (let i = 0; i < SAMPLE_ROWS; i += 1) {
    const roll = r.next();
    let fields: [string, string, string, string, string];
    if (roll < 0.05) {
      // A company the service does not know.
      const unknown = () => {
        const name = `${r.pick(UNKNOWN_STEMS)} ${r.pick(UNKNOWN_WORDS)}`;
        return { name, domain: `${name.toLowerCase().replace(/ /g, '')}${r.int(2, 99)}.com` };
      };
      let { name, domain } = unknown();
      while (domains.has(domain)) ({ name, domain } = unknown());
      fields = [name, r.chance(0.5) ? `https://www.${domain}` : '', r.chance(0.5) ? domain : '', '', 'US'];
    } else if (roll < 0.07) {
      // Unusable: blank, or only a country.
      fields = ['', '', '', '', r.chance(0.5) ? '' : 'GB'];
    } else {
      const row = picked[i] as BusinessRow;
      const kind = r.next();
      const country = r.chance(0.7) ? row.country.code : '';
      if (!row.domain || kind < 0.1) {
        fields = [randomCase(r, row.name), '', '', `https://www.${row.networkUrl}`, country];
      } else if (kind < 0.3) {
        fields = ['', '', randomCase(r, row.domain), '', country];
      } else if (kind < 0.6) {
        fields = [randomCase(r, row.name), websiteVariant(r, row.domain), '', '', country];
      } else if (kind < 0.8) {
        fields = [row.name, '', row.domain, r.chance(0.3) ? row.networkUrl : '', country];
      } else {
        fields = ['', websiteVariant(r, row.domain), '', '', country];
      }
    }
    lines.push(fields.map(csvField).join(','));
  }
  return lines;
}

export function writeSampleInput(path: string = SAMPLE_PATH): void {
  writeFileSync(path, `${sampleInputLines().join('\n')}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = process.argv[2] ?? SAMPLE_PATH;
  writeSampleInput(target);
  process.stdout.write(`wrote ${target}\n`);
}
