// The match key of one row of a people list: its email, phone, profile address, or full name with its
// company, each normalised as the service compares it, or the reason the row cannot be matched. Reject
// reasons name the field, never its value: emails, phones and names are personal data, and a reason
// travels further than the output's tables (the record column keeps the row itself).
import { MAX_NAME_LENGTH } from '../contract/limits.js';
import { hostOf, isValidHost, keyText, lowerSimple, pathOf, WHITESPACE_RUNS } from './match-keys.js';

export const PROSPECT_ID = /^[a-f0-9]{40}$/;

export interface ProspectKey {
  full_name: string | null;
  company_name: string | null;
  email: string | null;
  phone_number: string | null;
  network: string | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@.]+$/;
/** E.164: a country code and the national number, at most 15 digits; fewer than 8 is no full number. */
const MIN_PHONE_DIGITS = 8;
const MAX_PHONE_DIGITS = 15;

/**
 * A phone number as `+` and its digits with the country code: separators dropped, an international
 * `00` prefix read as `+`. A number written without `+` or `00` is taken to start with its country
 * code already (the input gives no country to add).
 */
export function normalisePhone(phone: string): string | { reject: string } {
  const compact = phone.replace(/[\s().\-/]+/g, '');
  const international = compact.startsWith('+')
    ? compact.slice(1)
    : compact.startsWith('00')
      ? compact.slice(2)
      : compact;
  // An extension (`x123`, `ext. 12`) is not part of the number the service knows.
  const digits = international.replace(/(?:ext|x|#).*$/i, '');
  if (!/^\d+$/.test(digits))
    return { reject: 'phone_number has characters other than digits and separators' };
  if (digits.length < MIN_PHONE_DIGITS || digits.length > MAX_PHONE_DIGITS)
    return {
      reject: `phone_number has ${digits.length} digits; expected ${MIN_PHONE_DIGITS} to ${MAX_PHONE_DIGITS} with the country code`,
    };
  return `+${digits}`;
}

/** The normalised match fields of a people row's (cleaned) values, or the reason it cannot be matched. */
export function prospectKeyOf(
  fullName: string | null,
  companyName: string | null,
  email: string | null,
  phone: string | null,
  network: string | null,
): ProspectKey | { reject: string } {
  if (email === null && phone === null && network === null && fullName === null)
    return {
      reject: 'no usable field: email, phone_number, network and full_name are all empty',
    };
  const sentName = fullName === null ? null : fullName.replace(WHITESPACE_RUNS, ' ') || null;
  const sentCompany = companyName === null ? null : companyName.replace(WHITESPACE_RUNS, ' ') || null;
  for (const [field, value] of [
    ['full_name', sentName],
    ['company_name', sentCompany],
  ] as const) {
    if (value !== null && value.length > MAX_NAME_LENGTH)
      return {
        reject: `${field} is ${value.length} characters long; the service accepts at most ${MAX_NAME_LENGTH}`,
      };
  }
  const sentEmail = email === null ? null : lowerSimple(email);
  if (sentEmail !== null && !EMAIL.test(sentEmail))
    return { reject: 'email is not an email address (name@domain)' };
  const sentPhone = phone === null ? null : normalisePhone(phone);
  if (sentPhone !== null && typeof sentPhone !== 'string') return sentPhone;
  const networkLower = network === null ? null : lowerSimple(network);
  const networkPath = networkLower === null ? null : pathOf(networkLower);
  if (network !== null && (!isValidHost(hostOf(networkLower!)) || !networkPath!.includes('/')))
    return { reject: 'network is not a profile address (host/path)' };
  // The service refuses a full name without a company name (a 422 for the whole batch): a name alone
  // is no key, and beside another key it is left out.
  const withCompany = sentName !== null && sentCompany !== null;
  if (sentEmail === null && sentPhone === null && networkPath === null && !withCompany)
    return {
      reject: 'full_name is given without company_name; the service matches a name only with its company',
    };
  return {
    full_name: withCompany ? sentName : null,
    company_name: sentCompany,
    email: sentEmail,
    phone_number: sentPhone,
    network: networkPath,
  };
}

/** The text two people rows share when they are the same key: names compare case-insensitively. */
export function prospectDedupKeyOf(key: ProspectKey): string {
  return (
    keyText(key.email) +
    keyText(key.phone_number) +
    keyText(key.network) +
    keyText(key.full_name === null ? null : lowerSimple(key.full_name)) +
    keyText(key.company_name === null ? null : lowerSimple(key.company_name))
  );
}
