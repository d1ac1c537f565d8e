// Business and prospect matching. Businesses: a domain, URL or network URL anchors the match, and a name
// given with it must resemble the anchored business's name (a name with a wrong domain does not match);
// a name alone matches only when exactly one business carries it. Prospects: email (work or personal),
// phone, network profile, or full name with company name. Results keep the input's length and order.
import type { BusinessMatchInput, ProspectMatchInput } from '../../contract/index.js';
import {
  hashEmail,
  hashPhone,
  networkSlug,
  normalizeCompanyName,
  normalizeDomain,
  normalizePersonName,
  NETWORK_HOST,
} from '../data/normalize.js';
import type { SandboxStore } from '../data/store.js';
import type { BusinessKeyHit, BusinessKeys } from './business-keys.js';
import type { ProspectKeys as ProspectKeyIndex, ProspectMatchKeys } from './prospect-keys.js';
import { anyOf, SqlParams } from './sql.js';

interface InputKeys {
  domains: string[];
  slug: string | null;
  name: string | null;
}

/** `blog.velora.com` → [`blog.velora.com`, `velora.com`]: people often give a subdomain. */
function domainCandidates(host: string): string[] {
  const labels = host.split('.');
  const out: string[] = [];
  for (let i = 0; i + 2 <= labels.length && out.length < 3; i += 1) out.push(labels.slice(i).join('.'));
  return out;
}

function businessKeys(input: BusinessMatchInput): InputKeys {
  const domains: string[] = [];
  let slug = input.network_url ? networkSlug(input.network_url, 'company') : null;
  for (const text of [input.domain, input.url]) {
    if (!text) continue;
    const host = normalizeDomain(text);
    if (!host) continue;
    if (host === NETWORK_HOST || host.endsWith(`.${NETWORK_HOST}`)) {
      slug ??= networkSlug(text, 'company');
      continue;
    }
    domains.push(...domainCandidates(host));
  }
  const name = input.name ? normalizeCompanyName(input.name) : null;
  return { domains: [...new Set(domains)], slug, name: name && name.length > 0 ? name : null };
}

function bigrams(text: string): Set<string> {
  const compact = text.replace(/ /g, '');
  const out = new Set<string>();
  for (let i = 0; i + 2 <= compact.length; i += 1) out.add(compact.slice(i, i + 2));
  return out;
}

/**
 * Whether a given (normalised) name plausibly names a business: equal, one's words contained in the
 * other's, or close in spelling (Dice coefficient of letter pairs ≥ 0.75).
 */
export function namesResemble(given: string, stored: string): boolean {
  if (given === stored) return true;
  const a = given.split(' ');
  const b = new Set(stored.split(' '));
  if (a.every((word) => b.has(word)) || [...b].every((word) => a.includes(word))) return true;
  const x = bigrams(given);
  const y = bigrams(stored);
  if (x.size === 0 || y.size === 0) return false;
  let common = 0;
  for (const pair of x) if (y.has(pair)) common += 1;
  return (2 * common) / (x.size + y.size) >= 0.75;
}

interface BusinessHit {
  businessId: string;
  domain: string | null;
  slug: string;
  nameNorm: string;
}

/** Matching from the in-memory keys: the same rules as the query below, without a table scan. */
function matchFromKeys(
  store: SandboxStore,
  index: BusinessKeys,
  keys: readonly InputKeys[],
): (string | null)[] {
  const idOf = (hit: BusinessKeyHit) => store.businessIds[hit.bix] as string;
  return keys.map((key) => {
    const anchored = key.domains.length > 0 || key.slug !== null;
    if (!anchored) {
      const candidates = key.name ? index.find('name', key.name) : [];
      return candidates.length === 1 ? idOf(candidates[0] as BusinessKeyHit) : null;
    }
    let hit: BusinessKeyHit | undefined;
    for (const domain of key.domains) {
      hit = index.find('domain', domain).at(-1);
      if (hit) break;
    }
    if (!hit && key.slug) hit = index.find('slug', key.slug).at(-1);
    if (!hit) return null;
    if (key.name && !namesResemble(key.name, hit.nameNorm)) return null;
    return idOf(hit);
  });
}

export async function matchBusinesses(
  store: SandboxStore,
  inputs: readonly BusinessMatchInput[],
  index?: BusinessKeys,
): Promise<(string | null)[]> {
  const keys = inputs.map(businessKeys);
  if (index) return matchFromKeys(store, index, keys);
  const domains = [...new Set(keys.flatMap((k) => k.domains))];
  const slugs = [...new Set(keys.flatMap((k) => (k.slug ? [k.slug] : [])))];
  const names = [
    ...new Set(keys.flatMap((k) => (k.name && k.domains.length === 0 && !k.slug ? [k.name] : []))),
  ];
  const params = new SqlParams();
  const where: string[] = [];
  if (domains.length > 0) where.push(`domain IN ${params.list(domains)}`);
  if (slugs.length > 0) where.push(`network_slug IN ${params.list(slugs)}`);
  if (names.length > 0) where.push(`name_norm IN ${params.list(names)}`);
  const rows =
    where.length === 0
      ? []
      : await store.query(
          `SELECT business_id, domain, network_slug, name_norm FROM businesses WHERE ${anyOf(where)} ORDER BY bix`,
          params.values,
        );
  const byDomain = new Map<string, BusinessHit>();
  const bySlug = new Map<string, BusinessHit>();
  const byName = new Map<string, BusinessHit[]>();
  for (const row of rows) {
    const hit: BusinessHit = {
      businessId: String(row.business_id),
      domain: row.domain === null ? null : String(row.domain),
      slug: String(row.network_slug),
      nameNorm: String(row.name_norm),
    };
    if (hit.domain) byDomain.set(hit.domain, hit);
    bySlug.set(hit.slug, hit);
    byName.set(hit.nameNorm, [...(byName.get(hit.nameNorm) ?? []), hit]);
  }
  return keys.map((key) => {
    const anchored = key.domains.length > 0 || key.slug !== null;
    if (!anchored) {
      const candidates = key.name ? (byName.get(key.name) ?? []) : [];
      return candidates.length === 1 ? (candidates[0] as BusinessHit).businessId : null;
    }
    const hit =
      key.domains.map((domain) => byDomain.get(domain)).find((h) => h !== undefined) ??
      (key.slug ? bySlug.get(key.slug) : undefined);
    if (!hit) return null;
    if (key.name && !namesResemble(key.name, hit.nameNorm)) return null;
    return hit.businessId;
  });
}

type ProspectKeys = ProspectMatchKeys;

function prospectKeys(input: ProspectMatchInput): ProspectKeys {
  const fullName = input.full_name ? normalizePersonName(input.full_name) : '';
  const company = input.company_name ? normalizeCompanyName(input.company_name) : '';
  return {
    email: input.email && input.email.includes('@') ? hashEmail(input.email) : null,
    phone: input.phone_number ? hashPhone(input.phone_number) : null,
    slug: input.network ? networkSlug(input.network, 'in') : null,
    fullName: fullName.length > 0 && company.length > 0 ? fullName : null,
    company: company.length > 0 ? company : null,
    businessId: input.business_id ?? null,
  };
}

interface ProspectHit {
  prospectId: string;
  emailHash: string | null;
  personalEmailHash: string | null;
  phoneHash: string | null;
  slug: string;
  fullName: string;
  businessId: string;
  companyNorm: string;
}

/**
 * Prospect ids of the inputs, null where none matched. With `index` (the keys in memory) the answer is
 * made there by the same rules; without it, by a query.
 */
export async function matchProspects(
  store: SandboxStore,
  inputs: readonly ProspectMatchInput[],
  index?: ProspectKeyIndex,
): Promise<(string | null)[]> {
  const keys = inputs.map(prospectKeys);
  if (index) return keys.map((key) => index.match(key, namesResemble));
  const params = new SqlParams();
  const where: string[] = [];
  const collect = (pick: (k: ProspectKeys) => string | null) => [
    ...new Set(keys.flatMap((k) => (pick(k) ? [pick(k) as string] : []))),
  ];
  const emails = collect((k) => k.email);
  const phones = collect((k) => k.phone);
  const slugs = collect((k) => k.slug);
  const fullNames = collect((k) => k.fullName);
  if (emails.length > 0) {
    const list = params.list(emails);
    where.push(`p.email_hash IN ${list}`, `p.personal_email_hash IN ${list}`);
  }
  if (phones.length > 0) where.push(`p.phone_hash IN ${params.list(phones)}`);
  if (slugs.length > 0) where.push(`p.network_slug IN ${params.list(slugs)}`);
  if (fullNames.length > 0) where.push(`p.full_name_norm IN ${params.list(fullNames)}`);
  const rows =
    where.length === 0
      ? []
      : await store.query(
          `SELECT p.prospect_id, p.email_hash, p.personal_email_hash, p.phone_hash, p.network_slug, p.full_name_norm, b.business_id, b.name_norm
           FROM prospects p JOIN businesses b ON b.bix = p.bix WHERE ${anyOf(where)} ORDER BY p.pix`,
          params.values,
        );
  const hits: ProspectHit[] = rows.map((row) => ({
    prospectId: String(row.prospect_id),
    emailHash: row.email_hash === null ? null : String(row.email_hash),
    personalEmailHash: row.personal_email_hash === null ? null : String(row.personal_email_hash),
    phoneHash: row.phone_hash === null ? null : String(row.phone_hash),
    slug: String(row.network_slug),
    fullName: String(row.full_name_norm),
    businessId: String(row.business_id),
    companyNorm: String(row.name_norm),
  }));
  return keys.map((key) => {
    const employerOk = (hit: ProspectHit) => key.businessId === null || hit.businessId === key.businessId;
    const found =
      (key.email
        ? hits.find((h) => (h.emailHash === key.email || h.personalEmailHash === key.email) && employerOk(h))
        : undefined) ??
      (key.phone ? hits.find((h) => h.phoneHash === key.phone && employerOk(h)) : undefined) ??
      (key.slug ? hits.find((h) => h.slug === key.slug && employerOk(h)) : undefined) ??
      (key.fullName && key.company
        ? hits.find(
            (h) =>
              h.fullName === key.fullName &&
              employerOk(h) &&
              namesResemble(key.company as string, h.companyNorm),
          )
        : undefined);
    return found?.prospectId ?? null;
  });
}
