// Every record the sandbox generated, in every table it serves from, against the provider document's
// schema of that record (names mapped): tickers `MIC:SYMBOL`, URI-formed addresses, country and region
// names from the provider's vocabulary, lower-case country codes, and every other field the document
// constrains with a pattern, an enum or a format.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULK_DATASETS, type BulkDataset } from '../../contract/index.js';
import { datasetTable } from '../../sandbox/data/generate.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/support.js';
import { componentValidator, violations } from './provider-document.js';

/** The provider's schema of each bulk dataset's record. */
const DATASET_SCHEMAS: Record<BulkDataset, string> = {
  network_posts: 'LinkedinCompaniesPostsOutputSchema',
  workforce_trends: 'WorkforceTrendsOutputSchema',
  technographics: 'TechnographicsOutputSchema',
  funding_and_acquisition: 'FundingAndAcquisitionOutputSchema',
  company_ratings_by_employees: 'CompanyRatingsByEmployeesOutputSchema',
  firmographics: 'FirmographicsOutputSchema',
  pc_business_challenges_10k: 'PCBusinessChallenges10kOutputSchema',
  pc_strategy_10k: 'PCStrategy10kOutputSchema',
  financial_indicators: 'FinancialIndicatorsOutputSchema',
  pc_competitive_landscape_10k: 'PCCompetitiveLandscape10kOutputSchema',
  company_website_keywords: 'CompanyWebsiteKeywordsOutputSchema',
  website_changes: 'WebsiteChangesOutputSchema',
};

/** Tables of the other records served as stored, with their JSON column and the provider's schema. */
const OTHER_TABLES: [table: string, column: string, schema: string][] = [
  ['businesses', 'fetch_json', 'Business'],
  ['hierarchies', 'json', 'CompanyHierarchiesOutputSchema'],
  ['prospects', 'record_json', 'Prospect'],
  ['prospect_posts', 'json', 'LinkedinProspectsPostsOutputSchema'],
  ['prospect_contacts', 'json', 'ContactsInformationOutputSchema'],
];

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

async function check(table: string, column: string, schema: string) {
  const validator = componentValidator(schema);
  const rows = await sandbox.app.sandbox.store.query(`SELECT ${column} AS json FROM ${table}`);
  const problems = new Map<string, number>();
  for (const row of rows) {
    if (!validator(JSON.parse(String(row.json)))) {
      for (const problem of violations(validator)) {
        const key = problem.replace(/\/\d+\//g, '/*/');
        problems.set(key, (problems.get(key) ?? 0) + 1);
      }
    }
  }
  return { records: rows.length, problems: Object.fromEntries(problems) };
}

describe('generated records against the provider document', () => {
  it.each(BULK_DATASETS)('%s', async (dataset) => {
    const result = await check(datasetTable(dataset), 'json', DATASET_SCHEMAS[dataset]);
    expect(result.records).toBeGreaterThan(0);
    expect(result.problems).toEqual({});
  });

  it.each(OTHER_TABLES)('%s', async (table, column, schema) => {
    const result = await check(table, column, schema);
    expect(result.records).toBeGreaterThan(0);
    expect(result.problems).toEqual({});
  });

  it('tickers are MIC:SYMBOL', async () => {
    const rows = await sandbox.app.sandbox.store.query(
      `SELECT json ->> 'ticker' AS ticker FROM ${datasetTable('firmographics')} WHERE json ->> 'ticker' IS NOT NULL`,
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(String(row.ticker)).toMatch(/^[A-Z0-9]{4}:[A-Z]{3,4}$/);
  });
});
