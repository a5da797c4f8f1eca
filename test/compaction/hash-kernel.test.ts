import { describe, expect, it } from 'vitest';
import { batchHasher, rowHasher, RowSetChecksum } from '../../lib/compaction/checksum.js';
import { HASH_KERNEL_WASM } from '../../lib/compaction/hash-kernel-module.js';
import type { StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';
import { batchFromRows } from '../../lib/parquet/values.js';
import { hashKernelModuleSource } from '../../scripts/hash-kernel.js';

const STRUCT: StructType = {
  type: 'struct',
  fields: [
    { id: 4, name: 's', required: false, type: { type: 'string' } },
    { id: 1, name: 'l', required: true, type: { type: 'long' } },
    { id: 2, name: 'd', required: false, type: { type: 'decimal', precision: 38, scale: 2 } },
    { id: 3, name: 'x', required: false, type: { type: 'double' } },
    { id: 5, name: 'i', required: false, type: { type: 'int' } },
    { id: 6, name: 'dt', required: false, type: { type: 'date' } },
  ],
};

/** A deterministic mix of what the kernels treat apart: nulls, NaN, wide decimals, non-ASCII and long text. */
function rows(n: number, long: (i: number) => boolean): Row[] {
  let seed = 7;
  const next = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed;
  };
  return Array.from({ length: n }, (_, i) => {
    const r = next();
    const text = long(i) ? 'y'.repeat(300_000 + (r % 7)) : r % 11 === 0 ? `é${i}` : 'abcdefghijklmnopq'.slice(0, r % 18);
    return {
      s: r % 13 === 0 ? null : text,
      l: BigInt(r) * (r % 2 === 0 ? -1n : 1n) * 1073741827n,
      d: r % 17 === 0 ? null : r % 29 === 0 ? 2n ** 64n + BigInt(i) : BigInt(i) - 5000n,
      x: r % 19 === 0 ? null : r % 23 === 0 ? Number.NaN : i / 3,
      i: r % 5 === 0 ? null : (r | 0),
      dt: r % 3 === 0 ? null : i - 40_000,
    };
  });
}

function same(batchRows: Row[], ids?: number[], slice?: [number, number]): void {
  const batch = batchFromRows(STRUCT, batchRows);
  const part = slice ? batchRows.slice(...slice) : batchRows;
  const byRows = new RowSetChecksum(rowHasher(STRUCT, ids));
  byRows.addAll(part);
  const byColumns = new RowSetChecksum(rowHasher(STRUCT, ids));
  batchHasher(STRUCT, ids)(slice ? batch.slice(...slice) : batch, byColumns);
  expect(byColumns.count).toBe(part.length);
  expect(byColumns.hex).toBe(byRows.hex);
}

describe('proof hash kernels (SIMD)', () => {
  it('is the module scripts/hash-kernel.ts assembles', async () => {
    const source = await hashKernelModuleSource();
    const b64 = [...source.matchAll(/'([A-Za-z0-9+/=]+)'/g)].map((m) => m[1]).join('');
    expect(b64).toBe(HASH_KERNEL_WASM);
  });

  it('hashes as the row encoder across chunks of 65,536 rows, on sliced batches, rows not a multiple of 4', () => {
    const many = rows(140_003, () => false);
    same(many);
    same(many, [4, 2]);
    same(many, undefined, [5, 131_078]);
  });

  it('cuts text chunks by bytes, and hashes a value longer than a chunk from its string', () => {
    // 300 KB values: two do not fit one chunk's 512 KiB, and 600 KB ones not even alone.
    const texts = rows(40, (i) => i % 4 === 1);
    same(texts);
    const huge = rows(9, () => false);
    huge[3] = { ...huge[3], s: 'z'.repeat(600_000) };
    huge[6] = { ...huge[6], s: `é${'z'.repeat(600_000)}` };
    same(huge);
    same(huge, undefined, [2, 8]);
  });
});
