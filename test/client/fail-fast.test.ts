import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataServiceClient, ValidationError } from '../../client/index.js';
import type { BulkDataset } from '../../contract/index.js';
import { startCannedServer, type CannedServer } from './canned-server.js';

const ids = (count: number) =>
  Array.from({ length: count }, (_, i) => (i + 1).toString(16).padStart(32, '0'));

let server: CannedServer;
let client: DataServiceClient;

beforeAll(async () => {
  server = await startCannedServer();
  client = new DataServiceClient({ baseUrl: server.url, apiKey: 'k' });
});
afterAll(async () => {
  await client.close();
  await server.close();
});

async function refused(call: Promise<unknown>): Promise<ValidationError> {
  const error = await call.then(
    () => {
      throw new Error('expected a ValidationError');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  expect(error).toMatchObject({
    name: 'ValidationError',
    code: 'VALIDATION_FAILED',
    sent: false,
    status: undefined,
  });
  return error as ValidationError;
}

describe('requests the contract rejects are never sent', () => {
  it('51 business ids', async () => {
    const error = await refused(client.bulkEnrich('firmographics', { business_ids: ids(51) }));
    expect(error.detail).toEqual([
      {
        loc: ['body', 'business_ids'],
        msg: 'ensure this value has at most 50 items',
        type: 'value_error.list.max_items',
        ctx: { limit_value: 50 },
      },
    ]);
    expect(error.operationId).toBe('bulkEnrichFirmographics');
  });

  it('page_size 101, size 60001, size below page_size', async () => {
    const base = { mode: 'full' as const, size: 1000, page_size: 100 };
    expect((await refused(client.fetchProspects({ ...base, page_size: 101 }))).detail[0]?.loc).toEqual([
      'body',
      'page_size',
    ]);
    expect((await refused(client.fetchProspects({ ...base, size: 60_001 }))).detail[0]?.loc).toEqual([
      'body',
      'size',
    ]);
    expect((await refused(client.fetchProspects({ ...base, size: 10 }))).detail[0]?.loc).toEqual([
      'body',
      '__root__',
    ]);
  });

  it('an unknown key, a bad enum value, a full name without company', async () => {
    const unknownKey = { business_ids: ids(1), business_id: 'x' } as unknown as { business_ids: string[] };
    expect((await refused(client.bulkEnrich('technographics', unknownKey))).detail[0]).toMatchObject({
      type: 'value_error.extra',
    });
    const badEnum = { field: 'linkedin_category' } as unknown as { field: 'network_category' };
    expect((await refused(client.autocomplete(badEnum))).detail[0]?.loc).toEqual(['query', 'field']);
    expect(
      (await refused(client.matchProspects({ prospects_to_match: [{ full_name: 'Ada Lovelace' }] })))
        .detail[0]?.loc,
    ).toEqual(['body', 'prospects_to_match', 0, '__root__']);
  });

  it('response_bytes above 1,000,000, 21 enrollment ids, an unknown dataset', async () => {
    expect((await refused(client.healthcheckPayload(1_000_001))).detail[0]?.loc).toEqual([
      'path',
      'response_bytes',
    ]);
    await refused(
      client.createEnrollments({
        enrollment_key: 'acme',
        event_types: ['new_office'],
        business_ids: ids(21),
      }),
    );
    await refused(client.bulkEnrich('lookalikes' as BulkDataset, { business_ids: ids(1) }));
    expect(server.received).toHaveLength(0);
  });
});
