import { readFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import type { Row } from '../../lib/iceberg/values.js';
import { canImport, importBatch, type WasmMemory } from '../../lib/parquet/arrow-c-data.js';
import { openParquet } from '../../lib/parquet/reader.js';
import { rowsFromBatch } from '../../lib/parquet/values.js';
import { ParquetWriter } from '../../lib/parquet/writer.js';
import { ALL_TYPES, io, readRows, tempPath } from './helpers.js';

const memory = pw.wasmMemory() as unknown as WasmMemory;

/** Rows of every type, some null, nested values of every shape. */
function row(i: number): Row {
  const n = i % 7 === 3;
  return {
    id: BigInt(i), b: n ? null : i % 2 === 0, i: n ? null : i - 500, f: n ? null : i / 4, d: n ? null : i % 11 === 0 ? Number.NaN : -i / 3,
    dec9: n ? null : BigInt(i * 13 - 900), dec18: n ? null : BigInt(i) * 10n ** 12n, dec38: n ? null : -(10n ** 30n) * BigInt(i),
    date: n ? null : i - 200, time: n ? null : BigInt(i) * 1000n, ts: n ? null : BigInt(i) * 1_000_003n, tstz: n ? null : -BigInt(i),
    ts_ns: n ? null : BigInt(i) << 40n, tstz_ns: n ? null : 7n * BigInt(i),
    s: n ? null : `s-${'é'.repeat(i % 4)}${i}`, u: n ? null : `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    fx: n ? null : Uint8Array.of(i & 0xff, 1, 2), bin: n ? null : Uint8Array.from({ length: i % 5 }, (_, k) => k + i),
    st: n ? null : { a: i, inner: i % 3 === 0 ? null : { z: i % 2 ? null : `z${i}` } },
    l: n ? null : Array.from({ length: i % 4 }, (_, k) => (k === 1 ? null : BigInt(k * i))),
    m: n ? null : Array.from({ length: i % 3 }, (_, k): [string, Row | null] => [`k${k}`, k === 1 ? null : { v: k + i / 2 }]),
    ll: n ? null : Array.from({ length: i % 3 }, (_, k) => Array.from({ length: k }, (_, j) => j + i)),
  };
}

describe('Arrow C data import from parquet-wasm', () => {
  it('imports every type, nested types and nulls exactly as the Arrow IPC path reads them', async () => {
    const path = tempPath('c-data.parquet');
    const rows = Array.from({ length: 1000 }, (_, i) => row(i));
    const w = ParquetWriter.open(io, path, ALL_TYPES);
    await w.writeRows(rows);
    await w.close();
    const file = await openParquet(io, path);
    file.close();

    // Several batches of one table, so later batches start past the first one's buffers.
    const bytes = new Uint8Array(readFileSync(path));
    const table = pw.readParquet(bytes, { batchSize: 333 });
    const ffi = table.toFFI();
    try {
      expect(canImport(memory, ffi.schemaAddr(), file.arrowSchema)).toBe(true);
      const viaIpc = arrow.tableFromIPC(pw.readParquet(bytes, { batchSize: 333 }).intoIPCStream());
      const imported = [...ffi.arrayAddrs()].map((p) => importBatch(memory, p, file.arrowSchema));
      expect(imported.map((b) => b.numRows)).toEqual([333, 333, 333, 1]);
      const mine = imported.flatMap((b) => rowsFromBatch(b, ALL_TYPES));
      const theirs = viaIpc.batches.flatMap((b) => rowsFromBatch(b, ALL_TYPES));
      expect(mine).toEqual(theirs);
      expect(mine).toEqual(rows);
      // Nulls counted as Arrow counts them.
      imported[0].data.children.forEach((c, k) => expect(c.nullCount).toBe(viaIpc.batches[0].data.children[k].nullCount));
    } finally {
      ffi.free();
      table.free();
    }
    // The reader takes this path: whole-file reads give the rows back.
    expect(await readRows(path, ALL_TYPES)).toEqual(rows);
  });

  it('refuses a schema that is not the exported one', async () => {
    const path = tempPath('c-data-mismatch.parquet');
    const w = ParquetWriter.open(io, path, ALL_TYPES);
    await w.writeRows([row(1)]);
    await w.close();
    const file = await openParquet(io, path);
    file.close();
    const table = pw.readParquet(new Uint8Array(readFileSync(path)));
    const ffi = table.toFFI();
    try {
      const fewer = new arrow.Schema(file.arrowSchema.fields.slice(1));
      const otherType = new arrow.Schema([new arrow.Field('id', new arrow.Int32()), ...file.arrowSchema.fields.slice(1)]);
      expect(canImport(memory, ffi.schemaAddr(), fewer)).toBe(false);
      expect(canImport(memory, ffi.schemaAddr(), otherType)).toBe(false);
    } finally {
      ffi.free();
      table.free();
    }
  });
});
