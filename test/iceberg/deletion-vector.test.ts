import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, InvalidFileError, ValidationError } from '../../lib/errors.js';
import {
  DELETION_VECTOR_FIELD_ID,
  deserializeDeletionVector,
  ensureRoaring,
  PositionDeleteIndex,
  readDeletionVector,
  readDeletionVectors,
  serializeDeletionVector,
  writeDeletionVectors,
} from '../../lib/iceberg/deletion-vector.js';
import { readPuffinFooter } from '../../lib/iceberg/puffin.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { FIXTURES, tempDir } from '../support/fixtures.js';

const io = new LocalFileIO();
const DV_PUFFIN = join(
  FIXTURES,
  'iceberg_v3_deletion_vectors/data/00000-9-08e88179-85b6-4635-8b34-94b49abc87d9-00001-deletes.puffin',
);
const DATA = 'hdfs://localhost:20500/test-warehouse/iceberg_v3_deletion_vectors/data';
const TWO_32 = 2n ** 32n;

beforeAll(async () => {
  await ensureRoaring();
});

describe('the deletion vectors Spark wrote (iceberg_v3_deletion_vectors)', () => {
  it('delete position 0 of the files holding i = 4 and i = 2', async () => {
    const dvs = await readDeletionVectors(io, DV_PUFFIN);
    expect(dvs.map((d) => [d.referencedDataFile, d.cardinality, [...d.index]])).toEqual([
      [`${DATA}/00003-3-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet`, 1, [0n]],
      [`${DATA}/00001-1-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet`, 1, [0n]],
    ]);
  });

  it('read by content offset and size, as a manifest entry points at them', async () => {
    for (const offset of [4, 46]) {
      const index = await readDeletionVector(io, DV_PUFFIN, offset, 42, 1);
      expect([...index.positions()]).toEqual([0]);
      expect(index.has(0)).toBe(true);
      expect(index.has(1n)).toBe(false);
    }
  });

  it('re-serialize to exactly the bytes Java wrote', async () => {
    const raw = new Uint8Array(readFileSync(DV_PUFFIN));
    const java = raw.subarray(4, 46);
    expect(Array.from(serializeDeletionVector(new PositionDeleteIndex([0])))).toEqual(Array.from(java));
    expect(Array.from(java.subarray(0, 8))).toEqual([0, 0, 0, 0x22, 0xd1, 0xd3, 0x39, 0x64]);
  });

  it('reject a wrong expected cardinality like Java', async () => {
    await expect(readDeletionVector(io, DV_PUFFIN, 4, 42, 2)).rejects.toThrow(
      /cardinality 1 does not match the expected 2/,
    );
  });
});

describe('PositionDeleteIndex', () => {
  it('adds single positions and ranges across the 2^32 boundary', () => {
    const index = new PositionDeleteIndex();
    index.addRange(TWO_32 - 3n, TWO_32 + 2n);
    index.add(7);
    index.add(3n * TWO_32);
    expect([...index]).toEqual([7n, TWO_32 - 3n, TWO_32 - 2n, TWO_32 - 1n, TWO_32, TWO_32 + 1n, 3n * TWO_32]);
    expect([...index.positions()]).toEqual([7, 4294967293, 4294967294, 4294967295, 4294967296, 4294967297, 12884901888]);
    expect(index.cardinality()).toBe(7);
    expect(index.has(4294967296)).toBe(true);
    expect(index.has(2n * TWO_32)).toBe(false);
    index.addRange(5, 5);
    expect(index.cardinality()).toBe(7);
  });

  it('fills whole high keys for a range spanning them', () => {
    const index = new PositionDeleteIndex();
    index.addRange(TWO_32 - 1n, 2n * TWO_32 + 1n);
    expect(index.cardinality()).toBe(4294967298);
    expect(index.has(TWO_32 + 123456789n)).toBe(true);
    expect(index.has(2n * TWO_32 + 1n)).toBe(false);
  });

  it('iterates a bitmap larger than one window (2^20 values) in order', () => {
    const index = new PositionDeleteIndex();
    index.addRange(0, 3_000_000);
    index.add(4294967295);
    let n = 0;
    let previous = -1;
    let ascending = true;
    for (const p of index.positions()) {
      ascending &&= p === (n < 3_000_000 ? n : 4294967295);
      ascending &&= p > previous;
      previous = p;
      n++;
    }
    expect([n, ascending, previous]).toEqual([3_000_001, true, 4294967295]);
  });

  it('merges, clones and compares', () => {
    const a = new PositionDeleteIndex([1, 5, TWO_32]);
    const b = new PositionDeleteIndex([5, 9]);
    const c = a.clone();
    a.merge(b);
    expect([...a]).toEqual([1n, 5n, 9n, TWO_32]);
    expect([...c]).toEqual([1n, 5n, TWO_32]);
    expect(a.equals(c)).toBe(false);
    c.add(9);
    expect(a.equals(c)).toBe(true);
    expect(new PositionDeleteIndex().isEmpty()).toBe(true);
    expect(a.isEmpty()).toBe(false);
  });

  it('refuses positions outside [0, MAX_POSITION] like Java', () => {
    const index = new PositionDeleteIndex();
    expect(PositionDeleteIndex.MAX_POSITION).toBe(9223372032559808511n);
    index.add(PositionDeleteIndex.MAX_POSITION);
    expect(index.has(PositionDeleteIndex.MAX_POSITION)).toBe(true);
    expect(() => index.add(PositionDeleteIndex.MAX_POSITION + 1n)).toThrow(InvalidArgumentError);
    expect(() => index.add(-1)).toThrow(InvalidArgumentError);
    expect(() => index.add(1.5)).toThrow(InvalidArgumentError);
    expect(() => index.addRange(5, 4)).toThrow('Start position must not exceed end position: [5, 4)');
    expect(() => [...index.positions()]).toThrow(InvalidArgumentError);
  });

  it('frees its bitmaps on dispose', () => {
    const index = new PositionDeleteIndex([1, 2, 3]);
    index.dispose();
    expect(index.cardinality()).toBe(0);
  });
});

describe('deletion-vector-v1 blobs', () => {
  it('run-encodes before serializing, as Java does', () => {
    const index = new PositionDeleteIndex();
    index.addRange(0, 100_000);
    const blob = serializeDeletionVector(index);
    // 4 length + 4 magic + 8 count + 4 key + 25 (cookie, run flags, 2 descriptors, 2 one-run containers) + 4 CRC
    expect(blob.length).toBe(49);
    expect(deserializeDeletionVector(blob, 'mem').cardinality()).toBe(100_000);
  });

  it('writes only non-empty keys, ascending (Java fills gaps with empty bitmaps; both read the same)', () => {
    const blob = serializeDeletionVector(new PositionDeleteIndex([2n * TWO_32 + 1n, 7n * TWO_32, 3]));
    const view = new DataView(blob.buffer);
    expect(view.getBigUint64(8, true)).toBe(3n);
    expect(view.getUint32(16, true)).toBe(0);
    expect([...deserializeDeletionVector(blob, 'mem')]).toEqual([3n, 2n * TWO_32 + 1n, 7n * TWO_32]);
    const top = serializeDeletionVector(new PositionDeleteIndex([PositionDeleteIndex.MAX_POSITION]));
    expect(top.length).toBe(4 + 4 + 8 + 4 + 18 + 4);
    expect(new DataView(top.buffer).getUint32(16, true)).toBe(2147483646);
  });

  it('reads the dense layout Java writes, with empty bitmaps for gap keys', () => {
    const empty = [0x3a, 0x30, 0, 0, 0, 0, 0, 0];
    const bitmap = [0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 1, 0];
    const blob = withFraming([3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ...empty, 1, 0, 0, 0, ...empty, 2, 0, 0, 0, ...bitmap]);
    const index = deserializeDeletionVector(blob, 'mem', 1);
    expect([...index]).toEqual([2n * TWO_32 + 1n]);
    expect(index.equals(new PositionDeleteIndex([2n * TWO_32 + 1n]))).toBe(true);
  });

  it('serializes an empty index as a vector of zero bitmaps', () => {
    const blob = serializeDeletionVector(new PositionDeleteIndex());
    expect(blob.length).toBe(20);
    expect(new DataView(blob.buffer).getUint32(0, false)).toBe(12);
    expect(deserializeDeletionVector(blob, 'mem').isEmpty()).toBe(true);
  });

  it('reads sparse keys written by other writers', () => {
    // count 1, key 5, bitmap {3}: the layout without gap bitmaps
    const bitmap = [0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 3, 0];
    const blob = withFraming([1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, ...bitmap]);
    expect([...deserializeDeletionVector(blob, 'mem')]).toEqual([5n * TWO_32 + 3n]);
  });

  describe('corrupt blobs → InvalidFileError naming the file and the rule', () => {
    const path = 's3://bucket/table/data/dv.puffin';
    const good = () => serializeDeletionVector(new PositionDeleteIndex([1, 2, 70_000, TWO_32 + 9n]));
    const fails = (blob: Uint8Array, message: RegExp) => {
      let err: unknown;
      try {
        deserializeDeletionVector(blob, path);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InvalidFileError);
      expect((err as Error).message).toContain(path);
      expect((err as Error).message).toContain('puffin-spec "deletion-vector-v1"');
      expect((err as Error).message).toMatch(message);
    };

    it('bad magic', () => {
      const b = good();
      b[5] = 0xd4;
      fails(b, /magic is d1 d4 39 64, expected d1 d3 39 64/);
    });

    it('bad CRC', () => {
      const b = good();
      b[b.length - 1] ^= 0xff;
      fails(b, /CRC-32 of magic \+ vector is 0x[0-9a-f]+, but the blob stores/);
      const c = good();
      c[30] ^= 0x01; // a bitmap byte
      fails(c, /CRC-32/);
    });

    it('bad length', () => {
      const b = good();
      new DataView(b.buffer).setUint32(0, b.length - 7, false);
      fails(b, new RegExp(`bitmap data length ${b.length - 7} .* expected ${b.length - 8}`));
      fails(good().subarray(0, 30), /bitmap data length/);
      fails(Uint8Array.of(0, 0, 0, 4, 0xd1, 0xd3, 0x39, 0x64), /shorter than the minimal 20/);
    });

    it('structurally bad vectors with a valid CRC', () => {
      const bitmap = [0x3a, 0x30, 0, 0, 0, 0, 0, 0];
      fails(withFraming([2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, ...bitmap, 1, 0, 0, 0, ...bitmap]), /ascending order/);
      fails(withFraming([1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, ...bitmap]), /key 2147483647 is too large/);
      fails(withFraming([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ...bitmap, 0]), /1 bytes left after 1 bitmaps/);
      fails(withFraming([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0]), /truncated/);
      fails(withFraming([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0]), /unknown cookie/);
      fails(withFraming([9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ...bitmap]), /bitmap count 9 cannot fit/);
    });
  });
});

/** Length, magic and CRC around a hand-made vector (count + keyed bitmaps). */
function withFraming(vector: number[]): Uint8Array {
  const data = Uint8Array.from([0xd1, 0xd3, 0x39, 0x64, ...vector]);
  const out = new Uint8Array(data.length + 8);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length, false);
  out.set(data, 4);
  view.setUint32(4 + data.length, crc32(data), false);
  return out;
}

describe('Puffin files of deletion vectors', () => {
  it('write the blob metadata Java writes and return what manifest entries need', async () => {
    const path = join(tempDir('packice-dv-'), 'deletes.puffin');
    const a = new PositionDeleteIndex([0, 3, 4]);
    const b = new PositionDeleteIndex();
    b.addRange(10, 20);
    const files = await writeDeletionVectors(io, path, [
      { referencedDataFile: 's3://b/t/data/a.parquet', index: a },
      { referencedDataFile: 's3://b/t/data/b.parquet', index: b },
    ]);
    const size = readFileSync(path).length;
    const blobA = serializeDeletionVector(new PositionDeleteIndex([0, 3, 4]));
    expect(files).toEqual([
      {
        path, fileSizeInBytes: size, referencedDataFile: 's3://b/t/data/a.parquet',
        contentOffset: 4, contentSizeInBytes: blobA.length, recordCount: 3,
      },
      {
        path, fileSizeInBytes: size, referencedDataFile: 's3://b/t/data/b.parquet',
        contentOffset: 4 + blobA.length, contentSizeInBytes: files[1].contentSizeInBytes, recordCount: 10,
      },
    ]);

    const footer = await readPuffinFooter(io, path);
    expect(footer.blobs.map((x) => [x.type, x.fields, x.snapshotId, x.sequenceNumber, x.compressionCodec, x.properties])).toEqual([
      ['deletion-vector-v1', [DELETION_VECTOR_FIELD_ID], -1n, -1n, undefined, { 'referenced-data-file': 's3://b/t/data/a.parquet', cardinality: '3' }],
      ['deletion-vector-v1', [2147483645], -1n, -1n, undefined, { 'referenced-data-file': 's3://b/t/data/b.parquet', cardinality: '10' }],
    ]);

    const readA = await readDeletionVector(io, path, files[0].contentOffset, files[0].contentSizeInBytes, files[0].recordCount);
    const readB = await readDeletionVector(io, path, files[1].contentOffset, files[1].contentSizeInBytes, 10n);
    expect([...readA.positions()]).toEqual([0, 3, 4]);
    expect([...readB.positions()]).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect((await readDeletionVectors(io, path, size)).map((d) => d.index.cardinality())).toEqual([3, 10]);
  });

  it('refuse two DVs for one data file', async () => {
    const path = join(tempDir('packice-dv-'), 'dup.puffin');
    const dv = { referencedDataFile: 'a.parquet', index: new PositionDeleteIndex([1]) };
    await expect(writeDeletionVectors(io, path, [dv, dv])).rejects.toThrow(ValidationError);
  });

  it('name the file when the range read is wrong', async () => {
    await expect(readDeletionVector(io, DV_PUFFIN, 5, 42)).rejects.toThrow(DV_PUFFIN);
    await expect(readDeletionVector(io, DV_PUFFIN, 5, 42)).rejects.toBeInstanceOf(InvalidFileError);
  });
});

describe('PositionDeleteIndex against a Set<bigint> model', () => {
  const KEYS = [0n, 1n, 2n, 7n, 2147483646n];
  const low = fc.oneof(
    fc.integer({ min: 0, max: 100 }),
    fc.integer({ min: 4294967196, max: 4294967295 }),
    fc.integer({ min: 65_000, max: 70_000 }),
    fc.integer({ min: 0, max: 4294967295 }),
  );
  const position = fc.tuple(fc.constantFrom(...KEYS), low).map(([k, l]) => (k << 32n) | BigInt(l));
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('add' as const), pos: position, asNumber: fc.boolean() }),
    fc.record({ kind: fc.constant('range' as const), start: position, len: fc.integer({ min: 0, max: 300 }) }),
  );

  type Op = { kind: 'add'; pos: bigint; asNumber: boolean } | { kind: 'range'; start: bigint; len: number };
  const build = (ops: Op[]) => {
    const index = new PositionDeleteIndex();
    const model = new Set<bigint>();
    for (const o of ops) {
      if (o.kind === 'add') {
        index.add(o.asNumber && o.pos <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(o.pos) : o.pos);
        model.add(o.pos);
      } else {
        const end = o.start + BigInt(o.len) > PositionDeleteIndex.MAX_POSITION + 1n ? PositionDeleteIndex.MAX_POSITION + 1n : o.start + BigInt(o.len);
        index.addRange(o.start, end);
        for (let p = o.start; p < end; p++) model.add(p);
      }
    }
    return { index, model };
  };
  const sorted = (s: Set<bigint>) => [...s].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

  it('holds exactly the model’s positions, in ascending order, through a blob round trip', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.array(position, { maxLength: 20 }), (ops, probes) => {
        const { index, model } = build(ops);
        expect([...index]).toEqual(sorted(model));
        expect(index.cardinality()).toBe(model.size);
        for (const p of [...probes, ...model]) expect(index.has(p)).toBe(model.has(p));
        const back = deserializeDeletionVector(serializeDeletionVector(index), 'mem', model.size);
        expect([...back]).toEqual(sorted(model));
        expect(back.equals(index)).toBe(true);
        index.dispose();
        back.dispose();
      }),
      { numRuns: 200 },
    );
  });

  it('merge is the union', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 20 }), fc.array(op, { maxLength: 20 }), (ops1, ops2) => {
        const a = build(ops1);
        const b = build(ops2);
        a.index.merge(b.index);
        expect([...a.index]).toEqual(sorted(new Set([...a.model, ...b.model])));
        a.index.dispose();
        b.index.dispose();
      }),
      { numRuns: 100 },
    );
  });
});
