/**
 * A table carrying equality deletes on a double and a float column, as other engines write them
 * (the spec forbids them: deleteByEquality is told allowFloatingKeys). Its rows hold 0.0, -0.0,
 * NaN of two bit patterns, 1.5 and null in both columns; the deletes name 0.0, a NaN of a third
 * pattern and null in each, and (id, e) pairs with e a double of -0.0 or NaN. `javaLive` says which
 * rows Java 1.12 keeps: keys compared by Float/Double.compare (StructLikeSet), null equal to null.
 */
import type { Table } from '../../lib/catalog/table.js';
import type { StructType } from '../../lib/iceberg/types.js';
import type { Row } from '../../lib/iceberg/values.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { appendRows, createNewTable, deleteByEquality } from '../../lib/table/operations.js';
import { MERGE } from './flat-table.js';

const double = (bits: bigint): number => new Float64Array(new BigUint64Array([bits]).buffer)[0];
const float = (bits: number): number => new Float32Array(new Uint32Array([bits]).buffer)[0];

/** NaNs as other engines may write them (a negative one is what x86 gives for 0/0), and the canonical one. */
export const NAN_BITS = {
  double: [0x7ff8000000000000n, 0xfff8000000000000n],
  float: [0x7fc00000, 0xffc00000],
  /** The delete keys' NaNs: another pattern still, so a match cannot rest on equal bits. */
  doubleKey: 0x7ff8000000000001n,
  floatKey: 0x7fc00001,
} as const;

export const FLOAT_KEY_SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'd', required: false, type: { type: 'double' } },
    { id: 3, name: 'f', required: false, type: { type: 'float' } },
    { id: 4, name: 'note', required: false, type: { type: 'string' } },
    { id: 5, name: 'e', required: false, type: { type: 'double' } },
  ],
};

const DOUBLES: readonly (number | null)[] = [0, -0, double(NAN_BITS.double[0]), double(NAN_BITS.double[1]), 1.5, null, 2.5];
const FLOATS: readonly (number | null)[] = [0, -0, float(NAN_BITS.float[0]), float(NAN_BITS.float[1]), 1.5, null, Math.fround(0.1)];

/** Rows per append; every (d, f) pair of the lists occurs in each append. */
export const FLOAT_KEY_ROWS = DOUBLES.length * FLOATS.length;

export function floatKeyRow(id: number): Row {
  return {
    id: BigInt(id),
    d: DOUBLES[id % DOUBLES.length],
    f: FLOATS[Math.floor(id / DOUBLES.length) % FLOATS.length],
    note: `row ${id}`,
    e: id % 2 === 0 ? -0 : double(NAN_BITS.double[1]),
  };
}

/** The equality deletes, by their field ids. */
const DELETES: readonly { ids: number[]; keys: Row[] }[] = [
  { ids: [2], keys: [{ d: 0 }, { d: double(NAN_BITS.doubleKey) }, { d: null }] },
  { ids: [3], keys: [{ f: 0 }, { f: float(NAN_BITS.floatKey) }, { f: null }] },
  // Rows 8, 11 and 32 outlive the keys above: here only their e decides (8 holds -0.0, 11 a NaN).
  { ids: [1, 5], keys: [{ id: 8n, e: 0 }, { id: 32n, e: -0 }, { id: 11n, e: double(NAN_BITS.doubleKey) }] },
];

/** Java's key equality (Comparators: naturalOrder after nullsFirst): Double.compare, whose NaN is one value and -0.0 another than 0.0. */
function javaEqual(a: unknown, b: unknown): boolean {
  if (a === null || b === null) return a === b;
  return Number.isNaN(a) ? Number.isNaN(b) : Object.is(a, b);
}

/** Whether Java 1.12 keeps a row of the table. */
export function javaLive(row: Row): boolean {
  return !DELETES.some((d) => d.keys.some((k) => d.ids.every((id) => {
    const name = FLOAT_KEY_SCHEMA.fields.find((f) => f.id === id)!.name;
    return javaEqual(row[name], k[name]);
  })));
}

/** Two appends, then the equality deletes; every input merged by default (MERGE). */
export async function floatKeyTable(io: FileIO, location: string, properties: Record<string, string> = {}): Promise<Table> {
  let t = await createNewTable(io, location, { schema: FLOAT_KEY_SCHEMA, properties: { ...MERGE, ...properties } });
  for (let a = 0; a < 2; a++) t = await appendRows(t, Array.from({ length: FLOAT_KEY_ROWS }, (_, i) => floatKeyRow(1 + a * FLOAT_KEY_ROWS + i)));
  for (const d of DELETES) t = await deleteByEquality(t, d.ids, d.keys, { allowFloatingKeys: true });
  return t;
}

/** The ids of the rows Java keeps, ascending. */
export function javaLiveIds(): number[] {
  return Array.from({ length: 2 * FLOAT_KEY_ROWS }, (_, i) => i + 1).filter((id) => javaLive(floatKeyRow(id)));
}
