/**
 * Iceberg column metrics of a file whose row groups were copied (chunk-copy.ts), from the
 * column chunks' Parquet statistics instead of the values (none are decoded), under the rules
 * metrics.ts follows for files we encode:
 *
 * - value counts (num_values) and null counts (null_count) for primitive columns at the top
 *   level or nested in structs, nothing for columns inside lists or maps, nothing for a column
 *   whose mode is `none`; a null count only when every chunk has one;
 * - bounds (truncate(N) for string and binary, an upper bound that cannot be truncated
 *   omitted) from min_value/max_value; the deprecated min/max only for numeric physical types
 *   (their byte-array order was signed); no bounds when a chunk with values has no statistics
 *   or a float bound is NaN. Writers that truncate statistics (is_*_value_exact false) give
 *   looser, still valid, bounds under truncate(N); under `full` such a bound is left out, since
 *   full bounds are values of the column (engines answer min/max from them); and Parquet writes
 *   a zero minimum as -0.0, so a float column whose smallest value is +0.0 gets the lower bound -0.0;
 * - no NaN counts: Parquet statistics do not count NaN;
 * - column sizes from the footer, as metrics.ts's `columnSizes`.
 */
import { toBytes, truncateLowerBound, truncateUpperBound } from '../iceberg/bounds.js';
import { hasBounds, metricsModesById, type MetricsConfig, type MetricsMode } from '../iceberg/metrics-config.js';
import { isPrimitive, type PrimitiveType, type StructType } from '../iceberg/types.js';
import type { IcebergValue } from '../iceberg/values.js';
import { PhysicalType, type ParquetFooter } from './footer.js';
import type { ColumnMetrics } from './metrics.js';
import { columnSizes } from './metrics.js';
import { leafColumns, schemaTree } from './footer.js';
import { readThriftStruct, type ThriftStruct } from './thrift.js';

const utf8 = new TextDecoder('utf-8');

interface Leaf {
  readonly id: number;
  readonly type: PrimitiveType;
  readonly mode: MetricsMode;
}

/** Primitive fields reachable through structs only (Java ParquetMetrics drops repeated fields). */
function metricLeaves(schema: StructType, modes: ReadonlyMap<number, MetricsMode>): Map<number, Leaf> {
  const out = new Map<number, Leaf>();
  const visit = (s: StructType): void => {
    for (const f of s.fields) {
      if (isPrimitive(f.type)) {
        const mode = modes.get(f.id);
        if (f.type.type !== 'unknown' && mode && mode.kind !== 'none') out.set(f.id, { id: f.id, type: f.type, mode });
      } else if (f.type.type === 'struct') visit(f.type);
    }
  };
  visit(schema);
  return out;
}

/** A Parquet plain-encoded statistic as the Iceberg value of `type` (a string as its UTF-8 bytes); undefined when it cannot be one. */
export function statValue(type: PrimitiveType, physical: number | undefined, b: Uint8Array): IcebergValue | undefined {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  switch (type.type) {
    case 'boolean':
      return b.length === 1 ? b[0] !== 0 : undefined;
    case 'int':
    case 'date':
      return b.length === 4 ? view.getInt32(0, true) : undefined;
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return b.length === 8 ? view.getBigInt64(0, true) : undefined;
    case 'float':
      return b.length === 4 && !Number.isNaN(view.getFloat32(0, true)) ? view.getFloat32(0, true) : undefined;
    case 'double':
      return b.length === 8 && !Number.isNaN(view.getFloat64(0, true)) ? view.getFloat64(0, true) : undefined;
    case 'decimal':
      if (physical === PhysicalType.INT32) return b.length === 4 ? BigInt(view.getInt32(0, true)) : undefined;
      if (physical === PhysicalType.INT64) return b.length === 8 ? view.getBigInt64(0, true) : undefined;
      if (b.length === 0) return undefined;
      // Big-endian two's complement (FIXED_LEN_BYTE_ARRAY, BYTE_ARRAY).
      return BigInt.asIntN(b.length * 8, BigInt(`0x${Buffer.from(b).toString('hex')}`));
    case 'uuid':
    case 'string': // kept as its UTF-8 bytes, which order as its code points; decoded once, in bounds()
    case 'fixed':
    case 'binary':
      return b.slice();
    default:
      return undefined;
  }
}

export function less(type: PrimitiveType, a: IcebergValue, b: IcebergValue): boolean {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b) < 0;
  if (type.type === 'float' || type.type === 'double') {
    const x = a as number;
    const y = b as number;
    return x < y || (x === 0 && y === 0 && Object.is(x, -0) && !Object.is(y, -0));
  }
  return (a as number | bigint | boolean) < (b as number | bigint | boolean);
}

class LeafStats {
  values = 0;
  nulls: number | undefined = 0;
  min: IcebergValue | undefined;
  max: IcebergValue | undefined;
  /** Bounds are lost once a chunk with values gives none. */
  bounded = true;
  /** Whether every chunk's minimum and maximum are the values themselves (is_min/max_value_exact not false). */
  exactMin = true;
  exactMax = true;

  constructor(readonly leaf: Leaf) {}

  add(physical: number | undefined, numValues: number, stats: ThriftStruct | undefined): void {
    this.values += numValues;
    const nulls = stats?.[3];
    const nullCount = typeof nulls === 'number' || typeof nulls === 'bigint' ? Number(nulls) : undefined;
    this.nulls = this.nulls === undefined || nullCount === undefined ? undefined : this.nulls + nullCount;
    if (!hasBounds(this.leaf.mode) || !this.bounded) return;
    if (nullCount !== undefined && nullCount >= numValues) return; // only nulls: nothing to bound
    const numeric = physical !== undefined && physical !== PhysicalType.BYTE_ARRAY && physical !== PhysicalType.FIXED_LEN_BYTE_ARRAY;
    const lo = stats?.[6] ?? (numeric ? stats?.[2] : undefined);
    const hi = stats?.[5] ?? (numeric ? stats?.[1] : undefined);
    const min = lo instanceof Uint8Array ? statValue(this.leaf.type, physical, lo) : undefined;
    const max = hi instanceof Uint8Array ? statValue(this.leaf.type, physical, hi) : undefined;
    if (min === undefined || max === undefined) {
      this.bounded = false;
      return;
    }
    // A writer that truncated a statistic (parquet-rs: 64 bytes) says so; the bound is then looser than any value.
    const minExact = stats?.[8] !== false || stats?.[6] === undefined;
    const maxExact = stats?.[7] !== false || stats?.[5] === undefined;
    if (this.min === undefined || less(this.leaf.type, min, this.min)) {
      this.min = min;
      this.exactMin = minExact;
    } else if (!less(this.leaf.type, this.min, min)) this.exactMin ||= minExact;
    if (this.max === undefined || less(this.leaf.type, this.max, max)) {
      this.max = max;
      this.exactMax = maxExact;
    } else if (!less(this.leaf.type, max, this.max)) this.exactMax ||= maxExact;
  }

  bounds(): { lower?: Uint8Array; upper?: Uint8Array } {
    if (!this.bounded || this.min === undefined || this.max === undefined) return {};
    const { type, mode } = this.leaf;
    // uuid bounds are the 16 bytes as stored (metrics.ts keeps them so too).
    const ser = (v: IcebergValue): Uint8Array => (type.type === 'uuid' ? (v as Uint8Array).slice() : toBytes(type, v));
    const value = (v: IcebergValue): IcebergValue => (type.type === 'string' ? utf8.decode(v as Uint8Array) : v);
    let lower: IcebergValue | undefined = value(this.min);
    let upper: IcebergValue | undefined = value(this.max);
    if (mode.kind === 'truncate') {
      lower = truncateLowerBound(type, lower, mode.length);
      upper = truncateUpperBound(type, upper, mode.length);
    } else {
      // full: bounds are values of the column (engines answer min/max from them); a truncated
      // statistic is none, so that bound is left out.
      if (!this.exactMin) lower = undefined;
      if (!this.exactMax) upper = undefined;
    }
    return { ...(lower !== undefined ? { lower: ser(lower) } : {}), ...(upper !== undefined ? { upper: ser(upper) } : {}) };
  }
}

/**
 * Metrics of a file from its footer's statistics. `typedRowGroups` are the row groups' raw
 * Thrift (for the statistics fields footer.ts does not keep apart).
 */
export function metricsFromStatistics(footer: ParquetFooter, footerBytes: Uint8Array, schema: StructType, config: MetricsConfig): ColumnMetrics {
  const modes = metricsModesById(config, schema);
  const leaves = metricLeaves(schema, modes);
  const columns = leafColumns(schemaTree(footer));
  const stats = columns.map((c) => {
    const leaf = c.element.fieldId === undefined ? undefined : leaves.get(c.element.fieldId);
    return leaf ? new LeafStats(leaf) : undefined;
  });
  const raw = readThriftStruct(footerBytes);
  const rowGroups = (raw[4] ?? []) as ThriftStruct[];
  for (const rg of rowGroups) {
    const chunks = (rg[1] ?? []) as ThriftStruct[];
    chunks.forEach((cc, k) => {
      const s = stats[k];
      if (!s) return;
      const meta = cc[3] as ThriftStruct;
      s.add(columns[k].element.type, Number(meta[5]), meta[12] as ThriftStruct | undefined);
    });
  }
  const valueCounts = new Map<number, number>();
  const nullValueCounts = new Map<number, number>();
  const lowerBounds = new Map<number, Uint8Array>();
  const upperBounds = new Map<number, Uint8Array>();
  for (const s of stats) {
    if (!s) continue;
    const id = s.leaf.id;
    valueCounts.set(id, s.values);
    if (s.nulls !== undefined) nullValueCounts.set(id, s.nulls);
    const { lower, upper } = s.bounds();
    if (lower) lowerBounds.set(id, lower);
    if (upper) upperBounds.set(id, upper);
  }
  return { columnSizes: columnSizes(footer, modes), valueCounts, nullValueCounts, nanValueCounts: new Map(), lowerBounds, upperBounds };
}
