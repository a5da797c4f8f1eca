/**
 * The planner's `--where` filter: the expression language of lib/iceberg/expression.ts over
 * partition field names and source columns, bound to the table (lib/iceberg/projections.ts).
 * It selects the data files whose rows may match, as `rewrite_data_files`' `where` does: by
 * partition (a partition field compared in its human form, `ts_hour >= '2026-01-01-04'`; a
 * column projected through its partition transforms) and by column metrics; and the manifests
 * that may list such files.
 */
import { deleteFileKey } from '../iceberg/delete-file.js';
import { parseExpression } from '../iceberg/expression.js';
import { fileMayMatch, partitionMayMatch } from '../iceberg/inclusive-metrics-evaluator.js';
import type { DataFile } from '../iceberg/manifest.js';
import type { ManifestFile } from '../iceberg/manifest-list.js';
import { manifestEvaluator } from '../iceberg/manifest-evaluator.js';
import { isUnpartitioned } from '../iceberg/partition.js';
import { bindToTable } from '../iceberg/projections.js';
import type { ScanPlan, StreamedScan } from '../iceberg/scan-planning.js';
import { specsById, type TableMetadata } from '../iceberg/table-metadata.js';

export interface PartitionFilter {
  readonly text: string;
  /** Whether the data file may hold matching rows: its partition, then its column metrics. */
  mayMatch(file: DataFile): boolean;
  /** Whether files of the content file's spec and partition may hold matching rows (no metrics). */
  partitionMayMatch(file: DataFile): boolean;
  /** Whether the manifest may list such files (manifest-evaluator.ts); unpartitioned delete manifests always may. */
  mayMatchManifest(manifest: ManifestFile): boolean;
  /** Field ids of the columns it names: the scan must read their metrics (none: no metrics). */
  readonly columnIds: ReadonlySet<number>;
}

export function parsePartitionFilter(text: string, metadata: TableMetadata): PartitionFilter {
  const e = parseExpression(text, { label: 'filter', termNoun: 'partition field or column name', path: metadata.location });
  const bound = bindToTable(e, metadata);
  const manifests = manifestEvaluator(bound, specsById(metadata));
  return {
    text,
    mayMatch: (file) => fileMayMatch(bound, file),
    partitionMayMatch: (file) => partitionMayMatch(bound, file.specId, file.partition),
    mayMatchManifest: (m) => manifests.mayMatch(m),
    columnIds: bound.columnIds,
  };
}

/**
 * The part of a scan in the filter's partitions: data files whose partition may match, delete
 * files of such partitions, and deletes of unpartitioned specs that apply to a kept file. It is
 * the same whether or not manifests that cannot match were read, since those hold no file of a
 * matching partition; so plan figures (before/after, dangling deletes) describe the filter's
 * scope, and position deletes are apportioned over every file of their partition.
 */
export function scopeScan(metadata: TableMetadata, scan: ScanPlan, filter: PartitionFilter): ScanPlan {
  const tasks = scan.tasks.filter((t) => filter.partitionMayMatch(t.dataFile));
  const applied = new Set<string>();
  for (const t of tasks) {
    const d = t.deletes;
    for (const r of [...(d.deletionVector ? [d.deletionVector] : []), ...d.positionDeletes, ...d.equalityDeletes]) applied.add(deleteFileKey(r.file));
  }
  return { ...scopeDeletes(metadata, scan, applied, filter), tasks };
}

/**
 * A scan's delete files in the filter's scope: those `applied` (by key) to a data file in scope,
 * and those of a partitioned spec whose partition may match.
 */
export function scopeDeletes<S extends StreamedScan>(metadata: TableMetadata, scan: S, applied: ReadonlySet<string>, filter: PartitionFilter): S {
  const specs = specsById(metadata);
  const partitioned = (f: DataFile): boolean => {
    const spec = specs.get(f.specId);
    return spec !== undefined && !isUnpartitioned(spec);
  };
  const deleteRefs = scan.deleteRefs.filter((r) => applied.has(deleteFileKey(r.file)) || (partitioned(r.file) && filter.partitionMayMatch(r.file)));
  return { ...scan, deleteRefs, deleteFiles: deleteRefs.map((r) => r.file) };
}
