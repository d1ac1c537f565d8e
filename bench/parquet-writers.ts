// Compares Parquet writers on a firmographics-like table: rows/s, peak RSS, file size, nested types,
// and whether DuckDB reads each file back with the expected types and the same values.
//
//   npx tsx bench/parquet-writers.ts [--rows 200000] [--writers generate-only,duckdb,hyparquet,parquet-wasm] [--streamed]
//
// Each writer runs in its own child process so its peak RSS (getrusage maxrss) is its own. As in the
// reference measurements, the child generates all rows first (batches of 5,000) and then times the
// writer alone, so peak RSS includes the held rows (compare with generate-only). With --streamed each
// batch is generated as the writer pulls it, and generation time is subtracted from the writer's.
import { DuckDBInstance } from '@duckdb/node-api';
import type { DataType, Vector } from 'apache-arrow';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describedType } from './parquet/schema.js';
import { ParquetTableWriter } from './parquet/table-writer.js';
import { jsonText } from '../storage/files.js';
import {
  FINGERPRINT_SQL,
  FIRMOGRAPHICS_SCHEMA,
  firmographicsBatch,
  type FirmographicsRow,
} from './firmographics-workload.js';

const BATCH = 5000;
const WRITERS = ['generate-only', 'duckdb', 'hyparquet', 'parquet-wasm'] as const;
type WriterName = (typeof WRITERS)[number];

interface ChildResult {
  writer: WriterName;
  rows: number;
  wallMs: number;
  generateMs: number;
  /** CPU time of the whole process (all threads), and of the generation part of it. */
  cpuMs: number;
  generateCpuMs: number;
  peakRssBytes: number;
  note: string;
}

interface Clock {
  generateMs: number;
  generateCpuMs: number;
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** Yields batches, adding the wall and CPU time spent generating them to `clock`. */
function* batches(rows: number, clock: Clock): Generator<FirmographicsRow[]> {
  for (let from = 0; from < rows; from += BATCH) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const batch = firmographicsBatch(from, Math.min(BATCH, rows - from));
    clock.generateMs += performance.now() - started;
    clock.generateCpuMs += cpuMsSince(cpu);
    yield batch;
  }
}

/** The rows to write, in batches: pre-generated, or generated as they are pulled (`--streamed`). */
type BatchSource = () => Iterable<FirmographicsRow[]>;

async function writeWithDuckDB(file: string, source: BatchSource): Promise<string> {
  const writer = await ParquetTableWriter.create({
    schema: FIRMOGRAPHICS_SCHEMA,
    destination: { path: file },
  });
  for (const batch of source()) await writer.write(batch as unknown as Record<string, unknown>[]);
  await writer.finish();
  return 'storage/ ParquetTableWriter: JSONL spill → DuckDB COPY, ZSTD, 1 thread, memory_limit 128MB, row groups of 50,000';
}

async function writeWithHyparquet(file: string, source: BatchSource): Promise<string> {
  const { parquetWriteRows, fileWriter } = await import('hyparquet-writer');
  const optionalString = (name: string) =>
    ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' }) as const;
  const schema = [
    { name: 'root', num_children: FIRMOGRAPHICS_SCHEMA.length },
    ...['business_id', 'name', 'domain', 'website', 'description', 'industry', 'country_code'].map(
      optionalString,
    ),
    { name: 'employees', type: 'INT32', repetition_type: 'OPTIONAL' },
    { name: 'founded_year', type: 'INT32', repetition_type: 'OPTIONAL' },
    { name: 'revenue_usd', type: 'INT64', repetition_type: 'OPTIONAL' },
    { name: 'growth_rate', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
    { name: 'rating', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
    { name: 'is_public', type: 'BOOLEAN', repetition_type: 'OPTIONAL' },
    {
      name: 'updated_at',
      type: 'INT64',
      repetition_type: 'OPTIONAL',
      converted_type: 'TIMESTAMP_MICROS',
      logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
    },
    { name: 'naics_codes', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    optionalString('element'),
    { name: 'headquarters', repetition_type: 'OPTIONAL', num_children: 4 },
    ...['city', 'region', 'country', 'postal_code'].map(optionalString),
    { name: 'offices', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', repetition_type: 'OPTIONAL', num_children: 2 },
    optionalString('city'),
    { name: 'employees', type: 'INT32', repetition_type: 'OPTIONAL' },
  ];
  function* rowsForHyparquet() {
    for (const batch of source()) {
      // INT64 columns take bigint values.
      for (const row of batch)
        yield { ...row, revenue_usd: row.revenue_usd === null ? null : BigInt(row.revenue_usd) };
    }
  }
  await parquetWriteRows({
    writer: fileWriter(file),
    rows: rowsForHyparquet(),
    columns: FIRMOGRAPHICS_SCHEMA.map((c) => ({ name: c.name })),
    schema: schema as never,
    codec: 'SNAPPY',
    rowGroupSize: 50_000,
  });
  return 'parquetWriteRows, SNAPPY (ZSTD needs a compressor plug-in on Node 20), row groups of 50,000';
}

async function writeWithParquetWasm(file: string, source: BatchSource): Promise<string> {
  const arrow = await import('apache-arrow');
  const wasm = await import('parquet-wasm');
  const { createWriteStream } = await import('node:fs');
  const { Writable } = await import('node:stream');
  const utf8 = () => new arrow.Utf8();
  const field = (name: string, type: DataType) => new arrow.Field(name, type, true);
  const hqType = new arrow.Struct([
    field('city', utf8()),
    field('region', utf8()),
    field('country', utf8()),
    field('postal_code', utf8()),
  ]);
  const officeType = new arrow.Struct([field('city', utf8()), field('employees', new arrow.Int32())]);
  const types: Record<string, DataType> = {
    business_id: utf8(),
    name: utf8(),
    domain: utf8(),
    website: utf8(),
    description: utf8(),
    industry: utf8(),
    country_code: utf8(),
    employees: new arrow.Int32(),
    founded_year: new arrow.Int32(),
    revenue_usd: new arrow.Int64(),
    growth_rate: new arrow.Float64(),
    rating: new arrow.Float64(),
    is_public: new arrow.Bool(),
    updated_at: new arrow.TimestampMicrosecond('UTC'),
    naics_codes: new arrow.List(field('element', utf8())),
    headquarters: hqType,
    offices: new arrow.List(field('element', officeType)),
  };
  const props = new wasm.WriterPropertiesBuilder()
    .setCompression(wasm.Compression.ZSTD)
    .setMaxRowGroupSize(50_000)
    .build();
  const groupRows = 50_000;
  const pending = source()[Symbol.iterator]();
  const recordBatches = new ReadableStream({
    pull(controller) {
      const group: FirmographicsRow[] = [];
      while (group.length < groupRows) {
        const next = pending.next();
        if (next.done) break;
        group.push(...next.value);
      }
      if (group.length === 0) {
        controller.close();
        return;
      }
      const columns: Record<string, Vector> = {};
      for (const [name, type] of Object.entries(types)) {
        const values = group.map((row) => {
          const value = (row as unknown as Record<string, unknown>)[name];
          if (value === null) return null;
          if (name === 'revenue_usd') return BigInt(value as number);
          if (name === 'updated_at') return (value as Date).getTime(); // apache-arrow takes epoch ms and scales to the unit
          return value;
        });
        columns[name] = arrow.vectorFromArray(values as never, type);
      }
      const table = new arrow.Table(columns);
      const wasmTable = wasm.Table.fromIPCStream(arrow.tableToIPC(table, 'stream'));
      for (const batch of wasmTable.recordBatches()) controller.enqueue(batch);
      wasmTable.free();
    },
  });
  const parquetStream = await wasm.transformParquetStream(recordBatches, props);
  await parquetStream.pipeTo(Writable.toWeb(createWriteStream(file)));
  return 'apache-arrow builders → transformParquetStream, ZSTD, row groups of 50,000';
}

async function runChild(
  writer: WriterName,
  file: string,
  rows: number,
  streamed: boolean,
): Promise<ChildResult> {
  const clock: Clock = { generateMs: 0, generateCpuMs: 0 };
  // Like the reference measurements, rows are generated before the clock starts unless --streamed.
  const pregenerated = streamed ? undefined : [...batches(rows, clock)];
  const generated = { ...clock };
  const source: BatchSource = () => pregenerated ?? batches(rows, clock);
  const started = performance.now();
  const cpu = process.cpuUsage();
  let note: string;
  if (writer === 'generate-only') {
    for (const batch of source()) if (batch.length === 0) break;
    note = streamed ? 'rows generated and dropped' : 'rows generated and held';
  } else if (writer === 'duckdb') note = await writeWithDuckDB(file, source);
  else if (writer === 'hyparquet') note = await writeWithHyparquet(file, source);
  else note = await writeWithParquetWasm(file, source);
  return {
    writer,
    rows,
    wallMs: performance.now() - started + generated.generateMs,
    generateMs: clock.generateMs,
    cpuMs: cpuMsSince(cpu) + generated.generateCpuMs,
    generateCpuMs: clock.generateCpuMs,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    note,
  };
}

interface ReadBack {
  typesOk: boolean;
  typeProblems: string[];
  fingerprint: string;
}

async function readBack(file: string): Promise<ReadBack> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run("SET TimeZone = 'UTC'");
    const quoted = `'${file.replaceAll("'", "''")}'`;
    const described = (
      await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quoted})`)
    ).getRowObjectsJson();
    const typeProblems: string[] = [];
    for (const column of FIRMOGRAPHICS_SCHEMA) {
      const got = described.find((r) => r.column_name === column.name)?.column_type;
      const want = describedType(column.type);
      if (got !== want)
        typeProblems.push(`${column.name}: ${got === undefined ? 'missing' : jsonText(got)} (want ${want})`);
    }
    const fingerprint = (
      await connection.runAndReadAll(FINGERPRINT_SQL.replace('$file', quoted))
    ).getRowObjectsJson();
    return { typesOk: typeProblems.length === 0, typeProblems, fingerprint: JSON.stringify(fingerprint[0]) };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '200000' },
      writers: { type: 'string', default: WRITERS.join(',') },
      streamed: { type: 'boolean', default: false },
      child: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const rows = Number(values.rows);
  if (values.child) {
    const result = await runChild(values.child as WriterName, values.out!, rows, values.streamed);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const writers = values.writers.split(',') as WriterName[];
  const loadBefore = loadavg();
  const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-bench-parquet-'));
  const self = fileURLToPath(import.meta.url);
  const results: (ChildResult & { bytes?: number; readBack?: ReadBack; error?: string })[] = [];
  try {
    for (const writer of writers) {
      const file = path.join(dir, `${writer}.parquet`);
      const child = spawnSync(
        process.execPath,
        [
          ...process.execArgv,
          self,
          '--child',
          writer,
          '--rows',
          String(rows),
          '--out',
          file,
          ...(values.streamed ? ['--streamed'] : []),
        ],
        {
          encoding: 'utf8',
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      const line = child.stdout.trim().split('\n').at(-1) ?? '';
      if (child.status !== 0 || !line.startsWith('{')) {
        results.push({
          writer,
          rows,
          wallMs: 0,
          generateMs: 0,
          cpuMs: 0,
          generateCpuMs: 0,
          peakRssBytes: 0,
          note: '',
          error: child.stderr.trim().split('\n').slice(-3).join(' '),
        });
        continue;
      }
      const result = JSON.parse(line) as ChildResult;
      if (writer === 'generate-only') {
        results.push(result);
        continue;
      }
      results.push({ ...result, bytes: statSync(file).size, readBack: await readBack(file) });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const reference = results.find((r) => r.writer === 'duckdb')?.readBack?.fingerprint;
  const load = (label: string, l: number[]) => `${label} ${l.map((x) => x.toFixed(1)).join(' ')}`;
  console.log(
    `Parquet writers: ${rows.toLocaleString('en-US')} firmographics rows (17 columns incl. LIST, STRUCT, LIST<STRUCT>, ~30 % nulls), ` +
      `${values.streamed ? 'generated while writing' : 'generated before the clock starts'}, ` +
      `Node ${process.version}, ${cpus().length} CPUs, ${load('load average before', loadBefore)}, ${load('after', loadavg())}\n`,
  );
  console.log(
    "| writer | write s | rows/s written | write CPU s | rows/s per CPU s | peak RSS MB | file MB | DuckDB types | values = DuckDB writer's | notes |",
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    if (r.error) {
      console.log(`| ${r.writer} | failed | | | | | | | | ${r.error.replaceAll('|', '/')} |`);
      continue;
    }
    const generateOnly = r.writer === 'generate-only';
    const writeMs = r.wallMs - r.generateMs;
    const writeCpuMs = r.cpuMs - r.generateCpuMs;
    const perSecond = (ms: number) =>
      generateOnly ? '–' : Math.round((r.rows / ms) * 1000).toLocaleString('en-US');
    const types = r.readBack
      ? r.readBack.typesOk
        ? 'as expected'
        : r.readBack.typeProblems.join('; ')
      : '–';
    const same = r.readBack
      ? r.readBack.fingerprint === reference
        ? 'yes'
        : `no: ${r.readBack.fingerprint}`
      : '–';
    const seconds = (ms: number) => (ms / 1000).toFixed(2);
    console.log(
      `| ${r.writer} | ${generateOnly ? `(generation: ${seconds(r.generateMs)})` : seconds(writeMs)} | ${perSecond(writeMs)} | ` +
        `${generateOnly ? `(${seconds(r.generateCpuMs)})` : seconds(writeCpuMs)} | ${perSecond(writeCpuMs)} | ${mb(r.peakRssBytes)} | ` +
        `${r.bytes === undefined ? '–' : mb(r.bytes)} | ${types} | ${same} | ${r.note} |`,
    );
  }
  const duck = results.find((r) => r.writer === 'duckdb' && !r.error);
  if (duck) {
    const rate = Math.round((duck.rows / (duck.wallMs - duck.generateMs)) * 1000);
    const cpuRate = Math.round((duck.rows / (duck.cpuMs - duck.generateCpuMs)) * 1000);
    console.log(
      `\nduckdb writer: ${rate.toLocaleString('en-US')} rows/s written (wall), ${cpuRate.toLocaleString('en-US')} rows per CPU second ` +
        `(target ≥ 100,000 rows/s): ${rate >= 100_000 ? 'met' : 'NOT met on this run'}`,
    );
  }
}

await main();
