/**
 * Whether a data file may hold rows a bound filter (projections.ts) selects, from its manifest
 * entry alone: its partition against each predicate's partition projection (Java's partition
 * Evaluator over Projections.inclusive), then a column predicate against the file's column
 * metrics (Java's InclusiveMetricsEvaluator: lower/upper bounds, value, null and NaN counts).
 * False means no row can match; true means some may. `rewrite_data_files` with a `where`
 * selects files this way and rewrites them whole.
 */
import { compareValues, fromBytes } from './bounds.js';
import type { DataFile } from './manifest.js';
import type { BoundLeaf, BoundTree, TableFilter, TypedPredicate } from './projections.js';
import type { IcebergValue, Row } from './values.js';

/** Java's IN_PREDICATE_LIMIT: longer lists are not checked against bounds. */
const IN_PREDICATE_LIMIT = 200;

/** Whether `v` satisfies `p` exactly; a null satisfies only `is null` (SQL). */
export function testValue(p: TypedPredicate, v: IcebergValue | undefined): boolean {
  if (v === null || v === undefined) return p.op === 'is null';
  const cmp = (x: IcebergValue): number => compareValues(p.type, v, x);
  switch (p.op) {
    case 'is null':
      return false;
    case 'not null':
      return true;
    case '=':
      return cmp(p.values[0]) === 0;
    case '!=':
      return cmp(p.values[0]) !== 0;
    case '<':
      return cmp(p.values[0]) < 0;
    case '<=':
      return cmp(p.values[0]) <= 0;
    case '>':
      return cmp(p.values[0]) > 0;
    case '>=':
      return cmp(p.values[0]) >= 0;
    case 'in':
      return p.values.some((x) => cmp(x) === 0);
    case 'not in':
      return p.values.every((x) => cmp(x) !== 0);
  }
}

export function evaluateTree(t: BoundTree, leaf: (l: BoundLeaf) => boolean): boolean {
  switch (t.type) {
    case 'and':
      return evaluateTree(t.left, leaf) && evaluateTree(t.right, leaf);
    case 'or':
      return evaluateTree(t.left, leaf) || evaluateTree(t.right, leaf);
    case 'leaf':
      return leaf(t.leaf);
  }
}

/** The partition part of a leaf for a file of `specId` with partition `partition`. */
function leafPartitionMayMatch(l: BoundLeaf, specId: number, partition: Row): boolean {
  const part = l.partitions.get(specId);
  if (part === undefined) return true;
  if (typeof part === 'boolean') return part;
  return part.every((p) => testValue(p, partition[p.field]));
}

/** Whether files of this spec and partition may hold matching rows (no column metrics). */
export function partitionMayMatch(filter: TableFilter, specId: number, partition: Row): boolean {
  return evaluateTree(filter.root, (l) => leafPartitionMayMatch(l, specId, partition));
}

/** Whether the data file may hold matching rows: its partition, then its column metrics. */
export function fileMayMatch(filter: TableFilter, file: DataFile): boolean {
  return evaluateTree(
    filter.root,
    (l) => leafPartitionMayMatch(l, file.specId, file.partition) && (!l.column || metricsMayMatch(file, l.column.fieldId, l.column.predicate)),
  );
}

/** InclusiveEvalVisitor for one predicate on one column of one file. */
export function metricsMayMatch(file: DataFile, id: number, p: TypedPredicate): boolean {
  if (file.recordCount === 0n) return false;
  if (file.recordCount < 0n) return true;
  const valueCount = file.valueCounts?.get(id);
  const nullCount = file.nullValueCounts?.get(id);
  const nanCount = file.nanValueCounts?.get(id);
  const mayContainNull = nullCount === undefined || nullCount !== 0n;
  const nullsOnly = valueCount !== undefined && nullCount !== undefined && valueCount - nullCount === 0n;
  const nanOnly = nanCount !== undefined && valueCount !== undefined && nanCount === valueCount;
  const mayContainNaN = nanCount === undefined || nanCount !== 0n;
  const bound = (m: ReadonlyMap<number, Uint8Array> | null | undefined): IcebergValue | undefined => {
    const b = m?.get(id);
    if (b === undefined) return undefined;
    try {
      return fromBytes(p.type, b);
    } catch {
      return undefined; // an unreadable bound proves nothing
    }
  };
  const isNaN = (v: IcebergValue | undefined): boolean => typeof v === 'number' && Number.isNaN(v);
  const cmp = (a: IcebergValue, b: IcebergValue): number => compareValues(p.type, a, b);
  const floating = p.type.type === 'float' || p.type.type === 'double';
  const unique = (): IcebergValue | undefined => {
    if (mayContainNull || (floating && mayContainNaN)) return undefined;
    const lower = bound(file.lowerBounds);
    const upper = bound(file.upperBounds);
    if (lower === undefined || upper === undefined || lower === null || upper === null || isNaN(lower) || isNaN(upper)) return undefined;
    return cmp(lower, upper) === 0 ? lower : undefined;
  };
  switch (p.op) {
    case 'is null':
      return mayContainNull;
    case 'not null':
      return !nullsOnly;
    case '!=': {
      const u = unique();
      return !(u !== undefined && cmp(u, p.values[0]) === 0);
    }
    case 'not in': {
      const u = unique();
      return !(u !== undefined && p.values.some((v) => cmp(u, v) === 0));
    }
    default:
  }
  if (nullsOnly || nanOnly) return false;
  const lower = bound(file.lowerBounds);
  const upper = bound(file.upperBounds);
  const lowerKnown = lower !== undefined && lower !== null && !isNaN(lower);
  const upperKnown = upper !== undefined && upper !== null;
  const lit = p.values[0];
  switch (p.op) {
    case '<':
      return !(lowerKnown && cmp(lower, lit) >= 0);
    case '<=':
      return !(lowerKnown && cmp(lower, lit) > 0);
    case '>':
      return !(upperKnown && cmp(upper, lit) <= 0);
    case '>=':
      return !(upperKnown && cmp(upper, lit) < 0);
    case '=':
      return !((lowerKnown && cmp(lower, lit) > 0) || (upperKnown && cmp(upper, lit) < 0));
    case 'in':
      if (p.values.length > IN_PREDICATE_LIMIT || !lowerKnown) return true;
      return p.values.some((v) => cmp(lower, v) <= 0 && (!upperKnown || cmp(upper, v) >= 0));
    default:
      return true;
  }
}
