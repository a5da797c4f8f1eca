/**
 * The union of merged chunks' dictionaries (lib/parquet/dictionary-union.ts): every distinct value
 * once, in first-seen order, each source's map pointing at its own value; found by fingerprint and
 * confirmed byte by byte, so colliding fingerprints never merge different values.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dictionaryUnion, fingerprints, type PlainValues } from '../../lib/parquet/dictionary-union.js';

/** BYTE_ARRAY plain values: a 4-byte length, then the bytes. */
function plain(values: readonly string[]): PlainValues {
  const parts = values.map((v) => Buffer.from(v, 'utf8'));
  const bytes = new Uint8Array(parts.reduce((n, p) => n + 4 + p.length, 0));
  const offsets = new Int32Array(values.length + 1);
  let at = 0;
  parts.forEach((p, i) => {
    offsets[i] = at;
    new DataView(bytes.buffer).setUint32(at, p.length, true);
    bytes.set(p, at + 4);
    at += 4 + p.length;
  });
  offsets[values.length] = at;
  return { bytes, offsets, prefix: 4 };
}

function valueAt(d: PlainValues, i: number): string {
  return Buffer.from(d.bytes.subarray(d.offsets[i] + d.prefix, d.offsets[i + 1])).toString('utf8');
}

/** Each dictionary's values distinct (as a Parquet dictionary's are), drawn from a shared pool so they overlap. */
const dictionaries = fc.record({ pool: fc.noBias(fc.integer({ min: 1, max: 5000 })), seed: fc.noBias(fc.nat()) }).chain(({ pool, seed }) =>
  fc.array(fc.noBias(fc.integer({ min: 0, max: 1500 })), { minLength: 1, maxLength: 6 }).map((sizes) =>
    sizes.map((n, d) => {
      const out = new Set<string>();
      for (let i = 0; out.size < Math.min(n, pool) && i < 4 * n + 10; i++) out.add(`v${(Math.imul(seed + d * 7919 + i, 0x9e3779b1) >>> 0) % pool}`);
      return [...out];
    })),
);

function check(lists: readonly string[][], prints: (d: PlainValues, k: number) => Uint32Array): void {
  const dicts = lists.map(plain);
  const union = dictionaryUnion(dicts, dicts.map((d, k) => prints(d, k)), Number.MAX_SAFE_INTEGER)!;
  const expected = [...new Set(lists.flat())];
  expect(union.count).toBe(expected.length);
  const values = plain(expected);
  expect(Buffer.from(union.values).equals(Buffer.from(values.bytes))).toBe(true);
  lists.forEach((list, d) => list.forEach((v, i) => expect(valueAt(values, union.remaps[d]![i])).toBe(v)));
}

describe('dictionaryUnion', () => {
  it('holds every distinct value once, first seen first, and maps each entry to its value', () => {
    fc.assert(fc.property(dictionaries, (lists) => check(lists, (d) => fingerprints(d))), { numRuns: 60 });
  });

  it('tells values apart whose fingerprints collide', () => {
    // Every entry's first fingerprint word alike, or one of four: only the bytes tell them apart.
    fc.assert(fc.property(dictionaries, (lists) => check(lists, (d) => new Uint32Array(2 * (d.offsets.length - 1)).fill(7))), { numRuns: 10 });
    fc.assert(fc.property(dictionaries, (lists) => check(lists, (d) => fingerprints(d).map((x) => x & 3))), { numRuns: 20 });
  });

  it('gives up past the limit in plain bytes, and skips chunks with no dictionary', () => {
    const a = plain(['x', 'yy', 'zzz']);
    const b = plain(['yy', 'wwww']);
    expect(dictionaryUnion([a, b], [fingerprints(a), fingerprints(b)], 4 * 4 + 1 + 2 + 3 + 4 - 1)).toBeUndefined();
    const u = dictionaryUnion([a, undefined, b], [fingerprints(a), undefined, fingerprints(b)], 4 * 4 + 1 + 2 + 3 + 4)!;
    expect(u.count).toBe(4);
    expect(u.remaps[1]).toBeUndefined();
    expect(Array.from(u.remaps[2]!)).toEqual([1, 3]);
  });
});
