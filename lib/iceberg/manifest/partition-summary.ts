/**
 * The per-partition-field summary a manifest writer keeps for its manifest_file entry
 * (core/.../PartitionSummary.java): null and NaN flags, lower and upper bounds.
 */
import { compareValues, toBytes } from '../bounds.js';
import type { PartitionFieldSummary } from '../manifest-list.js';
import type { PrimitiveType } from '../types.js';
import type { IcebergValue } from '../values.js';

/**
 * Java's PartitionSummary orders with Comparators.forType: for uuid that is
 * java.util.UUID.compareTo, which compares both 64-bit halves as signed longs (unlike
 * bounds.ts's unsigned order). Java readers prune with the same order, so follow it.
 */
function summaryCompare(type: PrimitiveType, a: IcebergValue, b: IcebergValue): number {
  if (type.type !== 'uuid') return compareValues(type, a, b);
  const half = (u: string, i: number): bigint => BigInt.asIntN(64, BigInt(`0x${u.replace(/-/g, '').slice(i * 16, i * 16 + 16)}`));
  for (let i = 0; i < 2; i++) {
    const x = half(a as string, i);
    const y = half(b as string, i);
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

export class PartitionFieldStats {
  containsNull = false;
  containsNan = false;
  min: IcebergValue = null;
  max: IcebergValue = null;

  constructor(readonly type: PrimitiveType) {}

  update(v: IcebergValue): void {
    if (v === null || v === undefined) {
      this.containsNull = true;
    } else if (typeof v === 'number' && Number.isNaN(v)) {
      this.containsNan = true;
    } else if (this.min === null) {
      this.min = v;
      this.max = v;
    } else {
      if (summaryCompare(this.type, v, this.min) < 0) this.min = v;
      if (summaryCompare(this.type, this.max, v) < 0) this.max = v;
    }
  }

  toSummary(): PartitionFieldSummary {
    // Bound bytes per spec Appendix D (bounds.ts toBytes = Java Conversions.toByteBuffer).
    return {
      containsNull: this.containsNull,
      containsNan: this.containsNan,
      lowerBound: this.min === null ? null : toBytes(this.type, this.min),
      upperBound: this.max === null ? null : toBytes(this.type, this.max),
    };
  }
}
