/**
 * Arrow batches as the rewriter and the scanner move them: a file's columns conformed to an
 * Iceberg schema's Arrow layout (schema.ts), and runs of rows selected, column by column,
 * without making a JavaScript object per row.
 *
 * Conforming keeps a column's buffers when the file already stores it the way the schema
 * writes it (the usual case), widens int → long and float → double in one typed-array pass,
 * relabels decimals whose precision grew, and falls back to values.ts (read as Iceberg values,
 * build again) for anything else: dictionary-encoded data, other time units, nested types
 * whose children moved.
 */
import * as arrow from 'apache-arrow';
import type { IcebergType, StructType } from '../iceberg/types.js';
import type { IcebergValue } from '../iceberg/values.js';
import { arrowSchema, arrowType, fieldIdOf, sameArrowType } from './schema.js';
import { copyBits } from './concat.js';
import { mappedChildren, type MappedField } from '../iceberg/name-mapping.js';
import { buildData, matchChildren, missingValue, readData } from './values.js';

type AnyData = arrow.Data<arrow.DataType>;

/** Whether `data` stores `target` exactly as schema.ts writes it, field ids of nested children included. */
function sameLayout(at: arrow.DataType, target: arrow.DataType): boolean {
  if (arrow.DataType.isDictionary(at) || !sameArrowType(at, target)) return false;
  if (arrow.DataType.isStruct(at) || arrow.DataType.isList(at) || arrow.DataType.isMap(at)) {
    const a = arrow.DataType.isMap(at) ? at.children[0].type.children : at.children;
    const t = arrow.DataType.isMap(target) ? target.children[0].type.children : target.children;
    if (a.length !== t.length) return false;
    for (let i = 0; i < a.length; i++) {
      const ida = fieldIdOf(a[i]);
      if (ida === undefined || ida !== fieldIdOf(t[i]) || !sameLayout(a[i].type, t[i].type)) return false;
    }
  }
  return true;
}

/** Gives Arrow data the target type tree (names, ids, precision), keeping its buffers. */
export function relabel(data: AnyData, type: arrow.DataType): AnyData {
  const children = type.children?.length ? type.children.map((c, i) => relabel(data.children[i], c.type)) : data.children;
  return data.clone(type, undefined, undefined, undefined, undefined, children);
}

/** The validity bitmap of `data` re-based to start at bit 0, or undefined when nothing is null. */
function validity(data: AnyData): Uint8Array | undefined {
  if (data.nullCount === 0 || !data.nullBitmap || data.nullBitmap.length === 0) return undefined;
  const n = data.length;
  if ((data.offset & 7) === 0) return data.nullBitmap.subarray(data.offset >> 3, (data.offset >> 3) + ((n + 7) >> 3));
  const out = new Uint8Array((n + 7) >> 3);
  copyBits(data.nullBitmap, data.offset, out, 0, n);
  return out;
}

function nulls(data: AnyData): { nullCount: number; nullBitmap?: Uint8Array } {
  const bitmap = validity(data);
  return bitmap ? { nullCount: data.nullCount, nullBitmap: bitmap } : { nullCount: 0 };
}

/** A column of `n` rows all holding `value` (null for none). */
export function constantColumn(type: IcebergType, value: IcebergValue, n: number): AnyData {
  return buildData(type, new Array<IcebergValue>(n).fill(value));
}

/**
 * One column of a file as the schema writes `type`: its buffers kept when they already match,
 * converted column-wise when the spec's promotions apply, rebuilt through Iceberg values otherwise.
 */
export function conformColumn(type: IcebergType, data: AnyData, where: string, mapped?: readonly MappedField[]): AnyData {
  const target = arrowType(type);
  const at = data.type;
  if (sameLayout(at, target)) return relabel(data, target);
  if (!arrow.DataType.isDictionary(at)) {
    if (type.type === 'long' && arrow.DataType.isInt(at) && at.isSigned && at.bitWidth === 32) {
      const src = data.values as Int32Array;
      const n = data.length;
      const words = new Int32Array(n * 2);
      for (let i = 0; i < n; i++) {
        const v = src[i];
        words[2 * i] = v;
        words[2 * i + 1] = v >> 31;
      }
      return arrow.makeData({ type: target as arrow.Int64, length: n, ...nulls(data), data: new BigInt64Array(words.buffer) });
    }
    if (type.type === 'double' && arrow.DataType.isFloat(at) && at.precision === arrow.Precision.SINGLE) {
      return arrow.makeData({ type: target as arrow.Float64, length: data.length, ...nulls(data), data: Float64Array.from(data.values as Float32Array) });
    }
    if (type.type === 'decimal' && arrow.DataType.isDecimal(at) && at.scale === type.scale && at.bitWidth === 128 && at.precision <= type.precision) {
      return relabel(data, target);
    }
    if (type.type === 'struct' && arrow.DataType.isStruct(at)) {
      const match = matchChildren(type.fields, at.children, mapped);
      const children: AnyData[] = [];
      type.fields.forEach((f, k) => {
        if (f.type.type === 'unknown') return;
        const idx = match[k];
        children.push(
          idx === undefined
            ? constantColumn(f.type, missingValue(f), data.length)
            : conformColumn(f.type, data.children[idx], `${where}.${f.name}`, mappedChildren(mapped, f.id)),
        );
      });
      return arrow.makeData({ type: target as arrow.Struct, length: data.length, ...nulls(data), children });
    }
  }
  return buildData(type, readData(type, data, where, mapped), where);
}

/** What apache-arrow's RecordBatch constructor sets (recordbatch.mjs), in its order. */
interface RecordBatchFields {
  schema: arrow.Schema;
  data: arrow.Data<arrow.Struct>;
  _metadata: Map<string, string>;
}

/**
 * A RecordBatch of `data`, a Struct of `schema`'s columns. apache-arrow's constructor copies the
 * schema for every batch (each field cloned with two new metadata maps) to make columns shorter
 * than the batch nullable; when every column has the batch's length that copy equals `schema`,
 * so the batch is made as the constructor makes it, without the copy: a rewrite makes thousands
 * of batches, and the copies were a tenth of what it allocated.
 */
export function recordBatch(schema: arrow.Schema, data: arrow.Data<arrow.Struct>): arrow.RecordBatch {
  const n = data.length;
  const children = data.children;
  // The constructor's own way for anything else, and for a struct with an offset or nulls of its own (it drops them).
  if (data.offset !== 0 || data.nullCount !== 0 || children.length !== schema.fields.length || children.some((c) => c.length !== n)) {
    return new arrow.RecordBatch(schema, data);
  }
  const batch = Object.create(arrow.RecordBatch.prototype) as RecordBatchFields;
  batch.schema = schema;
  batch.data = data;
  batch._metadata = new Map();
  return batch as unknown as arrow.RecordBatch;
}

/** A batch of `schema`'s Arrow layout from conformed columns (one per non-`unknown` field, in order). */
export function batchOf(schema: StructType, columns: readonly AnyData[], length: number): arrow.RecordBatch {
  const target = arrowSchema(schema);
  return recordBatch(target, arrow.makeData({ type: new arrow.Struct(target.fields), length, nullCount: 0, children: [...columns] }));
}

/**
 * Row runs as parallel arrays: rows [starts[k], starts[k] + lengths[k]) for each k, ascending
 * and not overlapping.
 */
export interface Runs {
  readonly starts: Int32Array;
  readonly lengths: Int32Array;
  readonly count: number;
  /** Rows in all runs. */
  readonly rows: number;
}

/** The rows of `data` in `runs`, copied into fresh buffers. */
export function takeRuns(data: AnyData, runs: Runs): AnyData {
  const n = runs.rows;
  const { starts, lengths, count } = runs;
  let nullCount = 0;
  let nullBitmap: Uint8Array | undefined;
  if (data.nullCount > 0 && data.nullBitmap && data.nullBitmap.length > 0) {
    nullBitmap = new Uint8Array((n + 7) >> 3);
    let at = 0;
    for (let k = 0; k < count; k++) {
      copyBits(data.nullBitmap, data.offset + starts[k], nullBitmap, at, lengths[k]);
      at += lengths[k];
    }
    nullCount = n;
    for (let i = 0; i < n; i++) if ((nullBitmap[i >> 3] & (1 << (i & 7))) !== 0) nullCount--;
  }
  const valid = nullCount > 0 ? { nullCount, nullBitmap } : { nullCount: 0 };
  const type = data.type;
  if (type.typeId === arrow.Type.Null) return arrow.makeData({ type: type as arrow.Null, length: n, nullCount: n });
  if (arrow.DataType.isBool(type)) {
    const bits = new Uint8Array((n + 7) >> 3);
    let at = 0;
    for (let k = 0; k < count; k++) {
      copyBits(data.values as Uint8Array, data.offset + starts[k], bits, at, lengths[k]);
      at += lengths[k];
    }
    return arrow.makeData({ type, length: n, ...valid, data: bits });
  }
  if (arrow.DataType.isStruct(type)) {
    const children = data.children.map((c) => takeRuns(c, runs));
    return arrow.makeData({ type, length: n, ...valid, children });
  }
  if (data.valueOffsets) {
    // Variable width: rebased offsets; the values (bytes, or the child's rows) of each run copied.
    const offsets = data.valueOffsets as Int32Array;
    const out = new Int32Array(n + 1);
    const childStarts = new Int32Array(count);
    const childLengths = new Int32Array(count);
    let at = 0;
    let total = 0;
    for (let k = 0; k < count; k++) {
      const s = starts[k];
      const first = offsets[s];
      for (let j = 0; j < lengths[k]; j++) out[at + j + 1] = total + offsets[s + j + 1] - first;
      childStarts[k] = first;
      childLengths[k] = offsets[s + lengths[k]] - first;
      at += lengths[k];
      total += childLengths[k];
    }
    if (arrow.DataType.isUtf8(type) || arrow.DataType.isBinary(type)) {
      const src = data.values as Uint8Array;
      const bytes = new Uint8Array(total);
      let to = 0;
      for (let k = 0; k < count; k++) {
        bytes.set(src.subarray(childStarts[k], childStarts[k] + childLengths[k]), to);
        to += childLengths[k];
      }
      return arrow.makeData({ type, length: n, ...valid, valueOffsets: out, data: bytes } as never);
    }
    const child = takeRuns(data.children[0], { starts: childStarts, lengths: childLengths, count, rows: total });
    return arrow.makeData({ type, length: n, ...valid, valueOffsets: out, child } as never);
  }
  if (arrow.DataType.isFixedSizeList(type)) {
    const size = type.listSize;
    const child = takeRuns(data.children[0], {
      starts: starts.map((s) => s * size),
      lengths: lengths.map((l) => l * size),
      count,
      rows: n * size,
    });
    return arrow.makeData({ type, length: n, ...valid, child });
  }
  // Fixed width: `stride` elements of the values array per row.
  const src = data.values as Int32Array;
  const stride = data.stride;
  const values = new (src.constructor as Int32ArrayConstructor)(n * stride);
  let at = 0;
  for (let k = 0; k < count; k++) {
    values.set(src.subarray(starts[k] * stride, (starts[k] + lengths[k]) * stride), at * stride);
    at += lengths[k];
  }
  return arrow.makeData({ type, length: n, ...valid, data: values } as never);
}

/** The rows of `batch` in `runs`: a zero-copy slice for one run, copied columns for more. */
export function selectRuns(batch: arrow.RecordBatch, runs: Runs): arrow.RecordBatch {
  if (runs.count === 1) {
    return runs.lengths[0] === batch.numRows ? batch : batch.slice(runs.starts[0], runs.starts[0] + runs.lengths[0]);
  }
  const children = batch.data.children.map((c) => takeRuns(c, runs));
  return recordBatch(batch.schema, arrow.makeData({ type: new arrow.Struct(batch.schema.fields), length: runs.rows, nullCount: 0, children }));
}
