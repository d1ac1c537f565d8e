// Generates the prospects of a seed: people employed by the generated businesses, with names, a job
// title from the title catalogue (and so a department, level and title family), experience, where they
// live, a hashed work email and phone when they have them, their contact information (on reserved
// domains and fictional numbers only, see contacts.ts), and their network profile.
import { JOB_DEPARTMENTS, type JobDepartment, type JobLevel } from '../../contract/enums.js';
import { pickEmployer, type BusinessRow } from './businesses.js';
import {
  INTERESTS,
  FIRST_NAMES,
  LAST_NAMES,
  SKILLS_BY_DEPARTMENT,
  TITLES,
  type TitleEntry,
} from './people.js';
import { COUNTRIES, regionIdOf, regionIsoCode, type City, type Country, type Region } from './places.js';
import {
  contactsRecord,
  fictionalPhone,
  hasFictionalPhones,
  PERSONAL_MAIL_DOMAINS,
  workMailDomain,
} from './contacts.js';
import { foldText, hashEmail, hashPhone, profileNetworkUrl } from './normalize.js';
import { entityId, streamFor, type SeedKey, type SeededRandom } from './random.js';
import { prospectPostsRecord } from './records.js';

export interface ProspectRow {
  pix: number;
  prospectId: string;
  bix: number;
  businessId: string;
  fullNameNorm: string;
  /** The addresses and number behind the hashes, also in the contacts record; kept for samples and tests. */
  email: string | null;
  personalEmail: string | null;
  /** E.164, from a fictional range. */
  phone: string | null;
  emailHash: string | null;
  personalEmailHash: string | null;
  phoneHash: string | null;
  networkSlug: string;
  title: TitleEntry;
  levels: JobLevel[];
  departments: JobDepartment[];
  countryCode: string;
  regionIso: string;
  /** Position in REGION_LIST of where the prospect lives. */
  regionId: number;
  totalExperienceMonths: number;
  currentRoleMonths: number;
  /** The record of mode `full`, serialised (spec 2.4 field order). */
  recordJson: string;
  /** The posts record, serialised, or null when the prospect has no posts. */
  postsJson: string | null;
  /** The contacts record, serialised, or null when the prospect has no email and no phone. */
  contactsJson: string | null;
}

const TITLES_BY_DEPARTMENT = new Map<JobDepartment, TitleEntry[]>();
const TITLES_BY_FAMILY = new Map<string, TitleEntry[]>();
for (const entry of TITLES) {
  TITLES_BY_DEPARTMENT.set(entry.department, [...(TITLES_BY_DEPARTMENT.get(entry.department) ?? []), entry]);
  TITLES_BY_FAMILY.set(entry.family, [...(TITLES_BY_FAMILY.get(entry.family) ?? []), entry]);
}
/** Other titles of each title's family: earlier roles in a career. */
const FAMILY_PEERS = new Map<TitleEntry, TitleEntry[]>(
  TITLES.map((title) => [title, (TITLES_BY_FAMILY.get(title.family) ?? []).filter((t) => t !== title)]),
);
const STAFFED_DEPARTMENTS = JOB_DEPARTMENTS.filter((dept) => TITLES_BY_DEPARTMENT.has(dept));
/** How common each department is among people on record, before the employer's industry tilts it. */
const BASE_DEPARTMENT_WEIGHT: Partial<Record<JobDepartment, number>> = {
  engineering: 8,
  sales: 8,
  marketing: 5,
  operations: 5,
  'c-suite': 3,
  finance: 3,
  'human resources': 3,
  support: 3,
  'customer success': 2,
  administration: 3,
  product: 2,
  design: 2,
  data: 2,
  it: 2,
};
const LEADER_LEVELS = new Set<JobLevel>(['c-suite', 'founder', 'owner', 'president']);
const LEADER_TITLES = (TITLES_BY_DEPARTMENT.get('c-suite') ?? []).filter((t) => LEADER_LEVELS.has(t.level));
const LEADER_WEIGHTS = LEADER_TITLES.map((t) => t.weight);
const TITLE_WEIGHTS = new Map<JobDepartment, number[]>(
  [...TITLES_BY_DEPARTMENT].map(([dept, titles]) => [dept, titles.map((t) => t.weight)]),
);
/** Department weights per industry, computed once per industry. */
const departmentWeightsByIndustry = new Map<string, number[]>();

function departmentWeights(employer: BusinessRow): number[] {
  let weights = departmentWeightsByIndustry.get(employer.industry.key);
  if (!weights) {
    weights = STAFFED_DEPARTMENTS.map(
      (dept) =>
        (BASE_DEPARTMENT_WEIGHT[dept] ?? 0.6) * (employer.industry.departments.includes(dept) ? 6 : 1),
    );
    departmentWeightsByIndustry.set(employer.industry.key, weights);
  }
  return weights;
}

function titleFor(r: SeededRandom, employer: BusinessRow): TitleEntry {
  // In small companies a large share of the people on record run them.
  if (employer.sizeRank <= 1 && r.chance(employer.sizeRank === 0 ? 0.35 : 0.15)) {
    return r.weighted(LEADER_TITLES, LEADER_WEIGHTS);
  }
  const department = r.weighted(STAFFED_DEPARTMENTS, departmentWeights(employer));
  return r.weighted(TITLES_BY_DEPARTMENT.get(department) ?? [], TITLE_WEIGHTS.get(department) ?? []);
}

const EXPERIENCE_RANGE: Partial<Record<JobLevel, [number, number]>> = {
  junior: [0, 48],
  'non-managerial': [12, 180],
  'senior non-managerial': [60, 300],
  manager: [48, 300],
  'senior manager': [96, 360],
  director: [120, 400],
  'vice president': [144, 420],
  'c-suite': [144, 480],
};

function experienceMonths(r: SeededRandom, level: JobLevel): number {
  const [low, high] = EXPERIENCE_RANGE[level] ?? [24, 480];
  return r.int(low, high);
}

function homeOf(r: SeededRandom, employer: BusinessRow): { country: Country; region: Region; city: City } {
  const roll = r.next();
  if (roll < 0.8) return { country: employer.country, region: employer.region, city: employer.city };
  const country = roll < 0.95 ? employer.country : r.pick(COUNTRIES);
  const region = r.pick(country.regions);
  return { country, region, city: r.pick(region.cities) };
}

const asciiCache = new Map<string, string>();
/** A name as it appears in email addresses and profile slugs: folded, without spaces or apostrophes. */
function asciiLocal(text: string): string {
  let folded = asciiCache.get(text);
  if (folded === undefined) {
    folded = foldText(text).replace(/ /g, '');
    asciiCache.set(text, folded);
  }
  return folded;
}

export interface ProspectContext {
  key: SeedKey;
  rows: readonly BusinessRow[];
  employerWeights: Float64Array;
  /** Email addresses already given out, so that two people never share one. */
  emails: Set<string>;
  /** Phone numbers already given out (the fictional ranges are small). */
  phones: Set<string>;
}

/** Tries for a free number before the person goes without a phone (a range may be used up). */
const PHONE_TRIES = 8;

export function generateProspect(pix: number, ctx: ProspectContext): ProspectRow {
  const r = streamFor(ctx.key, 'prospect', pix);
  const employer = ctx.rows[pickEmployer(ctx.employerWeights, r.next())] as BusinessRow;
  const prospectId = entityId(ctx.key, 'prospect', pix, 40);
  const first = r.pick(FIRST_NAMES);
  const last = r.pick(LAST_NAMES);
  const fullName = `${first} ${last}`;
  const title = titleFor(r, employer);
  const levels = [title.level, ...(title.alsoLevels ?? [])];
  const departments = [title.department, ...(title.alsoDepartments ?? [])];
  const total = experienceMonths(r, title.level);
  const current = Math.min(total, Math.floor(r.next() ** 1.5 * Math.min(total, 240)) + 1);
  const home = homeOf(r, employer);

  // Contact details draw from their own stream, so they can change without moving the rest.
  const c = streamFor(ctx.key, 'prospect-contacts', pix);
  const unique = (local: string, domain: string) => {
    let candidate = `${local}@${domain}`;
    for (let n = 2; ctx.emails.has(candidate); n += 1) candidate = `${local}${n}@${domain}`;
    ctx.emails.add(candidate);
    return candidate;
  };
  let email: string | null = null;
  if (employer.domain && r.chance(0.72)) {
    const pattern = r.next();
    const local =
      pattern < 0.6
        ? `${asciiLocal(first)}.${asciiLocal(last)}`
        : pattern < 0.85
          ? `${asciiLocal(first).charAt(0)}${asciiLocal(last)}`
          : asciiLocal(first);
    email = unique(local, workMailDomain(employer.domain));
  }
  let phone: ReturnType<typeof fictionalPhone> = null;
  if (r.chance(0.38) && hasFictionalPhones(home.country.code)) {
    for (let i = 0; i < PHONE_TRIES && phone === null; i += 1) {
      const candidate = fictionalPhone(c, home.country.code);
      if (candidate && !ctx.phones.has(candidate.number)) phone = candidate;
    }
    if (phone) ctx.phones.add(phone.number);
  }
  const personalEmail = c.chance(0.3)
    ? unique(
        `${asciiLocal(first)}.${asciiLocal(last)}.${prospectId.slice(0, 4)}`,
        c.pick(PERSONAL_MAIL_DOMAINS),
      )
    : null;
  const slug = `${asciiLocal(first)}-${asciiLocal(last)}-${prospectId.slice(0, 8)}`;
  const network = profileNetworkUrl(slug);
  const previousTitles = r.sample(FAMILY_PEERS.get(title) ?? [], r.int(0, 2)).map((t) => t.title);
  const skills = r.sample(SKILLS_BY_DEPARTMENT[title.department] ?? ['Communication'], r.int(3, 6));
  const emailHash = email ? hashEmail(email) : null;

  const record = {
    prospect_id: prospectId,
    professional_email_hashed: emailHash,
    first_name: first,
    last_name: last,
    full_name: fullName,
    country_name: home.country.name,
    region_name: home.region.name,
    city: home.city.name,
    network,
    experience: [`${title.title} at ${employer.name}`, ...previousTitles],
    skills,
    interests: r.chance(0.5) ? r.sample(INTERESTS, r.int(1, 4)) : null,
    company_name: employer.name,
    company_website: employer.website ?? '',
    company_network: employer.networkUrl,
    job_department: r.chance(0.9) ? title.department : null,
    job_department_array: departments,
    job_department_main: title.department,
    job_seniority_level: levels,
    job_level_array: levels,
    job_level_main: title.level,
    job_title: title.title,
    business_id: employer.businessId,
    network_url_array: r.chance(0.15)
      ? [network, profileNetworkUrl(`${asciiLocal(first)}${asciiLocal(last)}${r.int(10, 99)}`)]
      : [network],
  };
  const posts = prospectPostsRecord(streamFor(ctx.key, 'prospect-posts', pix), fullName, slug);
  const contacts = contactsRecord(c, { workEmail: email, personalEmail, phone });
  return {
    pix,
    prospectId,
    bix: employer.bix,
    businessId: employer.businessId,
    fullNameNorm: `${asciiLocal(first)}${asciiLocal(last)}`,
    email,
    personalEmail,
    phone: phone?.number ?? null,
    emailHash,
    personalEmailHash: personalEmail ? hashEmail(personalEmail) : null,
    phoneHash: phone ? hashPhone(phone.number) : null,
    networkSlug: slug,
    title,
    levels,
    departments,
    countryCode: home.country.code,
    regionIso: regionIsoCode(home.country.code, home.region.code),
    regionId: regionIdOf(home.region),
    totalExperienceMonths: total,
    currentRoleMonths: current,
    recordJson: JSON.stringify(record),
    postsJson: posts ? JSON.stringify(posts) : null,
    contactsJson: contacts ? JSON.stringify(contacts) : null,
  };
}
