// Prospect and business fetch: filters mean what spec 2.7 says (checked against an independent
// evaluation of the stored records), and both offset and cursor paging return every matching record
// exactly once, in a stable order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURSOR_START, ROUTES, type ProspectFilters } from '../../contract/index.js';
import { call, okBody, startTestSandbox, type TestSandbox } from './support.js';

let sandbox: TestSandbox;

interface ProspectFacts {
  id: string;
  title: string;
  levels: string[];
  departments: string[];
  hasEmail: boolean;
  businessId: string;
  country: string;
  totalMonths: number;
  company: { country: string; size: string; revenue: string; naics: string; location: string };
}

let prospects: ProspectFacts[];

beforeAll(async () => {
  sandbox = await startTestSandbox();
  const rows = await sandbox.app.sandbox.store.query(
    `SELECT p.record_json, r.country_code, p.total_months, b.country_code AS c_country, b.size_range, b.revenue_range, b.naics, b.city_region_country
     FROM prospects p JOIN businesses b ON b.bix = p.bix JOIN regions r ON r.region_id = p.region_id ORDER BY p.pix`,
  );
  prospects = rows.map((row) => {
    const record = JSON.parse(String(row.record_json)) as Record<string, unknown>;
    return {
      id: String(record.prospect_id),
      title: String(record.job_title),
      levels: record.job_level_array as string[],
      departments: record.job_department_array as string[],
      hasEmail: record.professional_email_hashed !== null,
      businessId: String(record.business_id),
      country: String(row.country_code),
      totalMonths: Number(row.total_months),
      company: {
        country: String(row.c_country),
        size: String(row.size_range),
        revenue: String(row.revenue_range),
        naics: String(row.naics),
        location: String(row.city_region_country),
      },
    };
  });
});
afterAll(() => sandbox.close());

const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
const hasAllWords = (title: string, query: string) => words(query).every((w) => words(title).includes(w));

interface Page {
  data: { prospect_id: string }[];
  total_results: number;
  page: number | { size: number; next_cursor: string | null };
  total_pages?: number;
}

async function fetchPage(body: Record<string, unknown>): Promise<Page> {
  return okBody<Page>(
    ROUTES.fetchProspects,
    await call(sandbox.app, 'POST', ROUTES.fetchProspects.path, body),
  );
}

async function allByOffset(
  filters: ProspectFilters,
  pageSize: number,
  extra: Record<string, unknown> = {},
): Promise<string[]> {
  const first = await fetchPage({ mode: 'full', size: 60000, page_size: pageSize, filters, ...extra });
  const ids = first.data.map((p) => p.prospect_id);
  for (let page = 2; page <= (first.total_pages ?? 0); page += 1) {
    const next = await fetchPage({ mode: 'full', size: 60000, page_size: pageSize, page, filters, ...extra });
    expect(next.page).toBe(page);
    ids.push(...next.data.map((p) => p.prospect_id));
  }
  expect(ids).toHaveLength(first.total_results);
  return ids;
}

async function allByCursor(
  filters: ProspectFilters,
  pageSize: number,
  extra: Record<string, unknown> = {},
): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = CURSOR_START;
  let total = -1;
  for (let guard = 0; cursor !== null && guard < 10_000; guard += 1) {
    const page = await fetchPage({
      mode: 'full',
      size: pageSize,
      page_size: pageSize,
      filters,
      next_cursor: cursor,
      ...extra,
    });
    const info = page.page as { size: number; next_cursor: string | null };
    expect(info.size).toBe(page.data.length);
    total = page.total_results;
    ids.push(...page.data.map((p) => p.prospect_id));
    cursor = info.next_cursor;
  }
  expect(ids).toHaveLength(total);
  return ids;
}

const FILTER_CASES: { name: string; filters: ProspectFilters; expect: (p: ProspectFacts) => boolean }[] = [
  {
    name: 'job title: all words in any order',
    filters: { job_title: { values: ['engineer software'] } },
    expect: (p) => hasAllWords(p.title, 'engineer software'),
  },
  {
    name: 'values OR, fields AND, company location, has_email',
    filters: {
      job_level: { values: ['manager', 'director'] },
      company_country_code: { values: ['us'] },
      has_email: { value: true },
    },
    expect: (p) =>
      (p.levels.includes('manager') || p.levels.includes('director')) &&
      p.company.country === 'US' &&
      p.hasEmail,
  },
  {
    name: 'prospect location with an experience range',
    filters: { country_code: { values: ['DE', 'fr'] }, total_experience_months: { gte: 60, lte: 200 } },
    expect: (p) => ['DE', 'FR'].includes(p.country) && p.totalMonths >= 60 && p.totalMonths <= 200,
  },
  {
    name: 'company size, revenue and NAICS prefix',
    filters: {
      company_size: { values: ['11-50', '51-200'] },
      company_revenue: { values: ['1M-5M', '5M-10M', '10M-25M'] },
      naics_category: { values: ['54'] },
    },
    expect: (p) =>
      ['11-50', '51-200'].includes(p.company.size) &&
      ['1M-5M', '5M-10M', '10M-25M'].includes(p.company.revenue) &&
      p.company.naics.startsWith('54'),
  },
  {
    name: 'without email, by level, prospect country and company country together',
    filters: {
      has_email: { value: false },
      job_level: { values: ['manager', 'non-managerial', 'senior non-managerial'] },
      country_code: { values: ['us', 'GB', 'de'] },
      company_country_code: { values: ['US', 'gb'] },
    },
    expect: (p) =>
      !p.hasEmail &&
      ['manager', 'non-managerial', 'senior non-managerial'].some((level) => p.levels.includes(level)) &&
      ['US', 'GB', 'DE'].includes(p.country) &&
      ['US', 'GB'].includes(p.company.country),
  },
  {
    name: 'department, spec spelling IT',
    filters: { job_department: { values: ['IT', 'data'] } },
    expect: (p) => p.departments.includes('it') || p.departments.includes('data'),
  },
];

describe('prospect filters', () => {
  it.each(FILTER_CASES)('$name', async ({ filters, expect: matches }) => {
    const expected = prospects.filter(matches).map((p) => p.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(await allByOffset(filters, 37)).toEqual(expected);
  });

  it('keeps prospect location and company location apart', async () => {
    const home = await allByOffset({ country_code: { values: ['fr'] } }, 100);
    const company = await allByOffset({ company_country_code: { values: ['fr'] } }, 100);
    expect(home).toEqual(prospects.filter((p) => p.country === 'FR').map((p) => p.id));
    expect(company).toEqual(prospects.filter((p) => p.company.country === 'FR').map((p) => p.id));
    expect(home).not.toEqual(company);
  });

  it('widens a title to related titles on request', async () => {
    const exact = await allByOffset({ job_title: { values: ['developer'] } }, 100);
    const related = await allByOffset(
      { job_title: { values: ['developer'], include_related_job_titles: true } },
      100,
    );
    expect(exact.length).toBeGreaterThan(0);
    expect(related.length).toBeGreaterThan(exact.length);
    expect(related).toEqual(expect.arrayContaining(exact));
    const titles = new Set(prospects.filter((p) => related.includes(p.id)).map((p) => p.title));
    expect(titles.has('Software Engineer')).toBe(true);
    expect(titles.has('Accountant')).toBe(false);
  });

  it('filters by employer and leaves out excluded prospects', async () => {
    const employer = prospects[0]?.businessId as string;
    const all = prospects.filter((p) => p.businessId === employer).map((p) => p.id);
    const excluded = all.slice(0, 1);
    const got = await allByOffset({ business_id: { values: [employer] } }, 10, { exclude: excluded });
    expect(got).toEqual(all.filter((id) => !excluded.includes(id)));
  });
});

describe('paging', () => {
  const filters: ProspectFilters = { job_level: { values: ['non-managerial', 'manager'] } };

  it('returns every matching record exactly once in offset and cursor mode, in the same order', async () => {
    const offset = await allByOffset(filters, 53);
    const cursor = await allByCursor(filters, 71);
    expect(new Set(offset).size).toBe(offset.length);
    expect(cursor).toEqual(offset);
    expect(offset).toEqual(
      prospects
        .filter((p) => p.levels.includes('non-managerial') || p.levels.includes('manager'))
        .map((p) => p.id),
    );
  });

  it('caps offset results at size, and cursor mode walks past it', async () => {
    const first = await fetchPage({ mode: 'full', size: 120, page_size: 50, filters });
    expect(first.total_results).toBe(120);
    expect(first.total_pages).toBe(3);
    const last = await fetchPage({ mode: 'full', size: 120, page_size: 50, page: 3, filters });
    expect(last.data).toHaveLength(20);
    const beyond = await fetchPage({ mode: 'full', size: 120, page_size: 50, page: 4, filters });
    expect(beyond.data).toHaveLength(0);
    const walked = await allByCursor(filters, 100);
    expect(walked.length).toBeGreaterThan(120);
  });

  it('answers an empty result as a miss with zero pages', async () => {
    const page = await fetchPage({
      mode: 'full',
      size: 10,
      page_size: 10,
      filters: { business_id: { values: ['0'.repeat(32)] } },
    });
    expect(page).toMatchObject({
      data: [],
      total_results: 0,
      total_pages: 0,
      response_context: { request_status: 'miss' },
    });
    const cursor = await fetchPage({
      mode: 'full',
      size: 10,
      page_size: 10,
      next_cursor: CURSOR_START,
      filters: { business_id: { values: ['0'.repeat(32)] } },
    });
    expect(cursor.page).toEqual({ size: 0, next_cursor: null });
  });

  it('returns fewer fields in preview mode', async () => {
    const page = await fetchPage({ mode: 'preview', size: 5, page_size: 5 });
    expect(Object.keys(page.data[0] ?? {})).toContain('prospect_id');
    expect(Object.keys(page.data[0] ?? {})).not.toContain('experience');
  });
});

describe('business fetch', () => {
  it('filters, pages by offset and cursor, and matches the contract', async () => {
    const store = sandbox.app.sandbox.store;
    const rows = await store.query(
      "SELECT business_id FROM businesses WHERE country_code IN ('US', 'GB') AND size_range <> '1-10' AND has_website ORDER BY bix",
    );
    const expected = rows.map((row) => String(row.business_id));
    const filters = {
      country_code: { values: ['us', 'gb'] },
      company_size: { values: ['1-10'], negate: true },
      has_website: { value: true },
    };
    const collected: string[] = [];
    let cursor: string | null = CURSOR_START;
    while (cursor !== null) {
      const page: { data: { business_id: string }[]; page: { next_cursor: string | null } } = okBody(
        ROUTES.fetchBusinesses,
        await call(sandbox.app, 'POST', ROUTES.fetchBusinesses.path, {
          mode: 'full',
          size: 200,
          page_size: 200,
          filters,
          next_cursor: cursor,
        }),
      );
      collected.push(...page.data.map((b) => b.business_id));
      cursor = page.page.next_cursor;
    }
    expect(collected).toEqual(expected);
    const offset = okBody<{ data: { business_id: string }[]; total_results: number; total_pages: number }>(
      ROUTES.fetchBusinesses,
      await call(sandbox.app, 'POST', ROUTES.fetchBusinesses.path, {
        mode: 'full',
        size: 60000,
        page_size: 500,
        filters,
        page: 1,
      }),
    );
    expect(offset.total_results).toBe(expected.length);
    expect(offset.data.map((b) => b.business_id)).toEqual(expected.slice(0, 500));
  });
});
