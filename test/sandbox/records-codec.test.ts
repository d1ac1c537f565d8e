// The in-memory packing of bulk-dataset records: whatever JSON goes in comes back byte for byte, also
// when key-like text sits inside values, in another record's keys, or next to multi-byte characters.
import { describe, expect, it } from 'vitest';
import { KeyCodec } from '../../sandbox/query/dataset-records.js';

const records = [
  { business_id: 'a1', name: 'Acme "name": Ltd', tags: ['"x":', 'ünïcødé ✓'], nested: { name: null } },
  { business_id: 'b2', 'name\\"odd': 1, description: 'line\nbreak \\ "business_id":' },
  { other_key: 'no packed keys here', emoji: '🚀', control: '\u0001\u001f' },
].map((record) => JSON.stringify(record));

describe('KeyCodec', () => {
  it('gives back exactly the bytes it packed', () => {
    const codec = KeyCodec.fromSample(records);
    for (const json of [...records, '{}', '[]', '"plain"']) {
      const packed = Buffer.from(codec.pack(json), 'utf8');
      expect(codec.unpack(packed).toString('utf8')).toBe(json);
    }
  });

  it('makes records with common keys smaller', () => {
    const codec = KeyCodec.fromSample(records);
    const json = records[0] as string;
    expect(Buffer.byteLength(codec.pack(json))).toBeLessThan(Buffer.byteLength(json));
  });
});
