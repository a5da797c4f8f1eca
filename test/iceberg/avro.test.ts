import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidFileError, UnsupportedError } from '../../lib/errors.js';
import {
  type AvroSchemaObject,
  AvroContainerWriter,
  avroType,
  decimalRequiredBytes,
  fromAvroValue,
  headerString,
  icebergPrimitiveOf,
  icebergToAvroSchema,
  javaHashMapOrder,
  openAvroContainer,
  recordFieldsOf,
  sanitizeAvroName,
  toAvroValue,
  writeAvroContainer,
} from '../../lib/iceberg/avro.js';
import type { IcebergType, StructType } from '../../lib/iceberg/types.js';
import type { IcebergValue } from '../../lib/iceberg/values.js';
import { FIXTURES } from '../support/fixtures.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Reference zig-zag varint encoding (Avro spec "Binary Encoding"). */
function zigzag(v: bigint): number[] {
  let z = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
  const out: number[] = [];
  while (z >= 0x80n) {
    out.push(Number(z & 0x7fn) | 0x80);
    z >>= 7n;
  }
  out.push(Number(z));
  return out;
}

async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
}

async function readAll<T>(source: Uint8Array | AsyncIterable<Uint8Array>, path = 'mem.avro'): Promise<T[]> {
  const out: T[] = [];
  for await (const r of await openAvroContainer<T>(source, path)) out.push(r);
  return out;
}

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a failure');
}

const RECORD: AvroSchemaObject = {
  type: 'record',
  name: 'r',
  fields: [
    { name: 'id', type: 'long', 'field-id': 1 },
    { name: 'name', type: ['null', 'string'], default: null, 'field-id': 2 },
  ],
};

describe('BigInt long', () => {
  it('encodes the int64 range as zig-zag varints, both ways', () => {
    const t = avroType('long');
    for (const v of [0n, -1n, 1n, 63n, -64n, 64n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, 6917529027641081857n, INT64_MAX, INT64_MIN]) {
      const bytes = t.toBuffer(v);
      expect([...bytes]).toEqual(zigzag(v));
      expect(t.fromBuffer(bytes)).toBe(v);
    }
    expect([...t.toBuffer(INT64_MIN)]).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  });

  it('round-trips any int64, also inside ["null", "long"]', () => {
    const t = avroType('long');
    const u = avroType(['null', 'long']);
    fc.assert(
      fc.property(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), (v) => {
        expect([...t.toBuffer(v)]).toEqual(zigzag(v));
        expect(t.fromBuffer(t.toBuffer(v))).toBe(v);
        expect(u.fromBuffer(u.toBuffer(v))).toBe(v);
      }),
      { numRuns: 500 },
    );
    expect(u.fromBuffer(u.toBuffer(null))).toBe(null);
  });

  it('reads logical longs (timestamps) as bigint and refuses numbers and out-of-range values', () => {
    const ts = avroType({ type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true });
    expect(ts.fromBuffer(ts.toBuffer(1_700_000_000_000_000n))).toBe(1_700_000_000_000_000n);
    expect(() => avroType('long').toBuffer(5)).toThrow(/invalid "long": 5/);
    expect(() => avroType('long').toBuffer(INT64_MAX + 1n)).toThrow(/int64 range/);
  });
});

describe('Iceberg type → Avro schema (TypeToSchema.java)', () => {
  it('writes ids, options, logical types and names as Java does', () => {
    const struct: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: { type: 'long' } },
        { id: 2, name: 'ts', required: false, type: { type: 'timestamptz' }, doc: 'event time' },
        { id: 3, name: 'local', required: true, type: { type: 'timestamp' } },
        { id: 4, name: 'd', required: true, type: { type: 'date' } },
        { id: 5, name: 't', required: true, type: { type: 'time' } },
        { id: 6, name: 'ns', required: true, type: { type: 'timestamptz_ns' } },
        { id: 7, name: 'price', required: true, type: { type: 'decimal', precision: 9, scale: 2 } },
        { id: 8, name: 'u', required: false, type: { type: 'uuid' } },
        { id: 9, name: 'f', required: true, type: { type: 'fixed', length: 3 } },
        { id: 10, name: 'b', required: true, type: { type: 'binary' } },
        { id: 11, name: 'tags', required: false, type: { type: 'list', elementId: 12, elementRequired: false, element: { type: 'string' } } },
        {
          id: 13, name: 'props', required: true,
          type: { type: 'map', keyId: 14, key: { type: 'string' }, valueId: 15, valueRequired: true, value: { type: 'int' } },
        },
        {
          id: 16, name: 'counts', required: true,
          type: { type: 'map', keyId: 17, key: { type: 'int' }, valueId: 18, valueRequired: false, value: { type: 'long' } },
        },
        {
          id: 19, name: 'loc', required: false,
          type: { type: 'struct', fields: [{ id: 20, name: 'lat', required: true, type: { type: 'double' } }] },
        },
        { id: 21, name: 'price2', required: true, type: { type: 'decimal', precision: 9, scale: 2 } },
        { id: 22, name: '1st-col', required: true, type: { type: 'unknown' } },
      ],
    };
    expect(icebergToAvroSchema(struct, 'table')).toEqual({
      type: 'record',
      name: 'table',
      fields: [
        { name: 'id', type: 'long', 'field-id': 1 },
        {
          name: 'ts', type: ['null', { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true }],
          doc: 'event time', default: null, 'field-id': 2,
        },
        { name: 'local', type: { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': false }, 'field-id': 3 },
        { name: 'd', type: { type: 'int', logicalType: 'date' }, 'field-id': 4 },
        { name: 't', type: { type: 'long', logicalType: 'time-micros' }, 'field-id': 5 },
        { name: 'ns', type: { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': true }, 'field-id': 6 },
        {
          name: 'price',
          type: { type: 'fixed', name: 'decimal_9_2', size: 4, logicalType: 'decimal', precision: 9, scale: 2 },
          'field-id': 7,
        },
        { name: 'u', type: ['null', { type: 'fixed', name: 'uuid_fixed', size: 16, logicalType: 'uuid' }], default: null, 'field-id': 8 },
        { name: 'f', type: { type: 'fixed', name: 'fixed_3', size: 3 }, 'field-id': 9 },
        { name: 'b', type: 'bytes', 'field-id': 10 },
        { name: 'tags', type: ['null', { type: 'array', items: ['null', 'string'], 'element-id': 12 }], default: null, 'field-id': 11 },
        { name: 'props', type: { type: 'map', values: 'int', 'key-id': 14, 'value-id': 15 }, 'field-id': 13 },
        {
          name: 'counts',
          type: {
            type: 'array',
            items: {
              type: 'record',
              name: 'k17_v18',
              fields: [
                { name: 'key', type: 'int', 'field-id': 17 },
                { name: 'value', type: ['null', 'long'], default: null, 'field-id': 18 },
              ],
            },
            logicalType: 'map',
          },
          'field-id': 16,
        },
        {
          name: 'loc',
          type: ['null', { type: 'record', name: 'r19', fields: [{ name: 'lat', type: 'double', 'field-id': 20 }] }],
          default: null,
          'field-id': 19,
        },
        // A named type is defined once, then referenced by name.
        { name: 'price2', type: 'decimal_9_2', 'field-id': 21 },
        { name: '_1st_x2Dcol', type: 'null', 'iceberg-field-name': '1st-col', 'field-id': 22 },
      ],
    });
  });

  it('sanitizes names like AvroSchemaUtil.sanitize and sizes decimals like TypeUtil', () => {
    expect(sanitizeAvroName('a.b c')).toBe('a_x2Eb_x20c');
    expect(sanitizeAvroName('9lives')).toBe('_9lives');
    expect([1, 2, 9, 10, 18, 19, 38].map(decimalRequiredBytes)).toEqual([1, 1, 4, 5, 8, 9, 16]);
  });

  it('maps Avro schemas back to Iceberg primitives', () => {
    expect(icebergPrimitiveOf({ type: 'int', logicalType: 'date' })).toEqual({ type: 'date' });
    expect(icebergPrimitiveOf(['null', { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true }])).toEqual({
      type: 'timestamptz',
    });
    expect(icebergPrimitiveOf({ type: 'long', logicalType: 'timestamp-micros' })).toEqual({ type: 'timestamp' });
    expect(icebergPrimitiveOf({ type: 'fixed', name: 'd', size: 5, logicalType: 'decimal', precision: 10, scale: 3 })).toEqual({
      type: 'decimal', precision: 10, scale: 3,
    });
    expect(icebergPrimitiveOf('bytes')).toEqual({ type: 'binary' });
    expect(icebergPrimitiveOf({ type: 'array', items: 'int' })).toBeUndefined();
  });

  it('names the primitives Avro spells as Iceberg does by their name, both ways', () => {
    const named = ['boolean', 'int', 'long', 'float', 'double', 'string'] as const;
    const struct: StructType = {
      type: 'struct',
      fields: named.map((n, i) => ({ id: i + 1, name: `c${i}`, required: true, type: { type: n } })),
    };
    const fields = recordFieldsOf(icebergToAvroSchema(struct, 'r'));
    expect(fields.map((f) => f.type)).toEqual([...named]);
    expect(named.map((n) => icebergPrimitiveOf(n))).toEqual(named.map((n) => ({ type: n })));
    expect(icebergPrimitiveOf('null')).toEqual({ type: 'unknown' });
  });
});

describe('values through Avro', () => {
  const type: StructType = {
    type: 'struct',
    fields: [
      { id: 1, name: 'price', required: false, type: { type: 'decimal', precision: 12, scale: 2 } },
      { id: 2, name: 'u', required: false, type: { type: 'uuid' } },
      { id: 3, name: 'bin', required: false, type: { type: 'binary' } },
      { id: 4, name: 'at', required: false, type: { type: 'timestamptz' } },
      { id: 5, name: 'day', required: false, type: { type: 'date' } },
      { id: 6, name: 'bad name', required: false, type: { type: 'string' } },
      { id: 7, name: 'tags', required: false, type: { type: 'list', elementId: 8, elementRequired: true, element: { type: 'long' } } },
      {
        id: 9, name: 'm', required: false,
        type: { type: 'map', keyId: 10, key: { type: 'int' }, valueId: 11, valueRequired: true, value: { type: 'string' } },
      },
      {
        id: 12, name: 'sm', required: false,
        type: { type: 'map', keyId: 13, key: { type: 'string' }, valueId: 14, valueRequired: true, value: { type: 'double' } },
      },
    ],
  };
  const schema = icebergToAvroSchema(type, 'row');
  const avsc = avroType(schema);

  it('round-trips every representation of values.ts', () => {
    const row = fc.record({
      price: fc.option(fc.bigInt({ min: -(10n ** 12n) + 1n, max: 10n ** 12n - 1n }), { nil: null }),
      u: fc.option(fc.uuid(), { nil: null }),
      bin: fc.option(fc.uint8Array({ maxLength: 20 }), { nil: null }),
      at: fc.option(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), { nil: null }),
      day: fc.option(fc.integer({ min: -100_000, max: 100_000 }), { nil: null }),
      'bad name': fc.option(fc.string(), { nil: null }),
      tags: fc.option(fc.array(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), { maxLength: 4 }), { nil: null }),
      m: fc.option(fc.uniqueArray(fc.tuple(fc.integer(), fc.string()), { selector: (t) => t[0], maxLength: 4 }), { nil: null }),
      // Avro's string-key map is a JS object here: no order, and avsc cannot hold "__proto__".
      sm: fc.option(
        fc
          .uniqueArray(fc.tuple(fc.string().filter((k) => k !== '__proto__'), fc.double({ noNaN: true })), {
            selector: (t) => t[0],
            maxLength: 4,
          })
          .map((pairs) => pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))),
        { nil: null },
      ),
    });
    fc.assert(
      fc.property(row, (r) => {
        const value = r as unknown as IcebergValue;
        const back = fromAvroValue(type, avsc.fromBuffer(avsc.toBuffer(toAvroValue(type, value)))) as Record<string, unknown>;
        const sm = back.sm as [string, number][] | null;
        if (sm) sm.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
        expect(back).toEqual(value);
      }),
      { numRuns: 300 },
    );
  });

  it('stores decimals in the fixed width of their precision and uuids as 16 big-endian bytes', () => {
    const rec = toAvroValue(type, { price: -1n, u: '00112233-4455-6677-8899-aabbccddeeff' } as IcebergValue) as Record<string, Buffer>;
    expect([...rec.price]).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    expect(rec.u.toString('hex')).toBe('00112233445566778899aabbccddeeff');
    expect(fromAvroValue({ type: 'decimal', precision: 12, scale: 2 }, Buffer.from([0x80, 0, 0, 0, 0, 0]))).toBe(-(2n ** 47n));
  });

  it('reads a map stored as an array of key/value records into a Map', () => {
    const mapType: IcebergType = { type: 'map', keyId: 1, key: { type: 'int' }, valueId: 2, valueRequired: true, value: { type: 'long' } };
    const t = avroType(icebergToAvroSchema({ type: 'struct', fields: [{ id: 3, name: 'm', required: true, type: mapType }] }, 'x'));
    const back = t.fromBuffer(t.toBuffer({ m: [{ key: 7, value: 2n ** 60n }, { key: -1, value: 0n }] })) as { m: Map<number, bigint> };
    expect(back.m).toEqual(new Map([[7, 2n ** 60n], [-1, 0n]]));
  });
});

describe('container files', () => {
  const records = Array.from({ length: 1000 }, (_, i) => ({ id: BigInt(i) * 9_007_199_254_740_993n, name: i % 3 ? `n${i}` : null }));

  it('writes the schema JSON as given, extra keys, and reads back from bytes or from chunks', async () => {
    const bytes = writeAvroContainer(RECORD, records, { meta: [['custom', 'yes']], syncInterval: 1000 });
    const reader = await openAvroContainer(bytes, 'a.avro');
    expect(headerString(reader.header, 'avro.schema')).toBe(JSON.stringify(RECORD));
    expect(headerString(reader.header, 'custom')).toBe('yes');
    expect(reader.header.codec).toBe('deflate');
    let blocks = 0;
    const seen: unknown[] = [];
    for await (const b of reader.blocks()) {
      blocks++;
      seen.push(...reader.decodeBlock(b));
    }
    expect(blocks).toBeGreaterThan(5);
    expect(seen.map((r) => ({ ...(r as object) }))).toEqual(records);
    for (const size of [1, 7, 4096]) {
      const fromStream = await readAll<{ id: bigint }>(chunked(bytes, size));
      expect(fromStream.map((r) => r.id)).toEqual(records.map((r) => r.id));
    }
  });

  it('writes the null codec and an empty file', async () => {
    const bytes = writeAvroContainer(RECORD, records.slice(0, 3), { codec: 'null' });
    expect((await openAvroContainer(bytes, 'n.avro')).header.codec).toBe('null');
    expect((await readAll<{ id: bigint }>(bytes)).map((r) => r.id)).toEqual([0n, 9_007_199_254_740_993n, 18_014_398_509_481_986n]);
    expect(await readAll(writeAvroContainer(RECORD, []))).toEqual([]);
  });

  it('writes a record larger than the block buffer, at any position in the block', async () => {
    const big = { id: 1n, name: 'x'.repeat(150_000) };
    for (const before of [0, 1, 500]) {
      const bytes = writeAvroContainer(RECORD, [...records.slice(0, before), big, records[0]], { syncInterval: 64_000 });
      const back = await readAll<{ name: string | null }>(bytes);
      expect(back.length).toBe(before + 2);
      expect(back[before].name).toBe(big.name);
    }
  });

  it('orders header keys as a Java HashMap does (the fixture headers)', async () => {
    const dir = join(FIXTURES, 'iceberg_v3_deletion_vectors/metadata');
    const list = await openAvroContainer(readFileSync(join(dir, 'snap-3685752423136077685-1-e9787b6c-e745-4040-b78f-e4012aa178ab.avro')), 'l');
    const manifest = await openAvroContainer(readFileSync(join(dir, 'e9787b6c-e745-4040-b78f-e4012aa178ab-m0.avro')), 'm');
    expect([...list.header.meta.keys()]).toEqual([
      'avro.schema', 'avro.codec', 'snapshot-id', 'first-row-id', 'format-version', 'sequence-number', 'iceberg.schema',
      'parent-snapshot-id',
    ]);
    expect(
      javaHashMapOrder(['avro.codec', 'snapshot-id', 'parent-snapshot-id', 'sequence-number', 'first-row-id', 'format-version', 'iceberg.schema', 'avro.schema']),
    ).toEqual([...list.header.meta.keys()]);
    expect(
      javaHashMapOrder(['avro.codec', 'schema', 'partition-spec', 'partition-spec-id', 'format-version', 'content', 'iceberg.schema', 'avro.schema']),
    ).toEqual([...manifest.header.meta.keys()]);
  });

  it('reads the snappy codec (raw block + big-endian CRC-32)', async () => {
    const schema: AvroSchemaObject = { type: 'record', name: 's', fields: [{ name: 'v', type: 'string' }] };
    const plain = Buffer.from(writeAvroContainer(schema, [], { codec: 'null', syncMarker: new Uint8Array(16).fill(7) }));
    // Header only (no records): switch its codec value from "null" to "snappy".
    const at = plain.indexOf(Buffer.from([0x08, ...Buffer.from('null')]), plain.indexOf('avro.codec'));
    const header = Buffer.concat([plain.subarray(0, at), Buffer.from([0x0c]), Buffer.from('snappy'), plain.subarray(at + 5)]);
    // The record: string 'abababab' = [0x10, a, b, a, b, a, b, a, b].
    const payload = Buffer.from([0x10, ...Buffer.from('abababab')]);
    // Snappy: length 9, a 3-byte literal (0x10 'a' 'b'), then a copy of 6 bytes from offset 2.
    const snappy = Buffer.from([9, (3 - 1) << 2, 0x10, 0x61, 0x62, 0x01 | ((6 - 4) << 2), 2]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(payload) >>> 0);
    const block = Buffer.concat([Buffer.from([2, (snappy.length + 4) * 2]), snappy, crc, Buffer.alloc(16, 7)]);
    const read = await readAll<{ v: string }>(Buffer.concat([header, block]));
    expect(read.map((r) => r.v)).toEqual(['abababab']);

    crc[3] ^= 1;
    const bad = Buffer.concat([header, Buffer.from([2, (snappy.length + 4) * 2]), snappy, crc, Buffer.alloc(16, 7)]);
    const e = await failure(readAll(bad, 'snappy.avro'));
    expect(e.message).toBe('snappy.avro: cannot decompress Avro block 0 (snappy): snappy checksum mismatch');
  });
});

describe('container file errors name the file', () => {
  const good = writeAvroContainer(RECORD, [{ id: 1n, name: 'x' }, { id: 2n, name: null }], { syncInterval: 1 });

  it('bad magic', async () => {
    const bad = Uint8Array.from(good);
    bad[0] = 0x4e;
    const e = await failure(readAll(bad, 's3://b/t/metadata/x-m0.avro'));
    expect(e).toBeInstanceOf(InvalidFileError);
    expect(e.message).toBe('s3://b/t/metadata/x-m0.avro: not an Avro container file: bad magic bytes (expected "Obj\\x01")');
  });

  it('every truncation of the file, except at a block boundary, where Avro cannot tell', async () => {
    let prefixes = 0;
    for (let cut = 0; cut < good.length; cut++) {
      let records: { id: bigint }[];
      try {
        records = await readAll<{ id: bigint }>(good.subarray(0, cut), '/t/m.avro');
      } catch (e) {
        expect(e, `cut at ${cut}`).toBeInstanceOf(InvalidFileError);
        expect((e as Error).message.startsWith('/t/m.avro: ')).toBe(true);
        continue;
      }
      expect(records.map((r) => r.id)).toEqual([1n, 2n].slice(0, records.length));
      prefixes++;
    }
    // The header alone and the header with the first one-record block.
    expect(prefixes).toBe(2);
  });

  it('a truncated stream, a wrong sync marker, a corrupt header and an unknown codec', async () => {
    const e1 = await failure(readAll(chunked(good.subarray(0, good.length - 3), 5), 'streamed.avro'));
    expect(e1.message).toMatch(/^streamed\.avro: truncated Avro block 1 at offset \d+/);

    const flipped = Uint8Array.from(good);
    flipped[flipped.length - 1] ^= 0xff;
    const e2 = await failure(readAll(flipped, 'sync.avro'));
    expect(e2.message).toBe('sync.avro: Avro sync marker mismatch after block 1 (offset ' + (good.length - 16) + ')');

    const noSchema = writeAvroContainer(RECORD, []);
    const text = Buffer.from(noSchema);
    const at = text.indexOf('avro.schema');
    text[at] = 0x41; // the key becomes "Avro.schema"
    const e3 = await failure(readAll(text, 'h.avro'));
    expect(e3).toBeInstanceOf(InvalidFileError);
    expect(e3.message).toBe('h.avro: Avro header has no "avro.schema"');

    const zstd = Buffer.from(writeAvroContainer(RECORD, [{ id: 1n, name: null }], { codec: 'null' }));
    const codecAt = zstd.indexOf('null', zstd.indexOf('avro.codec'));
    zstd.write('zstd', codecAt);
    const e4 = await failure(readAll(zstd, 'z.avro'));
    expect(e4).toBeInstanceOf(UnsupportedError);
    expect(e4.message).toBe('z.avro: unsupported Avro codec "zstd"');
  });

  it('a block whose records do not fill it', async () => {
    const w = new AvroContainerWriter(RECORD, { codec: 'null', syncMarker: new Uint8Array(16) });
    w.append({ id: 5n, name: null });
    const bytes = Buffer.from(w.finish());
    const blockAt = (await openAvroContainer(bytes, 'x')).header.length;
    // Block header: count 1 (zig-zag 2), size 2 (zig-zag 4); claim 0 records instead.
    expect([bytes[blockAt], bytes[blockAt + 1]]).toEqual([2, 4]);
    bytes[blockAt] = 0;
    const e = await failure(readAll(bytes, 'short.avro'));
    expect(e).toBeInstanceOf(InvalidFileError);
    expect(e.message).toBe('short.avro: Avro block 0 has 2 bytes after its 0 records');
  });
});
