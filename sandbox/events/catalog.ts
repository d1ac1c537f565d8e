// What each kind of business event carries: one `data` builder per documented event type, shared by
// the historical generator (seeded) and the live stream (unseeded), so both produce the same shapes.
import { BUSINESS_EVENT_TYPES, type BusinessEventType } from '../../contract/enums.js';
import type { EventRandom } from './random.js';

export type EventData = Record<string, unknown>;

const CITIES = [
  { city: 'Austin', region: 'Texas', country_code: 'US' },
  { city: 'Berlin', region: 'Berlin', country_code: 'DE' },
  { city: 'Toronto', region: 'Ontario', country_code: 'CA' },
  { city: 'London', region: 'England', country_code: 'GB' },
  { city: 'Bangalore', region: 'Karnataka', country_code: 'IN' },
  { city: 'Sydney', region: 'New South Wales', country_code: 'AU' },
  { city: 'Paris', region: 'Ile-de-France', country_code: 'FR' },
  { city: 'Denver', region: 'Colorado', country_code: 'US' },
  { city: 'Singapore', region: 'Singapore', country_code: 'SG' },
  { city: 'Amsterdam', region: 'North Holland', country_code: 'NL' },
] as const;
const ROUND_TYPES = ['pre_seed', 'seed', 'series_a', 'series_b', 'series_c', 'series_d', 'debt_financing'];
const INVESTORS = [
  'Northwind Ventures',
  'Granite Peak Capital',
  'Bluewater Partners',
  'Lumen Growth',
  'Harbor Street Fund',
  'Atlas Seed',
  'Copperleaf Equity',
  'Meridian Angels',
];
const COMPANY_WORDS = ['Nimbus', 'Vertex', 'Quill', 'Orbital', 'Harvest', 'Keystone', 'Lattice', 'Beacon'];
const COMPANY_SUFFIXES = ['Labs', 'Systems', 'Group', 'Analytics', 'Health', 'Logistics', 'Software'];
const PRODUCT_WORDS = ['Insight', 'Flow', 'Pulse', 'Forge', 'Signal', 'Atlas', 'Relay', 'Scope'];
const AWARDS = ['Best Place to Work', 'Innovation Award', 'Fastest Growing Company', 'Customer Choice Award'];
const AWARD_ISSUERS = ['Regional Business Journal', 'Industry Excellence Council', 'TechForward Media'];
const TITLES: Record<string, readonly string[]> = {
  creative: ['Graphic Designer', 'Content Writer', 'Art Director'],
  education: ['Instructional Designer', 'Trainer', 'Curriculum Lead'],
  engineering: ['Software Engineer', 'Senior Backend Engineer', 'Site Reliability Engineer'],
  finance: ['Financial Analyst', 'Controller', 'Accountant'],
  health: ['Registered Nurse', 'Clinical Coordinator', 'Physician Assistant'],
  human_resources: ['HR Business Partner', 'Recruiter', 'People Operations Manager'],
  legal: ['Corporate Counsel', 'Paralegal', 'Compliance Officer'],
  marketing: ['Marketing Manager', 'Growth Marketer', 'Product Marketing Lead'],
  operations: ['Operations Manager', 'Supply Chain Analyst', 'Program Manager'],
  professional_service: ['Consultant', 'Solutions Architect', 'Implementation Specialist'],
  sales: ['Account Executive', 'Sales Development Representative', 'Sales Manager'],
  support: ['Customer Support Specialist', 'Technical Support Engineer', 'Support Team Lead'],
  trade: ['Electrician', 'Machinist', 'Warehouse Associate'],
  unknown: ['Associate', 'Specialist', 'Coordinator'],
  customer_service: ['Customer Service Representative', 'Customer Success Manager'],
  all: ['Associate', 'Manager', 'Director'],
};
const SENIORITIES = ['junior', 'senior non-managerial', 'manager', 'director', 'vice president', 'c-suite'];

function companyName(random: EventRandom): string {
  return `${random.pick(COMPANY_WORDS)} ${random.pick(COMPANY_SUFFIXES)}`;
}

function isoDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

function departmentOf(type: string, prefix: string): string {
  return type.slice(prefix.length).replace(/_department$/, '');
}

/** The `data` object of one event of `type` happening at `eventTimeMs`. */
export function buildEventData(type: BusinessEventType, random: EventRandom, eventTimeMs: number): EventData {
  if (type.startsWith('hiring_in_')) {
    const department = departmentOf(type, 'hiring_in_');
    const location = random.pick(CITIES);
    return {
      department,
      job_title: random.pick(TITLES[department] ?? TITLES.unknown ?? ['Associate']),
      open_positions: random.int(1, 25),
      location: `${location.city}, ${location.region}, ${location.country_code}`,
    };
  }
  if (type.startsWith('increase_in_') || type.startsWith('decrease_in_')) {
    const increase = type.startsWith('increase_in_');
    const department = departmentOf(type, increase ? 'increase_in_' : 'decrease_in_');
    const before = random.int(5, 800);
    const change = random.int(5, 40);
    const after = Math.max(1, Math.round((before * (increase ? 100 + change : 100 - change)) / 100));
    return {
      department,
      headcount_before: before,
      headcount_after: after,
      change_percent: Math.round(((after - before) / before) * 1000) / 10,
      period_days: 90,
    };
  }
  switch (type) {
    case 'ipo_announcement':
      return {
        exchange: random.pick(['NASDAQ', 'NYSE', 'LSE', 'TSX']),
        expected_listing_date: isoDay(eventTimeMs + random.int(14, 120) * 86_400_000),
        offer_price_usd: random.int(12, 60),
      };
    case 'new_funding_round': {
      const count = random.int(1, 3);
      const investors = new Set<string>();
      while (investors.size < count) investors.add(random.pick(INVESTORS));
      return {
        round_type: random.pick(ROUND_TYPES),
        amount_usd: random.int(5, 2_000) * 100_000,
        investors: [...investors].sort(),
      };
    }
    case 'new_investment':
      return {
        target_company_name: companyName(random),
        round_type: random.pick(ROUND_TYPES),
        amount_usd: random.int(1, 500) * 100_000,
      };
    case 'new_product':
      return {
        product_name: `${random.pick(PRODUCT_WORDS)} ${random.pick(['Cloud', 'Pro', 'Edge', 'AI', 'Mobile'])}`,
        category: random.pick(['software', 'hardware', 'service', 'platform']),
      };
    case 'new_office':
    case 'closing_office': {
      const location = random.pick(CITIES);
      return { ...location, employees_affected: random.int(5, 400) };
    }
    case 'new_partnership':
      return {
        partner_name: companyName(random),
        partnership_type: random.pick(['technology', 'distribution', 'strategic', 'reseller']),
      };
    case 'employee_joined_company': {
      const department = random.pick(['engineering', 'sales', 'marketing', 'finance', 'operations']);
      return {
        department,
        job_title: random.pick(TITLES[department] ?? ['Associate']),
        seniority: random.pick(SENIORITIES),
      };
    }
    case 'company_award':
      return {
        award_name: random.pick(AWARDS),
        issuer: random.pick(AWARD_ISSUERS),
        year: new Date(eventTimeMs).getUTCFullYear(),
      };
    case 'outages_and_security_breaches':
      return {
        kind: random.pick(['service_outage', 'data_breach', 'ransomware']),
        severity: random.pick(['low', 'medium', 'high']),
        duration_hours: random.int(1, 72),
      };
    case 'cost_cutting':
      return {
        measure: random.pick(['layoffs', 'office_consolidation', 'hiring_freeze', 'budget_reduction']),
        employees_affected: random.int(0, 500),
      };
    case 'merger_and_acquisitions':
      return {
        role: random.pick(['acquirer', 'target']),
        counterparty_name: companyName(random),
        deal_value_usd: random.next() < 0.4 ? null : random.int(10, 5_000) * 1_000_000,
      };
    case 'lawsuits_and_legal_issues':
      return {
        case_type: random.pick(['patent', 'employment', 'contract', 'regulatory', 'class_action']),
        role: random.pick(['plaintiff', 'defendant']),
        jurisdiction: random.pick(['US', 'EU', 'UK', 'CA']),
      };
    default:
      return {};
  }
}

export function isBusinessEventType(value: string): value is BusinessEventType {
  return (BUSINESS_EVENT_TYPES as readonly string[]).includes(value);
}
