/**
 * Iceberg column metrics of a written file, computed from the values written (parquet-wasm
 * writes statistics but cannot hand them back). Follows Java's ParquetMetrics (1.10+):
 *
 * - value, null and (float/double) NaN counts and lower/upper bounds for primitive columns
 *   at the top level or nested in structs; nothing for columns inside lists or maps;
 * - bounds exclude nulls and NaN, order -0.0 before +0.0, and are truncated by truncate(N)
 *   for string and binary only; an upper bound that cannot be truncated is omitted;
 * - column sizes (compressed bytes, all row groups) for every leaf column with an id,
 *   taken from the footer; a column whose mode is `none` gets nothing at all.
 */
import type * as arrow from 'apache-arrow';
import { compareBytes, toBytes, truncateLowerBound, truncateUpperBound } from '../iceberg/bounds.js';
import {
  DEFAULT_METRICS_CONFIG,
  hasBounds,
  metricsModesById,
  type MetricsConfig,
  type MetricsMode,
} from '../iceberg/metrics-config.js';
import type { NestedField, PrimitiveType, StructType } from '../iceberg/types.js';
import { isLongValued, isPrimitive } from '../iceberg/types.js';
import type { IcebergValue } from '../iceberg/values.js';
import { leafColumns, schemaTree, type ParquetFooter } from './footer.js';
import { isValidAt, readData } from './values.js';

export interface ColumnMetrics {
  /** Compressed bytes per leaf column id. */
  readonly columnSizes: ReadonlyMap<number, number>;
  /** Values per column id, nulls and NaN included. */
  readonly valueCounts: ReadonlyMap<number, number>;
  readonly nullValueCounts: ReadonlyMap<number, number>;
  /** float and double columns only. */
  readonly nanValueCounts: ReadonlyMap<number, number>;
  /** Binary single-value serialization (spec Appendix D). */
  readonly lowerBounds: ReadonlyMap<number, Uint8Array>;
  readonly upperBounds: ReadonlyMap<number, Uint8Array>;
}

type AnyData = arrow.Data<arrow.DataType>;
const utf8 = new TextDecoder('utf-8');

/**
 * Unsigned byte order of bytes[a, a + la) and bytes[b, b + lb), `view` over the same bytes:
 * four bytes at a time, read big-endian so the words order as the bytes do.
 */
function compareAt(view: DataView, bytes: Uint8Array, a: number, la: number, b: number, lb: number): number {
  const m = la < lb ? la : lb;
  let k = 0;
  for (; k + 4 <= m; k += 4) {
    const x = view.getUint32(a + k);
    const y = view.getUint32(b + k);
    if (x !== y) return x < y ? -1 : 1;
  }
  for (; k < m; k++) {
    const x = bytes[a + k];
    const y = bytes[b + k];
    if (x !== y) return x < y ? -1 : 1;
  }
  return la === lb ? 0 : la < lb ? -1 : 1;
}

/** Order of two signed little-endian integers of `stride` 32-bit words. */
function compareWords(a: Uint32Array, ai: number, b: Uint32Array, bi: number, stride: number): number {
  const ha = a[ai + stride - 1] | 0;
  const hb = b[bi + stride - 1] | 0;
  if (ha !== hb) return ha < hb ? -1 : 1;
  for (let w = stride - 2; w >= 0; w--) {
    if (a[ai + w] !== b[bi + w]) return a[ai + w] < b[bi + w] ? -1 : 1;
  }
  return 0;
}

/** `nulls[i]` is 1 when row i is null (or under a null struct); undefined when no row is. */
type Nulls = Uint8Array | undefined;

/**
 * Which rows of `data` are null, or under a struct `masked` marks null: undefined when none can
 * be (no null and no mask), so the loops test nothing per value.
 */
function nullsOf(data: AnyData, masked: Uint8Array | undefined): { at: Uint8Array; count: number } | undefined {
  const bitmap = data.nullCount > 0 && data.nullBitmap && data.nullBitmap.length > 0 ? data.nullBitmap : undefined;
  if (!masked && !bitmap) return undefined;
  const n = data.length;
  const at = new Uint8Array(n);
  let count = 0;
  for (let i = 0, bit = data.offset; i < n; i++, bit++) {
    if ((masked !== undefined && masked[i] === 1) || (bitmap !== undefined && (bitmap[bit >> 3] & (1 << (bit & 7))) === 0)) {
      at[i] = 1;
      count++;
    }
  }
  return { at, count };
}

/** Tracks one primitive column. Min/max are kept in a kind-specific form and converted at the end. */
class LeafMetrics {
  values = 0;
  nulls = 0;
  nans = 0;
  private min: unknown = undefined;
  private max: unknown = undefined;
  private readonly bounds: boolean;

  constructor(
    readonly field: NestedField,
    readonly type: PrimitiveType,
    readonly mode: MetricsMode,
  ) {
    this.bounds = hasBounds(mode);
  }

  /** `masked[i]` = 1 when an enclosing struct is null at row i. */
  update(data: AnyData, masked: Uint8Array | undefined): void {
    const n = data.length;
    this.values += n;
    const nulls = nullsOf(data, masked);
    if (nulls !== undefined) this.nulls += nulls.count;
    const isNull = nulls?.count ? nulls.at : undefined;

    if (isLongValued(this.type)) {
      if (this.bounds) this.longs(data.values as BigInt64Array, n, isNull);
      return;
    }
    switch (this.type.type) {
      case 'float':
      case 'double':
        return this.floats(data.values as Float32Array | Float64Array, n, isNull);
      case 'int':
      case 'date':
        if (this.bounds) this.ints(data.values as Int32Array, n, isNull);
        return;
      case 'string':
      case 'binary':
        if (this.bounds) this.variableBytes(data, n, isNull);
        return;
      case 'uuid':
      case 'fixed':
        if (this.bounds) this.fixedBytes(data.values as Uint8Array, (data.type as arrow.FixedSizeBinary).byteWidth, n, isNull);
        return;
      case 'decimal': {
        if (!this.bounds) return;
        const stride = (data.type as arrow.Decimal).bitWidth / 32;
        if (stride === 4) this.decimals128(data.values as Uint32Array, n, isNull);
        else this.decimals(data.values as Uint32Array, stride, n, isNull);
        return;
      }
      default:
        if (this.bounds) this.generic(data, n, isNull);
    }
  }

  private ints(values: Int32Array, n: number, isNull: Nulls): void {
    let min = this.min as number | undefined;
    let max = this.max as number | undefined;
    let lo = 0x7fffffff;
    let hi = -0x80000000;
    let any = false;
    for (let i = 0; i < n; i++) {
      if (isNull !== undefined && isNull[i] === 1) continue;
      const v = values[i];
      if (v < lo) lo = v;
      if (v > hi) hi = v;
      any = true;
    }
    if (!any) return;
    if (min === undefined || lo < min) min = lo;
    if (max === undefined || hi > max) max = hi;
    this.min = min;
    this.max = max;
  }

  /** 64-bit integers compared as (signed high, unsigned low) 32-bit halves: no BigInt per value. */
  private longs(values: BigInt64Array, n: number, isNull: Nulls): void {
    const words = new Uint32Array(values.buffer, values.byteOffset, n * 2);
    let min = -1;
    let max = -1;
    let minHi = 0;
    let minLo = 0;
    let maxHi = 0;
    let maxLo = 0;
    for (let i = 0; i < n; i++) {
      if (isNull !== undefined && isNull[i] === 1) continue;
      const lo = words[2 * i];
      const hi = words[2 * i + 1] | 0;
      if (min < 0 || hi < minHi || (hi === minHi && lo < minLo)) {
        min = i;
        minHi = hi;
        minLo = lo;
      }
      if (max < 0 || hi > maxHi || (hi === maxHi && lo > maxLo)) {
        max = i;
        maxHi = hi;
        maxLo = lo;
      }
    }
    if (min < 0) return;
    const lo = values[min];
    const hi = values[max];
    if (this.min === undefined || lo < (this.min as bigint)) this.min = lo;
    if (this.max === undefined || hi > (this.max as bigint)) this.max = hi;
  }

  private floats(values: Float32Array | Float64Array, n: number, isNull: Nulls): void {
    // The batch's bounds in plain double locals, folded in once at the end: a local that may also
    // be undefined would box every value it takes (a heap allocation per row).
    let any = false;
    let lo = 0;
    let hi = 0;
    let nans = 0;
    for (let i = 0; i < n; i++) {
      if (isNull !== undefined && isNull[i] === 1) continue;
      const v = values[i];
      if (v !== v) {
        nans++;
        continue;
      }
      if (!any) {
        any = true;
        lo = hi = v;
        continue;
      }
      // -0.0 sorts before +0.0 (spec: bounds follow IEEE 754 totalOrder); 1 / -0 is -Infinity.
      if (v < lo || (v === 0 && lo === 0 && 1 / v < 0)) lo = v;
      if (v > hi || (v === 0 && hi === 0 && 1 / hi < 0)) hi = v;
    }
    this.nans += nans;
    if (!any || !this.bounds) return;
    const min = this.min as number | undefined;
    const max = this.max as number | undefined;
    if (min === undefined || lo < min || (lo === 0 && min === 0 && Object.is(lo, -0))) this.min = lo;
    if (max === undefined || hi > max || (hi === 0 && max === 0 && Object.is(max, -0))) this.max = hi;
  }

  /**
   * Byte strings compared in place in the values buffer; only the winners are copied. A value
   * is compared with the minimum, and with the maximum only when it is not below the minimum.
   */
  private variableBytes(data: AnyData, n: number, isNull: Nulls): void {
    const offsets = data.valueOffsets as Int32Array | BigInt64Array;
    const bytes = data.values as Uint8Array;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // Int32 offsets (Utf8, Binary) as they are; 64-bit ones (Large*) converted once.
    const at = offsets instanceof Int32Array ? offsets : Int32Array.from(offsets, (o) => Number(o));
    let any = false;
    let minS = 0;
    let minLen = 0;
    let maxS = 0;
    let maxLen = 0;
    for (let i = 0; i < n; i++) {
      if (isNull !== undefined && isNull[i] === 1) continue;
      const s = at[i];
      const len = at[i + 1] - s;
      if (!any) {
        any = true;
        minS = maxS = s;
        minLen = maxLen = len;
      } else if (compareAt(view, bytes, s, len, minS, minLen) < 0) {
        minS = s;
        minLen = len;
      } else if (compareAt(view, bytes, s, len, maxS, maxLen) > 0) {
        maxS = s;
        maxLen = len;
      }
    }
    if (!any) return;
    const lo = bytes.slice(minS, minS + minLen);
    const hi = bytes.slice(maxS, maxS + maxLen);
    if (this.min === undefined || compareBytes(lo, this.min as Uint8Array) < 0) this.min = lo;
    if (this.max === undefined || compareBytes(hi, this.max as Uint8Array) > 0) this.max = hi;
  }

  private fixedBytes(bytes: Uint8Array, width: number, n: number, isNull: Nulls): void {
    let min = this.min as Uint8Array | undefined;
    let max = this.max as Uint8Array | undefined;
    for (let i = 0; i < n; i++) {
      if (isNull !== undefined && isNull[i] === 1) continue;
      const v = bytes.subarray(i * width, i * width + width);
      if (min === undefined || compareBytes(v, min) < 0) min = v.slice();
      if (max === undefined || compareBytes(v, max) > 0) max = v.slice();
    }
    this.min = min;
    this.max = max;
  }

  /** Decimal slots compared as signed little-endian word arrays, without making bigints. */
  /**
   * 128-bit decimals (Arrow's layout for every precision schema.ts writes): the words of the
   * running minimum and maximum kept in locals, high word signed, the others unsigned.
   */
  private decimals128(words: Uint32Array, n: number, isNull: Nulls): void {
    let min = -1;
    let max = -1;
    let a3 = 0;
    let a2 = 0;
    let a1 = 0;
    let a0 = 0;
    let b3 = 0;
    let b2 = 0;
    let b1 = 0;
    let b0 = 0;
    for (let i = 0; i < n; i++) {
      if (isNull !== undefined && isNull[i] === 1) continue;
      const w3 = words[4 * i + 3] | 0;
      const w2 = words[4 * i + 2];
      const w1 = words[4 * i + 1];
      const w0 = words[4 * i];
      if (min < 0 || w3 < a3 || (w3 === a3 && (w2 < a2 || (w2 === a2 && (w1 < a1 || (w1 === a1 && w0 < a0)))))) {
        min = i;
        a3 = w3;
        a2 = w2;
        a1 = w1;
        a0 = w0;
      }
      if (max < 0 || w3 > b3 || (w3 === b3 && (w2 > b2 || (w2 === b2 && (w1 > b1 || (w1 === b1 && w0 > b0)))))) {
        max = i;
        b3 = w3;
        b2 = w2;
        b1 = w1;
        b0 = w0;
      }
    }
    if (min >= 0) this.decimalBounds(words, 4, min, max);
  }

  private decimals(words: Uint32Array, stride: number, n: number, isNull: Nulls): void {
    let min = -1;
    let max = -1;
    for (let i = 0; i < n; i++) {
      if (isNull !== undefined && isNull[i] === 1) continue;
      if (min < 0) {
        min = max = i;
        continue;
      }
      if (compareWords(words, i * stride, words, min * stride, stride) < 0) min = i;
      else if (compareWords(words, i * stride, words, max * stride, stride) > 0) max = i;
    }
    if (min >= 0) this.decimalBounds(words, stride, min, max);
  }

  /** Folds slots `min` and `max` of a batch into the running bounds. */
  private decimalBounds(words: Uint32Array, stride: number, min: number, max: number): void {
    const lo = words.slice(min * stride, min * stride + stride);
    const hi = words.slice(max * stride, max * stride + stride);
    if (this.min === undefined || compareWords(lo, 0, this.min as Uint32Array, 0, stride) < 0) this.min = lo;
    if (this.max === undefined || compareWords(hi, 0, this.max as Uint32Array, 0, stride) > 0) this.max = hi;
  }

  private generic(data: AnyData, n: number, isNull: Nulls): void {
    const values = readData(this.type, data, this.field.name);
    let min = this.min as IcebergValue | undefined;
    let max = this.max as IcebergValue | undefined;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if ((isNull !== undefined && isNull[i] === 1) || v === null) continue;
      // Booleans are the only type left here; false < true.
      if (min === undefined || (v as boolean) < (min as boolean)) min = v;
      if (max === undefined || (v as boolean) > (max as boolean)) max = v;
    }
    this.min = min;
    this.max = max;
  }

  private toValue(x: unknown): IcebergValue {
    switch (this.type.type) {
      case 'string':
        return utf8.decode(x as Uint8Array);
      case 'uuid':
      case 'fixed':
      case 'binary':
        return x as Uint8Array;
      case 'decimal': {
        const words = x as Uint32Array;
        let v = 0n;
        for (let w = words.length - 1; w >= 0; w--) v = (v << 32n) | BigInt(words[w]);
        return BigInt.asIntN(words.length * 32, v);
      }
      default:
        return x as IcebergValue;
    }
  }

  /** Serialized bounds with the mode's truncation; either may be missing. */
  serializedBounds(): { lower?: Uint8Array; upper?: Uint8Array } {
    if (!this.bounds || this.min === undefined || this.max === undefined) return {};
    // uuid bounds are kept as bytes: serialize them directly (16 bytes big-endian).
    const ser = (v: IcebergValue): Uint8Array => (this.type.type === 'uuid' ? (v as Uint8Array).slice() : toBytes(this.type, v));
    let lower: IcebergValue | undefined = this.toValue(this.min);
    let upper: IcebergValue | undefined = this.toValue(this.max);
    if (this.mode.kind === 'truncate') {
      lower = truncateLowerBound(this.type, lower, this.mode.length);
      upper = truncateUpperBound(this.type, upper, this.mode.length);
    }
    return { lower: ser(lower), ...(upper !== undefined ? { upper: ser(upper) } : {}) };
  }
}

interface StructNode {
  /** Index of each child among the Arrow struct's children (unknown-typed fields are not written). */
  readonly children: ReadonlyArray<{ readonly index: number; readonly leaf?: LeafMetrics; readonly struct?: StructNode }>;
}

/** Collects metrics over the batches written to one file. */
export class MetricsCollector {
  private readonly root: StructNode;
  private readonly leaves: LeafMetrics[] = [];
  private readonly modes: Map<number, MetricsMode>;

  constructor(
    readonly schema: StructType,
    config: MetricsConfig = DEFAULT_METRICS_CONFIG,
  ) {
    this.modes = metricsModesById(config, schema);
    this.root = this.node(schema);
  }

  private node(s: StructType): StructNode {
    const children: Array<{ index: number; leaf?: LeafMetrics; struct?: StructNode }> = [];
    let index = 0;
    for (const f of s.fields) {
      if (f.type.type === 'unknown') continue;
      const mode = this.modes.get(f.id) ?? DEFAULT_METRICS_CONFIG.defaultMode;
      if (isPrimitive(f.type)) {
        if (mode.kind !== 'none') {
          const leaf = new LeafMetrics(f, f.type, mode);
          this.leaves.push(leaf);
          children.push({ index, leaf });
        }
      } else if (f.type.type === 'struct') {
        children.push({ index, struct: this.node(f.type) });
      }
      // Lists and maps: no counts or bounds (Java ParquetMetrics drops repeated fields).
      index++;
    }
    return { children };
  }

  /** Adds a batch whose columns follow schema.ts's Arrow schema of the collector's schema. */
  add(batch: arrow.RecordBatch): void {
    this.visit(this.root, batch.data.children, undefined);
  }

  private visit(node: StructNode, data: readonly AnyData[], masked: Uint8Array | undefined): void {
    for (const c of node.children) {
      const d = data[c.index];
      if (c.leaf) c.leaf.update(d, masked);
      else if (c.struct) {
        let mask = masked;
        if (d.nullCount > 0) {
          mask = new Uint8Array(d.length);
          for (let i = 0; i < d.length; i++) mask[i] = (masked && masked[i]) || !isValidAt(d, i) ? 1 : 0;
        }
        this.visit(c.struct, d.children, mask);
      }
    }
  }

  /** The metrics; column sizes come from the written file's footer when given. */
  metrics(footer?: ParquetFooter): ColumnMetrics {
    const valueCounts = new Map<number, number>();
    const nullValueCounts = new Map<number, number>();
    const nanValueCounts = new Map<number, number>();
    const lowerBounds = new Map<number, Uint8Array>();
    const upperBounds = new Map<number, Uint8Array>();
    for (const leaf of this.leaves) {
      const id = leaf.field.id;
      valueCounts.set(id, leaf.values);
      nullValueCounts.set(id, leaf.nulls);
      if (leaf.type.type === 'float' || leaf.type.type === 'double') nanValueCounts.set(id, leaf.nans);
      const { lower, upper } = leaf.serializedBounds();
      if (lower) lowerBounds.set(id, lower);
      if (upper) upperBounds.set(id, upper);
    }
    return {
      columnSizes: footer ? columnSizes(footer, this.modes) : new Map(),
      valueCounts,
      nullValueCounts,
      nanValueCounts,
      lowerBounds,
      upperBounds,
    };
  }
}

/** Compressed bytes per leaf field id over all row groups (Java: ColumnChunkMetaData.getTotalSize). */
export function columnSizes(footer: ParquetFooter, modes?: ReadonlyMap<number, MetricsMode>): Map<number, number> {
  const idByPath = new Map<string, number>();
  for (const leaf of leafColumns(schemaTree(footer))) {
    if (leaf.element.fieldId !== undefined) idByPath.set(leaf.path.join('\u0000'), leaf.element.fieldId);
  }
  const out = new Map<number, number>();
  for (const rg of footer.rowGroups) {
    for (const col of rg.columns) {
      const id = idByPath.get(col.path.join('\u0000'));
      if (id === undefined || modes?.get(id)?.kind === 'none') continue;
      out.set(id, (out.get(id) ?? 0) + col.totalCompressedSize);
    }
  }
  return out;
}
