// Writes samples/people.csv: ~300 people for the demo, taken from the default seed's prospects and
// written the way a CRM export looks (Full Name, Company, Work Email, Phone, LinkedIn URL): a work or
// personal email in odd casing, a phone number with separators, a profile address with scheme and
// `www.`, a name with the employer's name, and the same person twice in other spellings; plus people the
// service does not know (on reserved example domains, numbers out of service and unused profile
// addresses) and a few unusable rows. Every address and number is the sandbox's own fiction (see
// data/contacts.ts). Run: npx tsx sandbox/sample-people.ts [output path]
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_BUSINESSES, DEFAULT_PROSPECTS, DEFAULT_SEED } from './app.js';
import { employerWeights, generateBusinessRows, type BusinessRow } from './data/businesses.js';
import { normalizeCompanyName, normalizePersonName } from './data/normalize.js';
import { generateProspect, type ProspectContext, type ProspectRow } from './data/prospects.js';
import { seedKey, streamFor, type SeededRandom } from './data/random.js';

export const SAMPLE_PEOPLE_COLUMNS = ['Full Name', 'Company', 'Work Email', 'Phone', 'LinkedIn URL'] as const;
export const SAMPLE_PEOPLE_ROWS = 300;
export const SAMPLE_PEOPLE_PATH = fileURLToPath(new URL('../samples/people.csv', import.meta.url));

/** What each row is, for tests and the demo's expectations: a known person, an unknown one, unusable. */
export type SamplePersonKind = 'known' | 'unknown' | 'unusable';

export interface SamplePeople {
  /** The header and SAMPLE_PEOPLE_ROWS data rows, as CSV lines. */
  lines: string[];
  /** Per data row (row 1 first): its kind and, for a known person, the prospect id it names. */
  rows: { kind: SamplePersonKind; prospectId: string | null }[];
}

type Fields = [string, string, string, string, string];

function csvField(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** A phone number as people type it: `+1 (212) 555-0142`, `001 212 555 0142`, `+44 7700 900123`. */
function phoneVariant(r: SeededRandom, e164: string): string {
  const digits = e164.slice(1);
  if (digits.startsWith('1')) {
    const [area, exchange, line] = [digits.slice(1, 4), digits.slice(4, 7), digits.slice(7)];
    return r.pick([
      `+1 (${area}) ${exchange}-${line}`,
      `+1 ${area} ${exchange} ${line}`,
      `001 ${area}-${exchange}-${line}`,
      `+1.${area}.${exchange}.${line}`,
      e164,
    ]);
  }
  const national = digits.slice(2);
  return r.pick([`+44 ${national.slice(0, 4)} ${national.slice(4)}`, `0044 ${national}`, e164]);
}

function emailVariant(r: SeededRandom, email: string): string {
  const roll = r.next();
  if (roll < 0.15) return email.toUpperCase();
  if (roll < 0.3) {
    const [local, domain] = email.split('@') as [string, string];
    return `${local.charAt(0).toUpperCase()}${local.slice(1)}@${domain}`;
  }
  if (roll < 0.4) return ` ${email} `;
  return email;
}

function profileVariant(r: SeededRandom, network: string): string {
  return r.pick([`https://www.${network}`, `https://${network}/`, `http://www.${network}/?trk=crm`, network]);
}

/** The employer's name as a salesperson writes it: as registered, without legal form, or in lower case. */
function companyVariant(r: SeededRandom, employer: BusinessRow): string {
  const roll = r.next();
  if (roll < 0.2) return employer.name.toLowerCase();
  if (roll < 0.35) return employer.name.toUpperCase();
  return employer.name;
}

interface Known {
  prospect: ProspectRow;
  employer: BusinessRow;
  fullName: string;
}

const UNKNOWN_FIRST = ['Zebediah', 'Ottoline', 'Peregrine', 'Wilhelmina', 'Thaddeus', 'Clementine'];
const UNKNOWN_LAST = ['Quillfeather', 'Brambleworth', 'Nettlecombe', 'Ashgrove', 'Fernsby', 'Marchbank'];
const UNKNOWN_COMPANIES = [
  'Nonexistent Holdings',
  'Quillmere Analytics',
  'Zephyrant Foods',
  'Pellucid Studio',
];

/** The sample for a seed; the world's own prospects are generated in order, as the sandbox does. */
export function samplePeople(
  seed: string | number = DEFAULT_SEED,
  businesses: number = DEFAULT_BUSINESSES,
  prospects: number = DEFAULT_PROSPECTS,
): SamplePeople {
  const employers = generateBusinessRows(seed, businesses, true);
  const context: ProspectContext = {
    key: seedKey(seed),
    rows: employers,
    employerWeights: employerWeights(employers),
    emails: new Set(),
    phones: new Set(),
  };
  // The whole world, to keep unknown people unknown and names with companies unambiguous.
  const world: ProspectRow[] = [];
  for (let pix = 0; pix < prospects; pix += 1) world.push(generateProspect(pix, context));
  const nameCompany = new Map<string, number>();
  const keyOf = (p: ProspectRow) =>
    `${p.fullNameNorm}|${normalizeCompanyName((employers[p.bix] as BusinessRow).name)}`;
  for (const p of world) nameCompany.set(keyOf(p), (nameCompany.get(keyOf(p)) ?? 0) + 1);
  const fullNameOf = (p: ProspectRow) => (JSON.parse(p.recordJson) as { full_name: string }).full_name;
  const known: Known[] = world
    .slice(0, 400)
    .filter((p) => nameCompany.get(keyOf(p)) === 1)
    .map((p) => ({ prospect: p, employer: employers[p.bix] as BusinessRow, fullName: fullNameOf(p) }));

  const r = streamFor(seedKey(seed), 'sample-people', 0);
  const rows: SamplePeople['rows'] = [];
  const lines = [SAMPLE_PEOPLE_COLUMNS.map(csvField).join(',')];
  const add = (fields: Fields, kind: SamplePersonKind, prospectId: string | null = null) => {
    lines.push(fields.map(csvField).join(','));
    rows.push({ kind, prospectId });
  };

  const emails = new Set(world.flatMap((p) => [p.email, p.personalEmail].filter((e) => e !== null)));
  const phones = new Set(world.flatMap((p) => (p.phone ? [p.phone] : [])));
  const unknownPerson = (): Fields => {
    const first = r.pick(UNKNOWN_FIRST);
    const last = r.pick(UNKNOWN_LAST);
    const company = r.pick(UNKNOWN_COMPANIES);
    const kind = r.next();
    if (kind < 0.4) {
      let email = `${first}.${last}@${normalizeCompanyName(company).replace(/ /g, '')}.com.example`;
      if (emails.has(email.toLowerCase())) email = `x.${email}`;
      return [`${first} ${last}`, company, email, '', ''];
    }
    if (kind < 0.6) {
      let phone = `+1202555${String(r.int(100, 199)).padStart(4, '0')}`;
      while (phones.has(phone)) phone = `+1${r.int(2, 9)}${r.int(0, 8)}${r.int(0, 9)}55501${r.int(10, 99)}`;
      return ['', '', '', phoneVariant(r, phone), ''];
    }
    if (kind < 0.8) {
      const slug = `${normalizePersonName(first)}-${normalizePersonName(last)}-${r.int(1000, 9999)}`;
      return ['', '', '', '', `https://www.network.example/in/${slug}`];
    }
    return [`${first} ${last}`, company, '', '', ''];
  };
  const unusable: Fields[] = [
    ['', 'Nonexistent Holdings', '', '', ''], // a company name alone identifies nobody
    ['', '', '', '', ''],
    ['Ottoline Ashgrove', '', '', '', ''], // a name without its company
    ['', '', 'ottoline.ashgrove(at)example.com', '', ''],
    ['', '', 'peregrine.fernsby@', '', ''],
    ['', '', '', '555-01', ''],
    ['', '', '', 'call the switchboard', ''],
    ['', '', '', '', 'not a profile'],
    ['', 'Quillmere Analytics', '', '', ''],
    ['', '', '', '', ''],
  ];
  const unusableAt = new Set(r.sample([...Array(SAMPLE_PEOPLE_ROWS).keys()], unusable.length));
  let next = 0;
  for (let i = 0; i < SAMPLE_PEOPLE_ROWS; i += 1) {
    if (unusableAt.has(i)) {
      add(unusable.shift() as Fields, 'unusable');
      continue;
    }
    const roll = r.next();
    if (roll < 0.06 || next >= known.length) {
      add(unknownPerson(), 'unknown');
      continue;
    }
    // A person seen before, spelled another way (the export has duplicates): ~5%.
    const repeat = roll < 0.11 && next > 10;
    const person = repeat ? (known[r.int(0, next - 1)] as Known) : (known[next++] as Known);
    const p = person.prospect;
    const company = companyVariant(r, person.employer);
    const kind = r.next();
    let fields: Fields;
    if (p.email && kind < 0.5) {
      // Work email, usually with the name and company a CRM holds too.
      fields = r.chance(0.6)
        ? [person.fullName, company, emailVariant(r, p.email), '', '']
        : ['', '', emailVariant(r, p.email), '', ''];
    } else if (p.personalEmail && kind < 0.55) {
      fields = [person.fullName, '', emailVariant(r, p.personalEmail), '', ''];
    } else if (p.phone && kind < 0.75) {
      fields = ['', r.chance(0.5) ? company : '', '', phoneVariant(r, p.phone), ''];
    } else if (kind < 0.87) {
      fields = [
        r.chance(0.5) ? person.fullName : '',
        '',
        '',
        '',
        profileVariant(r, `network.example/in/${p.networkSlug}`),
      ];
    } else {
      fields = [r.chance(0.2) ? person.fullName.toUpperCase() : person.fullName, company, '', '', ''];
    }
    add(fields, 'known', p.prospectId);
  }
  return { lines, rows };
}

export function writeSamplePeople(path: string = SAMPLE_PEOPLE_PATH): void {
  writeFileSync(path, `${samplePeople().lines.join('\n')}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = process.argv[2] ?? SAMPLE_PEOPLE_PATH;
  writeSamplePeople(target);
  process.stdout.write(`wrote ${target}\n`);
}
