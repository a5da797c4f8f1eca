import { execFileSync } from 'node:child_process';
import { openAsBlob, readFileSync } from 'node:fs';
import * as pw from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { InvalidFileError } from '../../lib/errors.js';
import type { StructType } from '../../lib/iceberg/types.js';
import { annotateUuidColumns, decodeFooter, footerFromBytes, splitOffsets } from '../../lib/parquet/footer.js';
import { planRowGroup } from '../../lib/parquet/row-group-file.js';
import { readTypedStruct, writeTypedStruct } from '../../lib/parquet/thrift.js';
import { ParquetWriter } from '../../lib/parquet/writer.js';
import { FIXTURES } from '../support/fixtures.js';
import { io, tempPath } from './helpers.js';

const fixtureFiles = execFileSync('find', [FIXTURES, '-name', '*.parq*'], { encoding: 'utf8' }).trim().split('\n').sort();

function footerBytesOf(bytes: Uint8Array): Uint8Array {
  const len = new DataView(bytes.buffer, bytes.byteOffset).getUint32(bytes.length - 8, true);
  return bytes.subarray(bytes.length - 8 - len, bytes.length - 8);
}

describe('footer decoding', () => {
  it('finds the 19 fixture Parquet files', () => {
    expect(fixtureFiles).toHaveLength(19);
  });

  it('agrees with parquet-wasm on rows, row groups and column chunks of every fixture file', async () => {
    for (const path of fixtureFiles) {
      const footer = footerFromBytes(path, new Uint8Array(readFileSync(path)));
      const wasm = await pw.ParquetFile.fromFile(await openAsBlob(path));
      const meta = wasm.metadata();
      expect(footer.numRows).toBe(meta.fileMetadata().numRows());
      expect(footer.rowGroups).toHaveLength(meta.numRowGroups());
      footer.rowGroups.forEach((rg, i) => {
        const w = meta.rowGroup(i);
        expect(rg.numRows).toBe(w.numRows());
        expect(rg.columns.map((c) => [c.path.join('.'), c.totalCompressedSize, c.numValues])).toEqual(
          w.columns().map((c) => [c.columnPath().join('.'), c.compressedSize(), c.numValues()]),
        );
      });
      expect(footer.createdBy).toBe(meta.fileMetadata().createdBy());
      wasm.free();
    }
  });

  it('re-encodes every fixture footer byte for byte through the typed Thrift form', () => {
    for (const path of fixtureFiles) {
      const bytes = footerBytesOf(new Uint8Array(readFileSync(path)));
      expect(Buffer.from(writeTypedStruct(readTypedStruct(bytes))).equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it('rejects bytes that are not a footer', () => {
    expect(() => footerFromBytes('/x.parquet', new TextEncoder().encode('PAR1 hello, not a footer at all PAR1'))).toThrow(InvalidFileError);
    expect(() => decodeFooter(Uint8Array.of(0x15))).toThrow(/thrift: read past the end/);
  });
});

describe('UUID annotation and row-group files', () => {
  const schema: StructType = {
    type: 'struct',
    fields: [
      { id: 1, name: 'u', required: false, type: { type: 'uuid' } },
      { id: 2, name: 'f', required: false, type: { type: 'fixed', length: 16 } },
      { id: 3, name: 's', required: false, type: { type: 'string' } },
    ],
  };

  it('annotates only the uuid columns it is asked to, once', async () => {
    const path = tempPath('u.parquet');
    const w = ParquetWriter.open(io, path, schema);
    await w.writeRows([{ u: '00000000-0000-0000-0000-000000000001', f: new Uint8Array(16), s: 'x' }]);
    await w.close();
    const bytes = footerBytesOf(await io.read(path));
    const types = (b: Uint8Array): unknown[] => decodeFooter(b).schema.slice(1).map((e) => e.logicalType?.type);
    // The writer already annotated u; annotating again changes nothing.
    expect(types(bytes)).toEqual(['uuid', undefined, 'string']);
    expect(annotateUuidColumns(bytes, new Set([1]))).toBe(bytes);
    const both = annotateUuidColumns(bytes, new Set([1, 2]));
    expect(types(both)).toEqual(['uuid', 'uuid', 'string']);
    expect(decodeFooter(both).rowGroups).toEqual(decodeFooter(bytes).rowGroups);
  });

  it('plans a standalone file of one row group and some columns', async () => {
    const path = tempPath('plan.parquet');
    const w = ParquetWriter.open(io, path, schema, { rowGroupRows: 10 });
    await w.writeRows(Array.from({ length: 35 }, (_, k) => ({ u: null, f: null, s: `s${k}` })));
    await w.close();
    const file = await io.read(path);
    const typed = readTypedStruct(footerBytesOf(file));
    const plan = planRowGroup(typed, 2, ['s']);
    expect(plan.reads).toHaveLength(1);
    const part = plan.build(plan.reads.map(([s, e]) => file.subarray(s, e)));
    const footer = footerFromBytes('part', part);
    expect(footer.numRows).toBe(10);
    expect(footer.schema.map((e) => e.name)).toEqual(['arrow_schema', 's']);
    expect(splitOffsets(footer)).toEqual([4]);
    const table = pw.readParquet(part);
    expect(table.numBatches).toBe(1);
    table.free();
  });
});
