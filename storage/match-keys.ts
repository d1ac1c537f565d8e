// The match key of one input row: which columns hold the match fields (by alias or named explicitly)
// and each value normalised as the service compares it, or the reason the row cannot be matched.
// Pure functions over strings; the planning pass (`plan-input.ts`) calls them once per row.
import { detectInputFormat, InputFileError, type InputFormat } from './input/index.js';
import {
  MATCH_FIELDS,
  PROSPECT_MATCH_FIELDS,
  type InputEntity,
  type InputField,
  type InputSpec,
  type MatchField,
  type ProspectMatchField,
} from '../pipeline/run-types.js';
import { MAX_NAME_LENGTH } from '../contract/limits.js';

type BusinessField = MatchField | 'business_id';
type PeopleField = ProspectMatchField | 'prospect_id' | 'business_id';

/** Column names recognised for each field, compared after lower-casing and dropping spaces, `_` and `-`. */
export const COLUMN_ALIASES: Record<BusinessField, string[]> = {
  name: [
    'name',
    'company',
    'companyname',
    'businessname',
    'organization',
    'organisation',
    'account',
    'accountname',
    'legalname',
  ],
  domain: ['domain', 'companydomain', 'domainname', 'websitedomain', 'emaildomain'],
  url: ['url', 'website', 'companywebsite', 'websiteurl', 'companyurl', 'homepage', 'site', 'web'],
  network_url: [
    'networkurl',
    'network',
    'companynetwork',
    'networkprofile',
    'linkedin',
    'linkedinurl',
    'companylinkedin',
    'companylinkedinurl',
  ],
  business_id: ['businessid'],
};

/** Column names recognised for each field of a people list (same comparison). */
export const PROSPECT_COLUMN_ALIASES: Record<PeopleField, string[]> = {
  full_name: ['fullname', 'name', 'personname', 'contactname', 'prospectname', 'person', 'contact'],
  company_name: [
    'companyname',
    'company',
    'employer',
    'employername',
    'organization',
    'organisation',
    'account',
    'accountname',
    'businessname',
  ],
  email: [
    'email',
    'emailaddress',
    'workemail',
    'businessemail',
    'professionalemail',
    'personalemail',
    'mail',
  ],
  phone_number: [
    'phonenumber',
    'phone',
    'mobile',
    'mobilephone',
    'mobilenumber',
    'cellphone',
    'telephone',
    'tel',
    'workphone',
    'directphone',
  ],
  network: [
    'network',
    'networkurl',
    'networkprofile',
    'profile',
    'profileurl',
    'profileaddress',
    'linkedin',
    'linkedinurl',
    'linkedinprofile',
    'linkedinprofileurl',
    'personlinkedinurl',
  ],
  prospect_id: ['prospectid'],
  /** The person's employer: a business id of the service, like a company list's `business_id`. */
  business_id: ['businessid', 'employerbusinessid'],
};

/**
 * Columns that say an input lists people when no entity is given: an email, a full name or prospect
 * ids, or a phone in a file with no company match column (a company export may carry a switchboard).
 * (`name` alone stays a company name.)
 */
function recognisedEntity(columns: string[], explicit: InputSpec['columns'] = {}): InputEntity {
  const fields = Object.keys(explicit);
  if (fields.some((f) => f in PROSPECT_COLUMN_ALIASES && !(f in COLUMN_ALIASES))) return 'prospects';
  if (fields.some((f) => f in COLUMN_ALIASES)) return 'businesses';
  const has = (aliases: string[]) => columns.some((c) => aliases.includes(squash(c)));
  const { full_name, email, phone_number, prospect_id } = PROSPECT_COLUMN_ALIASES;
  if (has(email) || has(prospect_id) || has(full_name.filter((a) => a !== 'name'))) return 'prospects';
  const companyColumn = MATCH_FIELDS.some((f) => has(COLUMN_ALIASES[f])) || has(COLUMN_ALIASES.business_id);
  return has(phone_number) && !companyColumn ? 'prospects' : 'businesses';
}

const squash = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, '');

/** The format of an input: given, or from its extension; fails before any work when neither says. */
export function detectFormat(location: string, explicit?: InputFormat): InputFormat {
  const format = explicit ?? detectInputFormat(location);
  if (!format) {
    throw new InputFileError(
      'UNKNOWN_FORMAT',
      location,
      'cannot tell the format from the file name; name it .csv, .jsonl or .parquet, or pass --format',
    );
  }
  return format;
}

export interface ColumnMapping {
  fields: Partial<Record<InputField, string>>;
  columns: string[];
  /** Absent for companies (as mappings were before people lists). */
  entity?: 'prospects';
}

/**
 * Which column holds each field, by name or as given (`--map`); the entity as given or recognised from
 * the columns. Fails when no column is usable.
 */
export function mapColumns(
  location: string,
  columns: string[],
  explicit: InputSpec['columns'] = {},
  entity: InputEntity = recognisedEntity(columns, explicit),
): ColumnMapping {
  if (entity === 'prospects') return mapProspectColumns(location, columns, explicit);
  const fields: Partial<Record<InputField, string>> = {};
  for (const field of Object.keys(explicit)) {
    if (!(field in COLUMN_ALIASES))
      throw new InputFileError(
        'UNKNOWN_COLUMN',
        location,
        `--map ${field}= is a field of people lists; this input is a company list (fields: ${Object.keys(COLUMN_ALIASES).join(', ')}); pass --entity prospects for a list of people`,
      );
  }
  for (const [field, column] of Object.entries(explicit) as [InputField, string][]) {
    fields[field] = mappedColumn(location, columns, field, column);
  }
  for (const field of [...MATCH_FIELDS, 'business_id'] as BusinessField[]) {
    if (fields[field]) continue;
    const found = columns.find((c) => COLUMN_ALIASES[field].includes(squash(c)));
    if (found) fields[field] = found;
  }
  if (!fields.business_id && MATCH_FIELDS.every((f) => !fields[f])) {
    throw new InputFileError(
      'NO_USABLE_COLUMN',
      location,
      'no usable column; expected business_id or one of name, domain, url, network_url ' +
        `(or aliases such as company, website, linkedin_url), found: ${columns.join(', ') || '(none)'}`,
    );
  }
  return { fields, columns };
}

/** The column `--map field=column` names, once it is known to be in the file. */
function mappedColumn(location: string, columns: string[], field: string, column: string): string {
  if (!columns.includes(column))
    throw new InputFileError(
      'UNKNOWN_COLUMN',
      location,
      `column "${column}" given for ${field} is not in the file (columns: ${columns.join(', ')})`,
    );
  return column;
}

function mapProspectColumns(
  location: string,
  columns: string[],
  explicit: InputSpec['columns'] = {},
): ColumnMapping {
  const fields: Partial<Record<InputField, string>> = {};
  const known = Object.keys(PROSPECT_COLUMN_ALIASES);
  for (const [field, column] of Object.entries(explicit) as [InputField, string][]) {
    if (!known.includes(field))
      throw new InputFileError(
        'UNKNOWN_COLUMN',
        location,
        `--map ${field}= is not a field of people lists; expected one of ${known.join(', ')}`,
      );
    fields[field] = mappedColumn(location, columns, field, column);
  }
  const taken = new Set(Object.values(fields));
  for (const field of [...PROSPECT_MATCH_FIELDS, 'prospect_id', 'business_id'] as PeopleField[]) {
    if (fields[field]) continue;
    // Aliases in order of preference (`full_name` before `name`), a column serving one field only.
    for (const alias of PROSPECT_COLUMN_ALIASES[field]) {
      const found = columns.find((c) => !taken.has(c) && squash(c) === alias);
      if (found) {
        fields[field] = found;
        taken.add(found);
        break;
      }
    }
  }
  // A company name alone identifies nobody.
  if (!fields.prospect_id && PROSPECT_MATCH_FIELDS.every((f) => f === 'company_name' || !fields[f])) {
    throw new InputFileError(
      'NO_USABLE_COLUMN',
      location,
      'no usable column for a list of people; expected prospect_id or one of email, phone_number, network, ' +
        `full_name with company_name (or aliases such as work_email, phone, linkedin_url), found: ${columns.join(', ') || '(none)'}`,
    );
  }
  return { fields, columns, entity: 'prospects' };
}

// ---------------------------------------------------------------------------------------------------
// Normalisation. DuckDB SQL did this before; these functions keep its exact results: `trim` drops
// Unicode space separators (category Zs) at both ends, `lower` maps code point by code point, and the
// patterns follow RE2 (`\s` is [\t\n\f\r ] and `.` is anything but a newline).

function isSpaceSeparator(code: number): boolean {
  return (
    code === 0x20 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

/** A value as planning sees it: trimmed, and null when nothing is left. */
export function cleanValue(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  let start = 0;
  let end = value.length;
  while (start < end && isSpaceSeparator(value.charCodeAt(start))) start++;
  while (end > start && isSpaceSeparator(value.charCodeAt(end - 1))) end--;
  if (start === end) return null;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

const FULL_CASE_ONLY = /[\u0130\u03a3]/;

/**
 * Lower case by simple (one to one) case mapping. JavaScript's full mapping differs only for U+0130
 * (İ, which it turns into two code points) and a final Σ (ς); both map as DuckDB maps them.
 */
export function lowerSimple(value: string): string {
  const lowered = value.toLowerCase();
  if (!FULL_CASE_ONLY.test(value)) return lowered;
  return value
    .replace(/\u0130/g, 'i')
    .replace(/\u03a3/g, '\u03c3')
    .toLowerCase();
}

const HOST = /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:[^@/]*@)?(?:www\.)?([^/:?#\t\n\f\r ]+)/;

/** The host of a lower-case domain, URL or address: without scheme, user, `www.`, port or path. */
export function hostOf(lowered: string): string | null {
  return HOST.exec(lowered)?.[1] ?? null;
}

function isAlnum(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39);
}

/** Dot-separated labels of [a-z0-9-] that start and end alphanumeric; the last (≥ 2) starts with a letter. */
export function isValidHost(host: string | null): boolean {
  if (host === null) return false;
  let labelStart = 0;
  let labels = 0;
  for (let i = 0; i <= host.length; i++) {
    const code = i < host.length ? host.charCodeAt(i) : 0x2e;
    if (code !== 0x2e) {
      if (!isAlnum(code) && code !== 0x2d) return false;
      continue;
    }
    const last = i === host.length;
    if (i === labelStart) return false;
    if (!isAlnum(host.charCodeAt(labelStart)) || !isAlnum(host.charCodeAt(i - 1))) return false;
    if (
      last &&
      (i - labelStart < 2 || !(host.charCodeAt(labelStart) >= 0x61 && host.charCodeAt(labelStart) <= 0x7a))
    )
      return false;
    labels += 1;
    labelStart = i + 1;
  }
  return labels >= 2;
}

const SCHEME_OR_WWW = /^[a-z][a-z0-9+.-]*:\/\/(?:www\.)?|^www\./;

/** A lower-case URL as a key: without scheme, `www.`, query, fragment or trailing slashes. */
export function pathOf(lowered: string): string {
  let text = lowered.replace(SCHEME_OR_WWW, '');
  // The query or fragment runs to the end of the text, on the last line (RE2's `[?#].*$`).
  for (let i = text.lastIndexOf('\n') + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x3f || code === 0x23) {
      text = text.slice(0, i);
      break;
    }
  }
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f) end--;
  return end === text.length ? text : text.slice(0, end);
}

export const WHITESPACE_RUNS = /[\t\n\f\r ]+/g;

export const BUSINESS_ID = /^[a-f0-9]{32}$/;

export interface MatchKey {
  name: string | null;
  domain: string | null;
  url: string | null;
  network_url: string | null;
}

/** The normalised match fields of one row's (cleaned) values, or the reason the row cannot be matched. */
export function matchKeyOf(
  name: string | null,
  domain: string | null,
  url: string | null,
  networkUrl: string | null,
): MatchKey | { reject: string } {
  if (name === null && domain === null && url === null && networkUrl === null)
    return { reject: 'no usable field: name, domain, url and network_url are all empty' };
  const sentName = name === null ? null : name.replace(WHITESPACE_RUNS, ' ') || null;
  // The service refuses a longer name with a 422 for its whole batch: a reject here, not a failure there.
  if (sentName !== null && sentName.length > MAX_NAME_LENGTH)
    return {
      reject: `name is ${sentName.length} characters long; the service accepts at most ${MAX_NAME_LENGTH}`,
    };
  const domainHost = domain === null ? null : hostOf(lowerSimple(domain));
  if (domain !== null && !isValidHost(domainHost))
    return { reject: `domain "${domain}" is not a valid domain name` };
  const urlLower = url === null ? null : lowerSimple(url);
  if (url !== null && !isValidHost(hostOf(urlLower!)))
    return { reject: `url "${url}" has no valid host name` };
  const networkLower = networkUrl === null ? null : lowerSimple(networkUrl);
  const networkPath = networkLower === null ? null : pathOf(networkLower);
  if (networkUrl !== null && (!isValidHost(hostOf(networkLower!)) || !networkPath!.includes('/')))
    return { reject: `network_url "${networkUrl}" is not a profile address` };
  return {
    name: sentName,
    domain: domainHost,
    url: urlLower === null ? null : pathOf(urlLower),
    network_url: networkPath,
  };
}

/** One field of a dedup key: `-` for null, else its length, `:` and the text (so fields never run together). */
export const keyText = (value: string | null) => (value === null ? '-' : `${value.length}:${value}`);

/** The text two rows share when they are the same key: names compare case-insensitively. */
export function dedupKeyOf(key: MatchKey): string {
  return (
    keyText(key.name === null ? null : lowerSimple(key.name)) +
    keyText(key.domain) +
    keyText(key.url) +
    keyText(key.network_url)
  );
}
