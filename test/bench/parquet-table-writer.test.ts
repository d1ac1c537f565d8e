// The benchmarks' own Parquet writer (the pipeline writes tables with DuckDB's COPY): every column kind comes back from DuckDB with the expected type and value; files
// land atomically locally and in S3 with their row count and checksum; small parts merge into large
// files in order.
import { DuckDBInstance } from '@duckdb/node-api';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  countParquetRows,
  createParquetSink,
  describeParquetFile,
  mergeParquetParts,
  ParquetWriteError,
  readParquetRows,
  writeParquetFile,
} from '../../bench/parquet/table-writer.js';
import { describedType, InvalidParquetSchemaError, type ParquetSchema } from '../../bench/parquet/schema.js';
import { LocalObjectStore, S3ObjectStore, type FileLocation, type ObjectStore } from '../../storage/index.js';
import { uniquePrefix, useTestS3, type TestS3 } from '../storage/s3-server.js';

const dir = mkdtempSync(path.join(tmpdir(), 'enrichflow-parquet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Reads a file with a DuckDB of the test's own, independent of the code under test. */
async function duckdbRead(file: string, sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run("SET TimeZone = 'UTC'");
    const reader = await connection.runAndReadAll(sql.replaceAll('$file', `'${file.replaceAll("'", "''")}'`));
    return reader.getRowObjectsJS();
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function allRows(location: FileLocation): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for await (const batch of readParquetRows(location)) rows.push(...batch);
  return rows;
}

const FIRMOGRAPHICS: ParquetSchema = [
  { name: 'business_id', type: 'string' },
  { name: 'employees', type: 'int32' },
  { name: 'revenue_usd', type: 'int64' },
  { name: 'growth_rate', type: 'double' },
  { name: 'is_public', type: 'boolean' },
  { name: 'updated_at', type: 'timestamptz' },
  { name: 'naics_codes', type: { list: 'string' } },
  {
    name: 'headquarters',
    type: {
      struct: [
        { name: 'city', type: 'string' },
        { name: 'country code', type: 'string' },
        { name: 'employees', type: 'int32' },
      ],
    },
  },
  {
    name: 'offices',
    type: {
      list: {
        struct: [
          { name: 'city', type: 'string' },
          { name: 'opened', type: 'timestamptz' },
        ],
      },
    },
  },
  { name: 'raw_attributes', type: 'json' },
];

describe('ParquetTableWriter', () => {
  it('writes every column kind, with nulls, and DuckDB reads back the expected types and values', async () => {
    const file = path.join(dir, 'kinds.parquet');
    const info = await writeParquetFile({ schema: FIRMOGRAPHICS, destination: { path: file } }, [
      {
        business_id: 'b-1',
        employees: 250,
        revenue_usd: 9_007_199_254_740_993n,
        growth_rate: 0.125,
        is_public: true,
        updated_at: new Date('2025-03-04T05:06:07.890Z'),
        naics_codes: ['5112', '5415'],
        headquarters: { city: 'Paris', 'country code': 'FR', employees: 40 },
        offices: [
          { city: 'Lyon', opened: '2019-01-02T00:00:00Z' },
          { city: 'Nice', opened: null },
        ],
        raw_attributes: { source: 'x', scores: [1, 2.5] },
        not_in_schema: 'ignored',
      },
      {
        business_id: 'b-2',
        employees: null,
        growth_rate: Number.NaN,
        naics_codes: [],
        headquarters: { city: null },
        offices: null,
        raw_attributes: 'plain string',
      },
      { business_id: 'b-3' },
    ]);
    expect(info).toMatchObject({ location: file, rowCount: 3 });
    expect(info.sha256).toBe(createHash('sha256').update(readFileSync(file)).digest('hex'));
    expect(info.bytes).toBe(readFileSync(file).length);

    const described = await duckdbRead(file, 'DESCRIBE SELECT * FROM read_parquet($file)');
    expect(described.map((r) => [r.column_name, r.column_type])).toEqual([
      ['business_id', 'VARCHAR'],
      ['employees', 'INTEGER'],
      ['revenue_usd', 'BIGINT'],
      ['growth_rate', 'DOUBLE'],
      ['is_public', 'BOOLEAN'],
      ['updated_at', 'TIMESTAMP WITH TIME ZONE'],
      ['naics_codes', 'VARCHAR[]'],
      ['headquarters', 'STRUCT(city VARCHAR, "country code" VARCHAR, employees INTEGER)'],
      ['offices', 'STRUCT(city VARCHAR, opened TIMESTAMP WITH TIME ZONE)[]'],
      ['raw_attributes', 'VARCHAR'],
    ]);
    expect(described.map((r) => r.column_type)).toEqual(FIRMOGRAPHICS.map((c) => describedType(c.type)));

    const rows = await duckdbRead(file, 'SELECT * FROM read_parquet($file)');
    expect(rows).toEqual([
      {
        business_id: 'b-1',
        employees: 250,
        revenue_usd: 9_007_199_254_740_993n,
        growth_rate: 0.125,
        is_public: true,
        updated_at: new Date('2025-03-04T05:06:07.890Z'),
        naics_codes: ['5112', '5415'],
        headquarters: { city: 'Paris', 'country code': 'FR', employees: 40 },
        offices: [
          { city: 'Lyon', opened: new Date('2019-01-02T00:00:00Z') },
          { city: 'Nice', opened: null },
        ],
        raw_attributes: '{"source":"x","scores":[1,2.5]}',
      },
      {
        business_id: 'b-2',
        employees: null,
        revenue_usd: null,
        growth_rate: null,
        is_public: null,
        updated_at: null,
        naics_codes: [],
        headquarters: { city: null, 'country code': null, employees: null },
        offices: null,
        raw_attributes: '"plain string"',
      },
      {
        business_id: 'b-3',
        employees: null,
        revenue_usd: null,
        growth_rate: null,
        is_public: null,
        updated_at: null,
        naics_codes: null,
        headquarters: null,
        offices: null,
        raw_attributes: null,
      },
    ]);
    expect(await allRows({ path: file })).toEqual(rows);

    // Warehouse-facing details: ZSTD everywhere, timestamps flagged as UTC instants.
    const meta = await duckdbRead(file, 'SELECT DISTINCT compression FROM parquet_metadata($file)');
    expect(meta).toEqual([{ compression: 'ZSTD' }]);
    const schema = await duckdbRead(
      file,
      "SELECT logical_type FROM parquet_schema($file) WHERE name = 'updated_at'",
    );
    expect(String(schema[0]?.logical_type)).toMatch(/isAdjustedToUTC=1/);
  });

  it('writes rows in batches through the sink, memory-bounded by a spill file', async () => {
    const file = path.join(dir, 'batches.parquet');
    const sink = await createParquetSink({ schema: FIRMOGRAPHICS.slice(0, 3), destination: { path: file } });
    for (let batch = 0; batch < 20; batch++) {
      await sink.write(
        Array.from({ length: 2500 }, (_, i) => ({
          business_id: `b-${batch * 2500 + i}`,
          employees: i,
          revenue_usd: i * 10,
        })),
      );
    }
    expect(sink.rowCount).toBe(50_000);
    const info = await sink.finish();
    expect(info.rowCount).toBe(50_000);
    expect(await countParquetRows({ path: file })).toBe(50_000);
    const order = await duckdbRead(
      file,
      "SELECT count(*) FILTER (WHERE business_id <> 'b-' || (file_row_number)::VARCHAR) AS out_of_order FROM read_parquet($file, file_row_number = true)",
    );
    expect(order).toEqual([{ out_of_order: 0n }]);
  });

  it('writes a table with no rows as a file with the schema', async () => {
    const file = path.join(dir, 'empty.parquet');
    const info = await writeParquetFile({ schema: FIRMOGRAPHICS, destination: { path: file } }, []);
    expect(info.rowCount).toBe(0);
    const description = await describeParquetFile({ path: file });
    expect(description.rowCount).toBe(0);
    expect(description.columns.map((c) => c.type)).toEqual(FIRMOGRAPHICS.map((c) => describedType(c.type)));
  });

  it('fails with ParquetWriteError on a value that does not fit its column, leaving nothing behind', async () => {
    const file = path.join(dir, 'bad.parquet');
    await expect(
      writeParquetFile({ schema: [{ name: 'employees', type: 'int32' }], destination: { path: file } }, [
        { employees: 'many' },
      ]),
    ).rejects.toSatisfy(
      (e) => e instanceof ParquetWriteError && /bad\.parquet/.test(e.message) && /many/.test(e.message),
    );
    expect(existsSync(file)).toBe(false);
  });

  it('refuses schemas DuckDB could not write', async () => {
    const destination = { path: path.join(dir, 'never.parquet') };
    await expect(
      createParquetSink({
        schema: [
          { name: 'Name', type: 'string' },
          { name: 'name', type: 'string' },
        ],
        destination,
      }),
    ).rejects.toBeInstanceOf(InvalidParquetSchemaError);
    await expect(
      createParquetSink({ schema: [{ name: 'x', type: { list: { struct: [] } } }], destination }),
    ).rejects.toBeInstanceOf(InvalidParquetSchemaError);
    await expect(
      createParquetSink({ schema: [{ name: 'x', type: 'decimal' as never }], destination }),
    ).rejects.toBeInstanceOf(InvalidParquetSchemaError);
  });
});

/** Parts of `rows` rows each with incompressible text, so sizes are predictable. */
async function writeParts(
  store: ObjectStore,
  prefix: string,
  parts: number,
  rows: number,
): Promise<string[]> {
  const keys: string[] = [];
  for (let p = 0; p < parts; p++) {
    const key = `${prefix}parts/part-${String(p).padStart(4, '0')}.parquet`;
    await writeParquetFile(
      {
        schema: [
          { name: 'seq', type: 'int64' },
          { name: 'noise', type: 'string' },
        ],
        destination: { store, key },
        rowGroupSize: 500,
      },
      Array.from({ length: rows }, (_, i) => ({ seq: p * rows + i, noise: randomBytes(48).toString('hex') })),
    );
    keys.push(key);
  }
  return keys;
}

async function checkMerged(store: ObjectStore, keys: string[], totalRows: number): Promise<void> {
  let next = 0;
  for (const key of keys) {
    for (const row of await allRows({ store, key })) {
      expect(row.seq).toBe(BigInt(next));
      next += 1;
    }
  }
  expect(next).toBe(totalRows);
}

describe('mergeParquetParts', () => {
  const store = new LocalObjectStore(path.join(dir, 'store'));

  it('merges many parts into files of at least the target size, keeping row order and counts', async () => {
    // 13 parts: DuckDB's last file comes out small and must be folded into the one before it.
    const parts = await writeParts(store, 'big/', 13, 2000);
    const target = 400 * 1024;
    const partBytes = (await Promise.all(parts.map((k) => store.head(k)))).reduce(
      (sum, h) => sum + (h?.size ?? 0),
      0,
    );
    expect(partBytes).toBeGreaterThan(3 * target); // so the merge must produce several files
    const merged = await mergeParquetParts({
      store,
      parts,
      outputKey: (i) => `big/table/part-${String(i).padStart(5, '0')}.parquet`,
      targetBytes: target,
      rowGroupSize: 500,
    });
    expect(merged.length).toBeGreaterThanOrEqual(2);
    for (const file of merged) {
      expect(file.bytes).toBeGreaterThanOrEqual(target);
      expect((await store.head(file.key!))?.size).toBe(file.bytes);
      expect(await countParquetRows({ store, key: file.key! })).toBe(file.rowCount);
    }
    expect(merged.map((f) => f.key)).toEqual(
      merged.map((_, i) => `big/table/part-${String(i).padStart(5, '0')}.parquet`),
    );
    expect(merged.reduce((sum, f) => sum + f.rowCount, 0)).toBe(26_000);
    await checkMerged(
      store,
      merged.map((f) => f.key!),
      26_000,
    );

    // Deterministic: merging again gives byte-identical files.
    const again = await mergeParquetParts({
      store,
      parts,
      outputKey: (i) => `big/again/${i}.parquet`,
      targetBytes: target,
      rowGroupSize: 500,
    });
    expect(again.map((f) => f.sha256)).toEqual(merged.map((f) => f.sha256));
  });

  it('puts a table smaller than the target in one file', async () => {
    const parts = await writeParts(store, 'small/', 5, 100);
    const merged = await mergeParquetParts({ store, parts, outputKey: (i) => `small/table-${i}.parquet` });
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({ key: 'small/table-0.parquet', rowCount: 500 });
    await checkMerged(store, ['small/table-0.parquet'], 500);
  });

  it('merges parts without rows into one file with the schema', async () => {
    const schema: ParquetSchema = [
      { name: 'id', type: 'string' },
      { name: 'tags', type: { list: 'string' } },
    ];
    const parts = ['empty/a.parquet', 'empty/b.parquet'];
    for (const key of parts) await writeParquetFile({ schema, destination: { store, key } }, []);
    const merged = await mergeParquetParts({ store, parts, outputKey: () => 'empty/table.parquet' });
    expect(merged.map((f) => [f.key, f.rowCount])).toEqual([['empty/table.parquet', 0]]);
    const described = await describeParquetFile({ store, key: 'empty/table.parquet' });
    expect(described.columns.map((c) => c.type)).toEqual(['VARCHAR', 'VARCHAR[]']);
  });

  it('returns no files for no parts', async () => {
    expect(await mergeParquetParts({ store, parts: [], outputKey: () => 'none.parquet' })).toEqual([]);
  });
});

describe('Parquet in S3', () => {
  let s3: TestS3;
  let store: S3ObjectStore;
  const prefix = uniquePrefix('parquet');
  beforeAll(async () => {
    s3 = await useTestS3();
    store = new S3ObjectStore({
      bucket: s3.bucket,
      connection: {
        endpoint: s3.endpoint,
        region: s3.region,
        forcePathStyle: true,
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
      },
    });
  });
  afterAll(async () => {
    store.close();
    await s3.stop();
  });

  it('writes a part to a key, describes it and merges parts held in the bucket', async () => {
    const info = await writeParquetFile(
      { schema: FIRMOGRAPHICS, destination: { store, key: `${prefix}one.parquet` } },
      [{ business_id: 'b-1', naics_codes: ['1'] }],
    );
    expect(info).toMatchObject({
      key: `${prefix}one.parquet`,
      location: `s3://${s3.bucket}/${prefix}one.parquet`,
      rowCount: 1,
    });
    const bytes = await store.getBytes(`${prefix}one.parquet`);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(info.sha256);
    const described = await describeParquetFile({ store, key: `${prefix}one.parquet` });
    expect(described.columns.map((c) => c.type)).toEqual(FIRMOGRAPHICS.map((c) => describedType(c.type)));

    const parts = await writeParts(store, prefix, 3, 50);
    const merged = await mergeParquetParts({
      store,
      parts,
      outputKey: (i) => `${prefix}merged/${i}.parquet`,
    });
    expect(merged.map((f) => [f.key, f.rowCount])).toEqual([[`${prefix}merged/0.parquet`, 150]]);
    await checkMerged(store, [`${prefix}merged/0.parquet`], 150);
  });
});
