/**
 * The planner's `--where` filter: the expression language of lib/iceberg/expression.ts over
 * PARTITION field names, evaluated against partition values in their JSON single-value form
 * (spec Appendix D), so a `day` partition compares as 'YYYY-MM-DD', an `hour` partition as hours
 * since the epoch. A field the file's spec lacks is null, and satisfies no comparison.
 */
import { bindToNames, parseExpression } from '../iceberg/expression.js';
import type { TableMetadata } from '../iceberg/table-metadata.js';

export interface PartitionFilter {
  readonly text: string;
  /** Whether a partition (field name → JSON single value) satisfies the filter. */
  matches(partition: Readonly<Record<string, unknown>>): boolean;
}

/** Partition field names of every spec, the default spec's first. */
export function partitionFieldNames(metadata: TableMetadata): string[] {
  const specs = [...metadata.partitionSpecs].sort(
    (a, b) => Number(b.specId === metadata.defaultSpecId) - Number(a.specId === metadata.defaultSpecId) || a.specId - b.specId,
  );
  return [...new Set(specs.flatMap((s) => s.fields.map((f) => f.name)))];
}

export function parsePartitionFilter(text: string, fieldNames: readonly string[], path?: string): PartitionFilter {
  const e = parseExpression(text, { label: 'partition filter', termNoun: 'partition field name', ...(path !== undefined ? { path } : {}) });
  const bound = bindToNames(e, fieldNames);
  return { text, matches: (partition) => bound.evaluate(partition) };
}
