/**
 * Whether a manifest may list files a bound filter (projections.ts) selects, from its manifest
 * list entry alone (Java's ManifestEvaluator): each partition projection against the manifest's
 * partition field summaries (lower and upper bound, contains_null, contains_nan). False means
 * no file in it can match, so it need not be read.
 *
 * What the caller may skip is its business: a data manifest that cannot match lists only files
 * the filter would drop; a delete manifest of a partitioned spec holds only deletes for files of
 * its own partitions; deletes of an unpartitioned spec apply to every partition and are never
 * skipped here.
 */
import { compareValues, fromBytes } from './bounds.js';
import { evaluateTree } from './inclusive-metrics-evaluator.js';
import { ManifestContent, type ManifestFile, type PartitionFieldSummary } from './manifest-list.js';
import { isUnpartitioned, type PartitionSpec } from './partition.js';
import type { PartitionPredicate, TableFilter } from './projections.js';
import type { IcebergValue } from './values.js';

const IN_PREDICATE_LIMIT = 200;

export interface ManifestEvaluator {
  mayMatch(manifest: ManifestFile): boolean;
}

export function manifestEvaluator(filter: TableFilter, specs: ReadonlyMap<number, PartitionSpec>): ManifestEvaluator {
  return {
    mayMatch(manifest) {
      const spec = specs.get(manifest.partitionSpecId);
      if (!spec) return true;
      if (manifest.content === ManifestContent.Deletes && isUnpartitioned(spec)) return true;
      const stats = manifest.partitions;
      if (stats === null || stats === undefined) return true;
      return evaluateTree(filter.root, (l) => {
        const part = l.partitions.get(manifest.partitionSpecId);
        if (part === undefined) return true;
        if (typeof part === 'boolean') return part;
        return part.every((p) => summaryMayMatch(p, stats[p.position]));
      });
    },
  };
}

/** ManifestEvalVisitor for one partition predicate. */
function summaryMayMatch(p: PartitionPredicate, s: PartitionFieldSummary | undefined): boolean {
  if (s === undefined) return true;
  const decode = (b: Uint8Array | null): IcebergValue | undefined | 'unreadable' => {
    if (b === null) return undefined;
    try {
      return fromBytes(p.type, b);
    } catch {
      return 'unreadable';
    }
  };
  const lower = decode(s.lowerBound);
  const upper = decode(s.upperBound);
  if (lower === 'unreadable' || upper === 'unreadable') return true;
  const cmp = (a: IcebergValue, b: IcebergValue): number => compareValues(p.type, a, b);
  const floating = p.type.type === 'float' || p.type.type === 'double';
  // No lower bound: every value is null (or NaN, which no literal equals or orders against).
  const allNull = s.containsNull && lower === undefined && (!floating || s.containsNan === false);
  switch (p.op) {
    case 'is null':
      return s.containsNull;
    case 'not null':
      return !allNull;
    case '!=':
    case 'not in': {
      // Java's uniqueValue: one non-null, non-NaN value throughout.
      const unique = !s.containsNull && s.containsNan !== true && lower !== undefined && upper !== undefined && cmp(lower, upper) === 0;
      return !(unique && p.values.some((v) => cmp(lower, v) === 0));
    }
    default:
  }
  if (lower === undefined || upper === undefined) return false;
  const lit = p.values[0];
  switch (p.op) {
    case '<':
      return cmp(lower, lit) < 0;
    case '<=':
      return cmp(lower, lit) <= 0;
    case '>':
      return cmp(upper, lit) > 0;
    case '>=':
      return cmp(upper, lit) >= 0;
    case '=':
      return cmp(lower, lit) <= 0 && cmp(upper, lit) >= 0;
    case 'in':
      if (p.values.length > IN_PREDICATE_LIMIT) return true;
      return p.values.some((v) => cmp(lower, v) <= 0 && cmp(upper, v) >= 0);
    default:
      return true;
  }
}
