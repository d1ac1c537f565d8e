// Measures the input reader on a generated 1,000,000-row company list: rows/s and peak RSS per format.
// The planning target is a 1,000,000-row CSV at ≥ 100,000 rows/s within 300 MB.
//
//   npx tsx bench/input-read.ts [--rows 1000000] [--formats csv,jsonl,parquet]
//
// The files are generated in a temp folder (the CSV by this script, JSON Lines and Parquet converted
// from it by DuckDB) and deleted afterwards. Each read runs in its own child process so its peak RSS
// (getrusage maxrss, including Node, tsx and DuckDB) is its own.
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openInputFile, withDuckDb, type InputFormat } from '../storage/index.js';

interface ReadResult {
  format: InputFormat | 'baseline';
  rows: number;
  rejects: number;
  ms: number;
  peakRssBytes: number;
}

async function generateCsv(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  out.write('company_name,website,linkedin_url,country,city,employees\r\n');
  const countries = ['US', 'FR', 'DE', 'GB', 'CA', 'ES'];
  const cities = ['Austin', 'Paris', 'Berlin', 'Leeds', 'Toronto', 'Madrid'];
  let buffer = '';
  for (let i = 1; i <= rows; i++) {
    // Every fifth name has a comma (so it is quoted), every 50th an escaped quote.
    const name =
      i % 50 === 0 ? `"The ""Best"" Co ${i}"` : i % 5 === 0 ? `"Company ${i}, Inc."` : `Company ${i}`;
    buffer += `${name},https://www.company${i}.example.com/,https://network.example/company/company-${i},${countries[i % 6]},${cities[i % 6]},${(i * 7) % 5000}\r\n`;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(buffer);
  await once(out, 'finish');
}

async function readOnce(file: string, format: InputFormat | 'baseline'): Promise<ReadResult> {
  const started = performance.now();
  let rows = 0;
  let rejects = 0;
  let named = 0;
  if (format !== 'baseline') {
    const input = await openInputFile({ path: file }, { format });
    for await (const chunk of input.chunks()) {
      rows += chunk.rows.length;
      rejects += chunk.rejects.length;
      for (const row of chunk.rows) if (row.values.company_name) named += 1; // touch the values
    }
    if (named !== rows) throw new Error(`expected a name on every row, got ${named} of ${rows}`);
  }
  return {
    format,
    rows,
    rejects,
    ms: performance.now() - started,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' },
      formats: { type: 'string', default: 'csv,jsonl,parquet' },
      child: { type: 'string' },
      file: { type: 'string' },
    },
  });
  if (values.child) {
    const result = await readOnce(values.file ?? '', values.child as InputFormat | 'baseline');
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const rows = Number(values.rows);
  const formats = values.formats.split(',') as InputFormat[];
  const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-bench-input-'));
  const self = fileURLToPath(import.meta.url);
  try {
    const csv = path.join(dir, 'companies.csv');
    await generateCsv(csv, rows);
    const files: Record<InputFormat, string> = {
      csv,
      jsonl: path.join(dir, 'companies.jsonl'),
      parquet: path.join(dir, 'companies.parquet'),
    };
    await withDuckDb({}, async (connection) => {
      const source = `read_csv('${csv}', header = true, all_varchar = true)`;
      if (formats.includes('jsonl'))
        await connection.run(`COPY (SELECT * FROM ${source}) TO '${files.jsonl}' (FORMAT JSON)`);
      if (formats.includes('parquet'))
        await connection.run(
          `COPY (SELECT * FROM ${source}) TO '${files.parquet}' (FORMAT PARQUET, COMPRESSION ZSTD)`,
        );
    });
    const results: (ReadResult & { bytes: number })[] = [];
    for (const format of ['baseline', ...formats] as const) {
      const file = format === 'baseline' ? '' : files[format];
      const child = spawnSync(
        process.execPath,
        [...process.execArgv, self, '--child', format, '--file', file],
        { encoding: 'utf8' },
      );
      const line = child.stdout.trim().split('\n').at(-1) ?? '';
      if (child.status !== 0 || !line.startsWith('{'))
        throw new Error(`${format} read failed: ${child.stderr}`);
      results.push({ ...(JSON.parse(line) as ReadResult), bytes: file ? statSync(file).size : 0 });
    }
    console.log(`Input reader: ${rows.toLocaleString('en-US')} company rows, Node ${process.version}\n`);
    console.log('| format | file MB | rows read | rejects | seconds | rows/s | peak RSS MB |');
    console.log('|---|---|---|---|---|---|---|');
    for (const r of results) {
      const rate = r.format === 'baseline' ? '–' : Math.round(r.rows / (r.ms / 1000)).toLocaleString('en-US');
      console.log(
        `| ${r.format === 'baseline' ? 'baseline (process, no read)' : r.format} | ${r.bytes ? (r.bytes / 1e6).toFixed(1) : '–'} | ${r.rows.toLocaleString('en-US')} | ${r.rejects} | ${(r.ms / 1000).toFixed(2)} | ${rate} | ${(r.peakRssBytes / 1e6).toFixed(0)} |`,
      );
    }
    const csvResult = results.find((r) => r.format === 'csv');
    if (csvResult) {
      const rate = csvResult.rows / (csvResult.ms / 1000);
      const rss = csvResult.peakRssBytes / 1e6;
      const met = rate >= 100_000 && rss <= 300 && csvResult.rows === rows;
      console.log(
        `\ncsv: ${Math.round(rate).toLocaleString('en-US')} rows/s, peak RSS ${rss.toFixed(0)} MB (target ≥ 100,000 rows/s, ≤ 300 MB): ${met ? 'met' : 'NOT met'}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
