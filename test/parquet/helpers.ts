import { join } from 'node:path';
import type * as arrow from 'apache-arrow';
import fc from 'fast-check';
import type { IcebergType, PrimitiveType, StructType } from '../../lib/iceberg/types.js';
import { uuidFromBytes, type IcebergValue, type Row } from '../../lib/iceberg/values.js';
import type { InputFile } from '../../lib/io/file-io.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { openParquet, readRowGroups, type ReadOptions } from '../../lib/parquet/reader.js';
import { rowsFromBatch } from '../../lib/parquet/values.js';
import { tempDir } from '../support/fixtures.js';

export const io = new LocalFileIO();

export function tempPath(name: string): string {
  return join(tempDir('packice-parquet-'), name);
}

/** Every primitive type at the top level, plus struct, list and map nesting. */
export const ALL_TYPES: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'b', required: false, type: { type: 'boolean' } },
    { id: 3, name: 'i', required: false, type: { type: 'int' } },
    { id: 4, name: 'f', required: false, type: { type: 'float' } },
    { id: 5, name: 'd', required: false, type: { type: 'double' } },
    { id: 6, name: 'dec9', required: false, type: { type: 'decimal', precision: 9, scale: 2 } },
    { id: 7, name: 'dec18', required: false, type: { type: 'decimal', precision: 18, scale: 6 } },
    { id: 8, name: 'dec38', required: false, type: { type: 'decimal', precision: 38, scale: 10 } },
    { id: 9, name: 'date', required: false, type: { type: 'date' } },
    { id: 10, name: 'time', required: false, type: { type: 'time' } },
    { id: 11, name: 'ts', required: false, type: { type: 'timestamp' } },
    { id: 12, name: 'tstz', required: false, type: { type: 'timestamptz' } },
    { id: 13, name: 'ts_ns', required: false, type: { type: 'timestamp_ns' } },
    { id: 14, name: 'tstz_ns', required: false, type: { type: 'timestamptz_ns' } },
    { id: 15, name: 's', required: false, type: { type: 'string' } },
    { id: 16, name: 'u', required: false, type: { type: 'uuid' } },
    { id: 17, name: 'fx', required: false, type: { type: 'fixed', length: 3 } },
    { id: 18, name: 'bin', required: false, type: { type: 'binary' } },
    {
      id: 19,
      name: 'st',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 20, name: 'a', required: true, type: { type: 'int' } },
          { id: 21, name: 'inner', required: false, type: { type: 'struct', fields: [{ id: 22, name: 'z', required: false, type: { type: 'string' } }] } },
        ],
      },
    },
    { id: 23, name: 'l', required: false, type: { type: 'list', elementId: 24, elementRequired: false, element: { type: 'long' } } },
    {
      id: 25,
      name: 'm',
      required: false,
      type: {
        type: 'map',
        keyId: 26,
        key: { type: 'string' },
        valueId: 27,
        valueRequired: false,
        value: { type: 'struct', fields: [{ id: 28, name: 'v', required: false, type: { type: 'double' } }] },
      },
    },
    {
      id: 29,
      name: 'll',
      required: false,
      type: {
        type: 'list',
        elementId: 30,
        elementRequired: true,
        element: { type: 'list', elementId: 31, elementRequired: true, element: { type: 'int' } },
      },
    },
  ],
};

/** Reads a whole file as rows of `schema`. */
export async function readRows(path: string, schema: StructType, options: ReadOptions = {}): Promise<Row[]> {
  const file = await openParquet(io, path);
  try {
    const rows: Row[] = [];
    for await (const b of readRowGroups(file, options)) rows.push(...rowsFromBatch(b, schema));
    return rows;
  } finally {
    file.close();
  }
}

export const hex = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString('hex') : undefined);

/** `base` with every range read recorded in `reads`, in order. */
export function countingInput(base: InputFile, reads: Array<[number, number]>): InputFile {
  return {
    path: base.path,
    length: () => base.length(),
    read: (s, e) => {
      reads.push([s, e]);
      return base.read(s, e);
    },
  };
}

function primitiveArbitrary(t: PrimitiveType): fc.Arbitrary<IcebergValue> {
  switch (t.type) {
    case 'boolean': return fc.boolean();
    case 'int': case 'date': return fc.integer({ min: -1_000_000, max: 1_000_000 });
    case 'long': case 'time': case 'timestamp': case 'timestamptz': case 'timestamp_ns': case 'timestamptz_ns':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((v) => (t.type === 'time' ? (v < 0n ? -v : v) % 86_400_000_000n : v));
    case 'float': return fc.float({ noNaN: true });
    case 'double': return fc.double({ noNaN: true });
    case 'decimal': {
      const max = 10n ** BigInt(t.precision) - 1n;
      return fc.bigInt({ min: -max, max });
    }
    case 'string': return fc.string({ unit: 'binary' });
    case 'uuid': return fc.uint8Array({ minLength: 16, maxLength: 16 }).map(uuidFromBytes);
    case 'fixed': return fc.uint8Array({ minLength: t.length, maxLength: t.length });
    case 'binary': return fc.uint8Array({ maxLength: 20 });
    default: return fc.constant(null);
  }
}

function valueArbitrary(t: IcebergType, required: boolean): fc.Arbitrary<IcebergValue> {
  let arb: fc.Arbitrary<IcebergValue>;
  if (t.type === 'struct') arb = rowArbitrary(t);
  else if (t.type === 'list') arb = fc.array(valueArbitrary(t.element, t.elementRequired), { maxLength: 4 });
  else if (t.type === 'map') arb = fc.uniqueArray(fc.tuple(valueArbitrary(t.key, true), valueArbitrary(t.value, t.valueRequired)), { maxLength: 3, selector: ([k]) => k }) as fc.Arbitrary<IcebergValue>;
  else arb = primitiveArbitrary(t);
  return required ? arb : fc.option(arb, { nil: null, freq: 4 });
}

/** Random rows of `s` (fast-check): every type, nulls where the schema allows them. */
export function rowArbitrary(s: StructType): fc.Arbitrary<Row> {
  return fc.record(Object.fromEntries(s.fields.map((f) => [f.name, valueArbitrary(f.type, f.required)]))) as fc.Arbitrary<Row>;
}

/** Batches of rows of `s` (1-4 of 1-12 rows each), and where to cut each in two slices. */
export function chunksArbitrary(s: StructType): fc.Arbitrary<[Row[][], number]> {
  return fc.tuple(fc.array(fc.array(rowArbitrary(s), { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }), fc.nat({ max: 11 }));
}

/** Each batch cut in two slices at row `cut` (validity bits at odd offsets); an empty slice is left out. */
export function slicedParts(batches: readonly arrow.RecordBatch[], cut: number): arrow.RecordBatch[] {
  return batches.flatMap((b) => {
    const at = Math.min(cut, b.numRows);
    return [b.slice(0, at), b.slice(at, b.numRows)].filter((x) => x.numRows > 0);
  });
}
