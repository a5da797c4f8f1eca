/**
 * Arrow columns ↔ the project's Iceberg values (lib/iceberg/values.ts).
 *
 * Reading works on the raw Arrow buffers, not `Vector.get`: Arrow JS returns timestamps
 * as lossy millisecond numbers and decimals as word arrays. Reading also applies the
 * spec's type promotions (int → long, float → double, date → timestamp, ns ↔ µs for
 * INT96 files) and fills columns missing from a file with their initial default.
 *
 * Building makes plain (not dictionary-encoded) Arrow data of the types schema.ts
 * names, so that batches go to parquet-wasm with their field ids.
 */
import * as arrow from 'apache-arrow';
import { ValidationError } from '../errors.js';
import { fromJsonValue } from '../iceberg/json-single-value.js';
import { findMapped, mappedChildren, type MappedField } from '../iceberg/name-mapping.js';
import type { IcebergType, MapType, NestedField, PrimitiveType, StructType } from '../iceberg/types.js';
import { isLongValued, primitiveToString } from '../iceberg/types.js';
import { uuidFromBytes, uuidToBytes, type IcebergValue, type Row } from '../iceberg/values.js';
import { arrowSchema, arrowType, fieldIdOf } from './schema.js';

const MICROS_PER_DAY = 86_400_000_000n;
const NANOS_PER_DAY = 86_400_000_000_000n;
const utf8 = new TextDecoder('utf-8');

// ---------------------------------------------------------------------------------------------
// Reading

type AnyData = arrow.Data<arrow.DataType>;

/** Validity of row i of `data` (bitmaps are indexed from the data's offset). */
export function isValidAt(data: AnyData, i: number): boolean {
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.length === 0 || data.nullCount === 0) return true;
  const bit = data.offset + i;
  return (bitmap[bit >> 3] & (1 << (bit & 7))) !== 0;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** The unscaled value of a Decimal128/256 slot (little-endian 32-bit words, two's complement). */
function decimalAt(words: Uint32Array, stride: number, i: number): bigint {
  let v = 0n;
  for (let w = stride - 1; w >= 0; w--) v = (v << 32n) | BigInt(words[i * stride + w]);
  return BigInt.asIntN(stride * 32, v);
}

function offsetsAt(data: AnyData, i: number): [number, number] {
  const o = data.valueOffsets as Int32Array | BigInt64Array;
  return [Number(o[i]), Number(o[i + 1])];
}

function describe(t: IcebergType): string {
  return t.type === 'struct' || t.type === 'list' || t.type === 'map' ? t.type : primitiveToString(t as PrimitiveType);
}

function mismatch(t: IcebergType, data: AnyData, where: string): never {
  throw new ValidationError(`${where}: cannot read Arrow ${String(data.type)} as Iceberg ${describe(t)}`);
}

/** Integer time value of `data` at i, converted from the Arrow unit to `per` units per second. */
function timeUnitScale(unit: arrow.TimeUnit): bigint {
  switch (unit) {
    case arrow.TimeUnit.SECOND:
      return 1n;
    case arrow.TimeUnit.MILLISECOND:
      return 1_000n;
    case arrow.TimeUnit.MICROSECOND:
      return 1_000_000n;
    default:
      return 1_000_000_000n;
  }
}

function rescale(v: bigint, from: bigint, to: bigint): bigint {
  if (from === to) return v;
  return from < to ? v * (to / from) : floorDiv(v, from / to);
}

/** The nested field matching an Iceberg field: by `PARQUET:field_id`, or by name when the data has no ids. */
export function matchChildren(fields: readonly NestedField[], arrowFields: readonly arrow.Field[], mapped?: readonly MappedField[]): Array<number | undefined> {
  const anyIds = arrowFields.some((f) => fieldIdOf(f) !== undefined);
  return fields.map((f) => {
    // Without ids: through the name mapping where it describes these children (a child renamed since
    // the file was written), else by the current name.
    const idx = anyIds
      ? arrowFields.findIndex((a) => fieldIdOf(a) === f.id)
      : mapped
        ? arrowFields.findIndex((a) => findMapped(mapped, a.name)?.fieldId === f.id)
        : arrowFields.findIndex((a) => a.name === f.name);
    return idx < 0 ? undefined : idx;
  });
}

/** The value a field takes in a file that lacks its column: its initial default, else null. */
export function missingValue(f: NestedField): IcebergValue {
  return f.initialDefault === undefined ? null : fromJsonValue(f.type, f.initialDefault);
}

/**
 * Values of one Arrow column as Iceberg values of `type` (nulls as null), rows [0, data.length).
 * `where` names the column in errors.
 */
export function readData(type: IcebergType, data: AnyData, where = 'column', mapped?: readonly MappedField[]): IcebergValue[] {
  const n = data.length;
  const out: IcebergValue[] = new Array(n);
  const at = data.type;

  if (arrow.DataType.isDictionary(at)) {
    const dict = (data.dictionary as arrow.Vector).data.flatMap((d) => readData(type, d, where));
    const idx = data.values as ArrayLike<number | bigint>;
    for (let i = 0; i < n; i++) out[i] = isValidAt(data, i) ? dict[Number(idx[i])] : null;
    return out;
  }
  if (type.type === 'unknown' || at.typeId === arrow.Type.Null) return out.fill(null);

  const fill = (get: (i: number) => IcebergValue): IcebergValue[] => {
    for (let i = 0; i < n; i++) out[i] = isValidAt(data, i) ? get(i) : null;
    return out;
  };
  const values = data.values as ArrayLike<number | bigint> & { subarray?: unknown };

  switch (type.type) {
    case 'boolean': {
      if (!arrow.DataType.isBool(at)) mismatch(type, data, where);
      const bits = data.values as Uint8Array;
      return fill((i) => {
        const b = data.offset + i;
        return (bits[b >> 3] & (1 << (b & 7))) !== 0;
      });
    }
    case 'int':
      if (!arrow.DataType.isInt(at) || at.bitWidth > 32 || (!at.isSigned && at.bitWidth === 32)) mismatch(type, data, where);
      return fill((i) => Number(values[i]));
    case 'long':
      if (!arrow.DataType.isInt(at) || (!at.isSigned && at.bitWidth === 64)) mismatch(type, data, where);
      return fill((i) => BigInt(values[i]));
    case 'float':
    case 'double':
      if (!arrow.DataType.isFloat(at) || (type.type === 'float' && at.precision === arrow.Precision.DOUBLE)) {
        mismatch(type, data, where);
      }
      if (at.precision === arrow.Precision.HALF) mismatch(type, data, where);
      return fill((i) => values[i] as number);
    case 'decimal': {
      if (!arrow.DataType.isDecimal(at) || at.scale !== type.scale) mismatch(type, data, where);
      const stride = at.bitWidth / 32;
      const words = data.values as Uint32Array;
      return fill((i) => decimalAt(words, stride, i));
    }
    case 'date':
      if (arrow.DataType.isDate(at)) {
        return at.unit === arrow.DateUnit.DAY
          ? fill((i) => values[i] as number)
          : fill((i) => Number(floorDiv(BigInt(values[i]), 86_400_000n)));
      }
      return mismatch(type, data, where);
    case 'time': {
      if (!arrow.DataType.isTime(at)) mismatch(type, data, where);
      const from = timeUnitScale(at.unit);
      return fill((i) => rescale(BigInt(values[i]), from, 1_000_000n));
    }
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const per = type.type.endsWith('_ns') ? 1_000_000_000n : 1_000_000n;
      if (arrow.DataType.isTimestamp(at)) {
        const from = timeUnitScale(at.unit);
        return fill((i) => rescale(BigInt(values[i]), from, per));
      }
      // date → timestamp promotion (v3): midnight of the day.
      if (arrow.DataType.isDate(at) && (type.type === 'timestamp' || type.type === 'timestamp_ns')) {
        const perDay = per === 1_000_000n ? MICROS_PER_DAY : NANOS_PER_DAY;
        return at.unit === arrow.DateUnit.DAY
          ? fill((i) => BigInt(values[i]) * perDay)
          : fill((i) => rescale(BigInt(values[i]), 1_000n, per));
      }
      return mismatch(type, data, where);
    }
    case 'string': {
      if (!(arrow.DataType.isUtf8(at) || arrow.DataType.isLargeUtf8(at))) mismatch(type, data, where);
      const bytes = data.values as Uint8Array;
      return fill((i) => {
        const [s, e] = offsetsAt(data, i);
        return utf8.decode(bytes.subarray(s, e));
      });
    }
    case 'uuid': {
      if (!arrow.DataType.isFixedSizeBinary(at) || at.byteWidth !== 16) mismatch(type, data, where);
      const bytes = data.values as Uint8Array;
      return fill((i) => uuidFromBytes(bytes.subarray(i * 16, i * 16 + 16)));
    }
    case 'fixed': {
      if (!arrow.DataType.isFixedSizeBinary(at) || at.byteWidth !== type.length) mismatch(type, data, where);
      const w = at.byteWidth;
      const bytes = data.values as Uint8Array;
      return fill((i) => bytes.slice(i * w, i * w + w));
    }
    case 'binary': {
      const bytes = data.values as Uint8Array;
      if (arrow.DataType.isFixedSizeBinary(at)) {
        const w = at.byteWidth;
        return fill((i) => bytes.slice(i * w, i * w + w));
      }
      if (!(arrow.DataType.isBinary(at) || arrow.DataType.isLargeBinary(at))) mismatch(type, data, where);
      return fill((i) => {
        const [s, e] = offsetsAt(data, i);
        return bytes.slice(s, e);
      });
    }
    case 'struct': {
      if (!arrow.DataType.isStruct(at)) mismatch(type, data, where);
      const match = matchChildren(type.fields, at.children, mapped);
      const columns = type.fields.map((f, k) => {
        const idx = match[k];
        return idx === undefined ? undefined : readData(f.type, data.children[idx], `${where}.${f.name}`, mappedChildren(mapped, f.id));
      });
      const defaults = type.fields.map(missingValue);
      return fill((i) => {
        const row: Row = {};
        type.fields.forEach((f, k) => {
          const col = columns[k];
          row[f.name] = col ? col[i] : defaults[k];
        });
        return row;
      });
    }
    case 'list': {
      if (!(arrow.DataType.isList(at) || at.typeId === arrow.Type.LargeList || arrow.DataType.isFixedSizeList(at))) {
        mismatch(type, data, where);
      }
      const child = data.children[0];
      const elems = readData(type.element, child, `${where}.element`, mappedChildren(mapped, type.elementId));
      if (arrow.DataType.isFixedSizeList(at)) {
        const size = at.listSize;
        return fill((i) => elems.slice(i * size, (i + 1) * size));
      }
      return fill((i) => {
        const [s, e] = offsetsAt(data, i);
        return elems.slice(s, e);
      });
    }
    case 'map': {
      if (!arrow.DataType.isMap(at)) mismatch(type, data, where);
      const entries = data.children[0];
      const [kIdx, vIdx] = mapChildIndexes(type, entries.type as arrow.Struct);
      const keys = readData(type.key, entries.children[kIdx], `${where}.key`, mappedChildren(mapped, type.keyId));
      const vals = readData(type.value, entries.children[vIdx], `${where}.value`, mappedChildren(mapped, type.valueId));
      return fill((i) => {
        const [s, e] = offsetsAt(data, i);
        const pairs: Array<[IcebergValue, IcebergValue]> = [];
        for (let j = s; j < e; j++) pairs.push([keys[j], vals[j]]);
        return pairs;
      });
    }
  }
}

function mapChildIndexes(type: MapType, entries: arrow.Struct): [number, number] {
  const ids = entries.children.map(fieldIdOf);
  const k = ids.indexOf(type.keyId);
  const v = ids.indexOf(type.valueId);
  return k >= 0 && v >= 0 ? [k, v] : [0, 1];
}

/** A whole column (all chunks) as Iceberg values. */
export function readVector(type: IcebergType, vector: arrow.Vector, where = 'column'): IcebergValue[] {
  return vector.data.flatMap((d) => readData(type, d as AnyData, where));
}

/**
 * The rows of a batch as Iceberg rows of `schema`: columns are matched by field id (by name when
 * the file has no ids), promoted to the schema's types, and columns missing from the batch take
 * their initial default.
 */
export function rowsFromBatch(batch: arrow.RecordBatch, schema: StructType): Row[] {
  const match = matchChildren(schema.fields, batch.schema.fields);
  const columns = schema.fields.map((f, k) => {
    const idx = match[k];
    return idx === undefined ? undefined : readData(f.type, batch.data.children[idx], f.name);
  });
  const defaults = schema.fields.map(missingValue);
  const rows: Row[] = new Array(batch.numRows);
  for (let i = 0; i < batch.numRows; i++) {
    const row: Row = {};
    for (let k = 0; k < schema.fields.length; k++) {
      const col = columns[k];
      row[schema.fields[k].name] = col ? col[i] : defaults[k];
    }
    rows[i] = row;
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Building

class Validity {
  readonly bitmap: Uint8Array;
  nullCount = 0;
  constructor(n: number) {
    this.bitmap = new Uint8Array((n + 7) >> 3);
  }
  set(i: number): void {
    this.bitmap[i >> 3] |= 1 << (i & 7);
  }
  /** Props for makeData: no bitmap at all when nothing is null. */
  props(): { nullCount: number; nullBitmap?: Uint8Array } {
    return this.nullCount === 0 ? { nullCount: 0 } : { nullCount: this.nullCount, nullBitmap: this.bitmap };
  }
}

function badValue(where: string, t: IcebergType, v: unknown, why: string): never {
  const shown = typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `${v.length} bytes` : JSON.stringify(v);
  throw new ValidationError(`${where}: invalid ${describe(t)} value ${shown}: ${why}`);
}

function toBig(where: string, t: IcebergType, v: IcebergValue): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  return badValue(where, t, v, 'expected a bigint');
}

/**
 * Arrow data of `type` holding `values` (null for null). `required` rejects nulls that no
 * null parent masks (`masked[i]` true means the parent row is null).
 */
export function buildData(
  type: IcebergType,
  values: readonly IcebergValue[],
  where = 'column',
  required = false,
  masked?: Uint8Array,
): AnyData {
  const n = values.length;
  const valid = new Validity(n);
  const isNull = (i: number, v: IcebergValue): boolean => {
    if (v !== null && v !== undefined) return false;
    if (required && !(masked && masked[i])) {
      throw new ValidationError(`${where}: required field is null at row ${i}`);
    }
    valid.nullCount++;
    return true;
  };
  const dt = arrowType(type);

  if (isLongValued(type)) {
    const data = new BigInt64Array(n);
    values.forEach((v, i) => {
      if (isNull(i, v)) return;
      const b = toBig(where, type, v);
      if (b !== BigInt.asIntN(64, b)) badValue(where, type, v, 'out of the 64-bit range');
      valid.set(i);
      data[i] = b;
    });
    return arrow.makeData({ type: dt as arrow.Int64, length: n, ...valid.props(), data });
  }
  switch (type.type) {
    case 'boolean': {
      const bits = new Uint8Array((n + 7) >> 3);
      values.forEach((v, i) => {
        if (isNull(i, v)) return;
        if (typeof v !== 'boolean') badValue(where, type, v, 'expected a boolean');
        valid.set(i);
        if (v) bits[i >> 3] |= 1 << (i & 7);
      });
      return arrow.makeData({ type: dt as arrow.Bool, length: n, ...valid.props(), data: bits });
    }
    case 'int':
    case 'date': {
      const data = new Int32Array(n);
      values.forEach((v, i) => {
        if (isNull(i, v)) return;
        if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) {
          badValue(where, type, v, 'expected a 32-bit integer');
        }
        valid.set(i);
        data[i] = v;
      });
      return arrow.makeData({ type: dt as arrow.Int32, length: n, ...valid.props(), data });
    }
    case 'float':
    case 'double': {
      const data = type.type === 'float' ? new Float32Array(n) : new Float64Array(n);
      values.forEach((v, i) => {
        if (isNull(i, v)) return;
        if (typeof v !== 'number') badValue(where, type, v, 'expected a number');
        valid.set(i);
        data[i] = v;
      });
      return arrow.makeData({ type: dt as arrow.Float64, length: n, ...valid.props(), data: data as Float64Array });
    }
    case 'decimal': {
      const words = new Uint32Array(n * 4);
      const limit = 10n ** BigInt(type.precision);
      values.forEach((v, i) => {
        if (isNull(i, v)) return;
        const b = toBig(where, type, v);
        if (b >= limit || b <= -limit) badValue(where, type, v, `does not fit precision ${type.precision}`);
        valid.set(i);
        let u = BigInt.asUintN(128, b);
        for (let w = 0; w < 4; w++) {
          words[i * 4 + w] = Number(u & 0xffffffffn);
          u >>= 32n;
        }
      });
      return arrow.makeData({ type: dt as arrow.Decimal, length: n, ...valid.props(), data: words });
    }
    case 'string': {
      const offsets = new Int32Array(n + 1);
      let total = 0;
      values.forEach((v, i) => {
        if (!isNull(i, v)) {
          if (typeof v !== 'string') badValue(where, type, v, 'expected a string');
          valid.set(i);
          total += Buffer.byteLength(v, 'utf8');
        }
        offsets[i + 1] = total;
      });
      if (total > 0x7fffffff) throw new ValidationError(`${where}: more than 2 GiB of strings in one batch`);
      const bytes = Buffer.allocUnsafe(total);
      values.forEach((v, i) => {
        if (typeof v === 'string') bytes.write(v, offsets[i], 'utf8');
      });
      const data = new Uint8Array(bytes.buffer, bytes.byteOffset, total);
      return arrow.makeData({ type: dt as arrow.Utf8, length: n, ...valid.props(), valueOffsets: offsets, data });
    }
    case 'binary': {
      const offsets = new Int32Array(n + 1);
      let total = 0;
      values.forEach((v, i) => {
        if (!isNull(i, v)) {
          if (!(v instanceof Uint8Array)) badValue(where, type, v, 'expected a Uint8Array');
          valid.set(i);
          total += v.length;
        }
        offsets[i + 1] = total;
      });
      const data = new Uint8Array(total);
      values.forEach((v, i) => {
        if (v instanceof Uint8Array) data.set(v, offsets[i]);
      });
      return arrow.makeData({ type: dt as arrow.Binary, length: n, ...valid.props(), valueOffsets: offsets, data });
    }
    case 'uuid':
    case 'fixed': {
      const w = type.type === 'uuid' ? 16 : type.length;
      const data = new Uint8Array(n * w);
      values.forEach((v, i) => {
        if (isNull(i, v)) return;
        let b: Uint8Array;
        if (type.type === 'uuid') {
          if (typeof v !== 'string') badValue(where, type, v, 'expected a uuid string');
          b = uuidToBytes(v);
        } else {
          if (!(v instanceof Uint8Array) || v.length !== w) badValue(where, type, v, `expected ${w} bytes`);
          b = v;
        }
        valid.set(i);
        data.set(b, i * w);
      });
      return arrow.makeData({ type: dt as arrow.FixedSizeBinary, length: n, ...valid.props(), data });
    }
    case 'unknown':
      return arrow.makeData({ type: new arrow.Null(), length: n, nullCount: n });
    case 'struct': {
      // Rows under a null struct are masked for the children's required checks.
      const childMask = new Uint8Array(n);
      values.forEach((v, i) => {
        if (isNull(i, v)) {
          childMask[i] = 1;
          return;
        }
        if (typeof v !== 'object' || Array.isArray(v) || v instanceof Uint8Array) badValue(where, type, v, 'expected a row object');
        if (masked && masked[i]) childMask[i] = 1;
        valid.set(i);
      });
      const children = type.fields
        .filter((f) => f.type.type !== 'unknown')
        .map((f) =>
          buildData(
            f.type,
            values.map((v) => (v === null || v === undefined ? null : ((v as Row)[f.name] ?? null))),
            `${where}.${f.name}`,
            f.required,
            childMask,
          ),
        );
      return arrow.makeData({ type: dt as arrow.Struct, length: n, ...valid.props(), children });
    }
    case 'list': {
      const offsets = new Int32Array(n + 1);
      const flat: IcebergValue[] = [];
      values.forEach((v, i) => {
        if (!isNull(i, v)) {
          if (!Array.isArray(v)) badValue(where, type, v, 'expected an array');
          valid.set(i);
          for (const e of v as IcebergValue[]) flat.push(e);
        }
        offsets[i + 1] = flat.length;
      });
      const child = buildData(type.element, flat, `${where}.element`, type.elementRequired);
      return arrow.makeData({ type: dt as arrow.List, length: n, ...valid.props(), valueOffsets: offsets, child });
    }
    case 'map': {
      const offsets = new Int32Array(n + 1);
      const keys: IcebergValue[] = [];
      const vals: IcebergValue[] = [];
      values.forEach((v, i) => {
        if (!isNull(i, v)) {
          if (!Array.isArray(v)) badValue(where, type, v, 'expected an array of [key, value] pairs');
          valid.set(i);
          for (const pair of v as Array<[IcebergValue, IcebergValue]>) {
            if (!Array.isArray(pair) || pair.length !== 2) badValue(where, type, pair, 'expected a [key, value] pair');
            keys.push(pair[0]);
            vals.push(pair[1]);
          }
        }
        offsets[i + 1] = keys.length;
      });
      const entriesType = (dt as arrow.Map_).children[0].type as arrow.Struct;
      const child = arrow.makeData({
        type: entriesType,
        length: keys.length,
        nullCount: 0,
        children: [
          buildData(type.key, keys, `${where}.key`, true),
          buildData(type.value, vals, `${where}.value`, type.valueRequired),
        ],
      });
      return arrow.makeData({ type: dt as arrow.Map_, length: n, ...valid.props(), valueOffsets: offsets, child });
    }
  }
}

/** A RecordBatch of `schema` (schema.ts's Arrow schema, with field ids) from rows keyed by field name. */
export function batchFromRows(schema: StructType, rows: readonly Row[]): arrow.RecordBatch {
  const target = arrowSchema(schema);
  const fields = schema.fields.filter((f) => f.type.type !== 'unknown');
  const children = fields.map((f) =>
    buildData(f.type, rows.map((r) => r[f.name] ?? null), f.name, f.required),
  );
  const data = arrow.makeData({ type: new arrow.Struct(target.fields), length: rows.length, nullCount: 0, children });
  return new arrow.RecordBatch(target, data);
}
