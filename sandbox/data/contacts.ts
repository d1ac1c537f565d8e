// Contact information of prospects (the provider's `contacts_information` dataset). Every address and
// number is unreachable by construction: work mail goes to the employer's domain under the reserved
// `.example` top-level domain, personal mail to example.com/.net/.org (RFC 2606), and phone numbers
// come only from ranges regulators keep out of service for fiction: NANP 555-0100 to 555-0199 (United
// States, Canada) and Ofcom's drama numbers (United Kingdom). People living elsewhere get no phone.
import type { SeededRandom } from './random.js';

/** The reserved domain of an employer's work mail: `velora.com` → `velora.com.example`. */
export function workMailDomain(employerDomain: string): string {
  return `${employerDomain}.example`;
}

export const PERSONAL_MAIL_DOMAINS = ['example.com', 'example.net', 'example.org'] as const;

export interface FictionalPhone {
  /** E.164, no separators: `+12125550142`. */
  number: string;
  mobile: boolean;
}

/** Ofcom's drama ranges used here: a prefix (E.164 without the last three digits) and whether mobile. */
const UK_DRAMA_RANGES: readonly { prefix: string; mobile: boolean }[] = [
  { prefix: '+447700900', mobile: true }, // 07700 900000–900999
  { prefix: '+442079460', mobile: false }, // 020 7946 0000–0999 (London)
  { prefix: '+441632960', mobile: false }, // 01632 960000–960999 (no real area)
];

/** Whether the country (ISO code) has a fictional range here. */
export function hasFictionalPhones(countryCode: string): boolean {
  return countryCode === 'US' || countryCode === 'CA' || countryCode === 'GB';
}

/** A number from the fictional ranges of the country, or null when it has none. */
export function fictionalPhone(r: SeededRandom, countryCode: string): FictionalPhone | null {
  if (countryCode === 'US' || countryCode === 'CA') {
    // Any NANP area code (NXX, not N11) followed by 555-01XX.
    const area = `${r.int(2, 9)}${r.int(0, 8)}${r.int(0, 9)}`;
    const line = String(r.int(0, 99)).padStart(2, '0');
    if (area.endsWith('11')) return null;
    return { number: `+1${area}55501${line}`, mobile: r.chance(0.6) };
  }
  if (countryCode === 'GB') {
    const range = r.pick(UK_DRAMA_RANGES);
    return { number: `${range.prefix}${String(r.int(0, 999)).padStart(3, '0')}`, mobile: range.mobile };
  }
  return null;
}

/** Whether a number lies in one of the fictional ranges above (for tests and checks). */
export function isFictionalPhone(number: string): boolean {
  if (/^\+1[2-9][0-8]\d55501\d\d$/.test(number)) return true;
  return UK_DRAMA_RANGES.some((range) => new RegExp(`^\\${range.prefix}\\d{3}$`).test(number));
}

/** Whether an email address is on a reserved example domain. */
export function isReservedMailAddress(address: string): boolean {
  const domain = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
  return domain.endsWith('.example') || (PERSONAL_MAIL_DOMAINS as readonly string[]).includes(domain);
}

export type EmailStatus = 'valid' | 'catch-all' | 'invalid';

export interface ContactsInput {
  workEmail: string | null;
  personalEmail: string | null;
  phone: FictionalPhone | null;
}

/**
 * The contacts record of a prospect, or null when there is nothing to say (no email, no phone). Field
 * names are the provider's (`professions_email` included).
 */
export function contactsRecord(r: SeededRandom, input: ContactsInput): Record<string, unknown> | null {
  const { workEmail, personalEmail, phone } = input;
  if (!workEmail && !personalEmail && !phone) return null;
  const roll = r.next();
  const status: EmailStatus = roll < 0.82 ? 'valid' : roll < 0.96 ? 'catch-all' : 'invalid';
  const emails: { address: string; type: string }[] = [];
  if (workEmail) emails.push({ address: workEmail, type: 'professional' });
  if (personalEmail) emails.push({ address: personalEmail, type: 'personal' });
  return {
    emails,
    professions_email: workEmail,
    professional_email_status: workEmail ? status : null,
    phone_numbers: phone ? [{ phone_number: phone.number }] : [],
    mobile_phone: phone?.mobile ? phone.number : null,
  };
}
