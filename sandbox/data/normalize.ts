// Normal forms shared by the generator (what it stores) and the matcher (what it compares): company
// names without legal forms or punctuation, bare domains from any URL spelling, network profile slugs,
// title words, and the hashes that stand in for email addresses and phone numbers.
import { createHash } from 'node:crypto';
import { LEGAL_FORM_TOKENS } from './industries.js';

/** Host name of the professional network in generated profile addresses (never a real site). */
export const NETWORK_HOST = 'network.example';

const LEGAL_FORMS = new Set(LEGAL_FORM_TOKENS);

/** Lower case, accents removed, `&` spelled out, everything but letters and digits turned into spaces. */
export function foldText(text: string): string {
  // Accent folding is the slow part; most text is plain ASCII and skips it.
  const plain = /^[\x20-\x7e]*$/.test(text) ? text : text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  return plain
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** Company name for comparison: folded, legal forms and "the" dropped ("The Velora Group, Inc." → "velora"). */
export function normalizeCompanyName(name: string): string {
  // "S.A." and "B.V." fold to single letters; glue dotted abbreviations first so they are recognised.
  const glued = name.replace(/\b([A-Za-z])\.(?=[A-Za-z]\.)/g, '$1').replace(/\b([A-Za-z])\.(\s|$)/g, '$1$2');
  const words = foldText(glued)
    .split(' ')
    .filter((word) => word.length > 0);
  const kept = words.filter((word) => !LEGAL_FORMS.has(word));
  return (kept.length > 0 ? kept : words).join(' ');
}

/** A person's name for comparison: folded, with no spaces at all ("Anna van Dijk" → "annavandijk"). */
export function normalizePersonName(name: string): string {
  return foldText(name).replace(/ /g, '');
}

/**
 * The bare host of a domain or URL as people write it: scheme, credentials, port, path, query and a
 * leading `www.` removed, lower case. Null when nothing host-like remains.
 */
export function normalizeDomain(input: string): string | null {
  let text = input.trim().toLowerCase();
  if (text.length === 0) return null;
  text = text.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/^\/\//, '');
  text = text.replace(/^[^/@]*@/, '');
  text = text.split(/[/?#\s]/)[0] ?? '';
  text = text.replace(/:\d*$/, '').replace(/\.$/, '');
  text = text.replace(/^www\d?\./, '');
  if (!/^[a-z0-9\u00a1-\uffff-]+(\.[a-z0-9\u00a1-\uffff-]+)+$/.test(text)) return null;
  return text;
}

/** Slug of a network company or profile address (`https://www.network.example/company/velora/` → `velora`). */
export function networkSlug(input: string, kind: 'company' | 'in'): string | null {
  const text = input.trim().toLowerCase();
  const match = new RegExp(`(?:^|[/.])${NETWORK_HOST.replace('.', '\\.')}/${kind}/([^/?#\\s]+)`).exec(text);
  if (!match?.[1]) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return match[1];
  }
}

export function companyNetworkUrl(slug: string): string {
  return `${NETWORK_HOST}/company/${slug}`;
}

export function profileNetworkUrl(slug: string): string {
  return `${NETWORK_HOST}/in/${slug}`;
}

/** Lower-case words of a job title, as the `job_title` filter compares them. */
export function titleWords(title: string): string[] {
  return foldText(title)
    .split(' ')
    .filter((word) => word.length > 0);
}

/** ` word word ` with guard spaces, so that `contains(x, ' word ')` matches whole words only. */
export function titleSearchText(title: string): string {
  return ` ${titleWords(title).join(' ')} `;
}

/** How the service stores an email address: SHA-256 hex of the trimmed, lower-case address. */
export function hashEmail(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

/** How the service stores a phone number: SHA-256 hex of its digits (the `+` and separators dropped). */
export function hashPhone(phone: string): string | null {
  const digits = phone.replace(/\D+/g, '');
  if (digits.length < 6) return null;
  return createHash('sha256').update(digits).digest('hex');
}

/** ` a | b ` membership text for a set of values, so `contains(x, '|v|')` tests membership. */
export function memberText(values: readonly string[]): string {
  return `|${values.map((value) => value.toLowerCase()).join('|')}|`;
}
