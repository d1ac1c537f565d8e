// Benchmark of writing Parquet on the commit path (issue 4): N firmographics records as the batch calls
// leave them (JSON Lines files of 50 records each), merged by the real `commitTable` activity into a
// ZSTD Parquet table typed from the contract. Prints rows/s.   npx tsx bench/commit.ts [--rows 200000]
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createActivities } from '../activities/index.js';
import { runLayout } from '../pipeline/run-layout.js';
import { loadConfig } from '../config/index.js';
import { silentLogger } from '../lib/logger.js';
import { storeResolverFor } from '../workers/worker.js';
import { rssMb } from './support.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '200000' } } });
const rows = Number(values.rows);
const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-bench-commit-'));
const run = { runId: 'bench', output: path.join(dir, 'out') + '/' };
const resultsDir = path.join(dir, 'out', 'bench', runLayout.resultsPrefix('firmographics'));
mkdirSync(resultsDir, { recursive: true });

const sizes = ['1-10', '11-50', '51-200', '201-500', '501-1000', '1001-5000', '5001-10000', '10001+'];
for (let batch = 0; batch * 50 < rows; batch += 1) {
  const lines: string[] = [];
  for (let i = batch * 50; i < Math.min(rows, batch * 50 + 50); i += 1) {
    const id = i.toString(16).padStart(32, '0');
    lines.push(
      JSON.stringify({
        business_id: id,
        data: {
          business_id: id,
          name: `Company ${i} Holdings`,
          business_description:
            i % 3 === 0
              ? null
              : `Company ${i} makes industrial sensors and software for utilities and plants.`,
          website: `https://www.company-${i}.example.com`,
          country_name: 'united states',
          region_name: 'california',
          city_name: i % 4 === 0 ? null : 'san jose',
          street: `${i % 900} market street`,
          zip_code: String(95000 + (i % 999)),
          naics: '334513',
          naics_description: 'Instruments and Related Products Manufacturing',
          sic_code: '3823',
          sic_code_description: 'Industrial Instruments',
          ticker: i % 10 === 0 ? `C${i % 1000}` : null,
          number_of_employees_range: sizes[i % sizes.length],
          yearly_revenue_range: '10M-25M',
          network_industry_category: 'automation machinery manufacturing',
          network_profile: `network.example/company/company-${i}`,
          business_logo: `https://logos.example.com/${id}.png`,
          locations_distribution: [
            { country: 'us', employee_count: 40 + (i % 60) },
            { country: 'de', employee_count: 5 + (i % 9) },
          ],
        },
      }),
    );
  }
  writeFileSync(
    path.join(
      resultsDir,
      `c${String(Math.floor(batch / 20)).padStart(5, '0')}-b${String(batch % 20).padStart(4, '0')}.jsonl`,
    ),
    lines.join('\n') + '\n',
  );
}

const activities = createActivities({
  calls: {} as never,
  resolveStore: storeResolverFor(loadConfig({ env: {} })),
  logger: silentLogger,
  workDir: dir,
});
const before = rssMb('self', 'VmRSS');
const started = Date.now();
const table = await activities.commitTable({ run, dataset: 'firmographics' });
const seconds = (Date.now() - started) / 1000;
console.log(
  `committed ${table.rows} firmographics rows from ${Math.ceil(rows / 50)} batch files in ${seconds.toFixed(1)} s = ${Math.round(table.rows / seconds)} rows/s; ${table.files.length} file(s), ${(table.files.reduce((s, f) => s + f.bytes, 0) / 1e6).toFixed(1)} MB; RSS ${before.toFixed(0)} MB before, peak ${rssMb('self', 'VmHWM').toFixed(0)} MB`,
);
