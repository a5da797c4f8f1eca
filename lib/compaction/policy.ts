/**
 * The compaction policy with every default filled in. Option names and defaults follow Java's
 * rewrite_data_files (api/.../actions/RewriteDataFiles.java, core/.../actions/
 * SizeBasedFileRewritePlanner.java and BinPackRewriteFilePlanner.java); where ours differ the
 * reason is given next to the default.
 */
import { ValidationError } from '../errors.js';
import { parseSortOrder } from '../iceberg/sort-order.js';
import { currentSchema, defaultSortOrder, intProperty, type TableMetadata } from '../iceberg/table-metadata.js';
import type { CompactionPolicy, Plan } from './messages.js';
import { parsePartitionFilter, type PartitionFilter } from './partition-filter.js';

export type ResolvedPolicy = Plan['policy'];

/** A policy resolved for one table. */
export interface TablePolicy {
  /** Every field set: what the Plan message carries. */
  readonly policy: ResolvedPolicy;
  /** `policy.where` bound to the table's partition fields and columns, once; undefined when unset. */
  readonly filter: PartitionFilter | undefined;
}

const MiB = 1024 * 1024;

/** Table property Java reads the rewrite target from (TableProperties.WRITE_TARGET_FILE_SIZE_BYTES). */
export const TARGET_FILE_SIZE_PROPERTY = 'write.target-file-size-bytes';
/** TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT. */
export const DEFAULT_TARGET_FILE_SIZE_BYTES = 512 * MiB;
/** `min-file-size-bytes` and `max-file-size-bytes` default to these ratios of the target (as in Java). */
export const MIN_FILE_SIZE_DEFAULT_RATIO = 0.75;
export const MAX_FILE_SIZE_DEFAULT_RATIO = 1.8;

export const POLICY_DEFAULTS = {
  /** `min-input-files`: Java's 5. */
  minInputFiles: 5,
  /**
   * `delete-file-threshold`: Java's default is Integer.MAX_VALUE (off), so a file at target size
   * with equality deletes is never rewritten (Java's ratio rule counts only file-scoped deletes).
   * We default to 1: a delete file leaves the table only when every data file it reaches has been
   * rewritten, and every reader pays for it until then. Raise it (2147483647 = Java) for tables
   * whose large files get a few sprinkled deletes, where rewriting them costs more than it saves.
   */
  deleteFileThreshold: 1,
  /** `delete-ratio-threshold`: Java's 0.3. */
  deleteRatioThreshold: 0.3,
  /**
   * Off. A rewrite does not conflict with appends to the same partition, and busy partitions are
   * where small files pile up; streaming tables that would otherwise re-compact the open hour on
   * every run set it (say 60).
   */
  quietMinutes: 0,
  mode: 'major',
  strategy: 'binpack',
  /**
   * Java's `max-file-group-size-bytes` is 100 GB, sized for a Spark executor. One of our groups must
   * finish inside one Lambda run (15 minutes): the rewrite measured 1.64 MB of input per CPU-second
   * at its slowest (BENCHMARKS.md, bench/compaction.ts), so half of 900 s holds ~737 MB; 700 MiB
   * leaves the other half for S3, cold starts and slower data.
   */
  maxGroupBytes: 700 * MiB,
  /** Groups per run; the rest wait for the next run (highest value first). */
  maxGroups: 1000,
} as const;

/**
 * The policy with every field set (explicit values, then table properties, then defaults), and
 * its `--where` filter bound to the table. Everything is checked here, before any manifest is read.
 */
export function resolvePolicy(metadata: TableMetadata, policy: CompactionPolicy = {}): TablePolicy {
  const bad = (message: string): never => {
    throw new ValidationError(message, { path: metadata.location });
  };
  const target = policy.targetFileSizeBytes ?? intProperty(metadata, TARGET_FILE_SIZE_PROPERTY, DEFAULT_TARGET_FILE_SIZE_BYTES);
  // Java truncates the products to longs.
  const min = policy.minFileSizeBytes ?? Math.floor(target * MIN_FILE_SIZE_DEFAULT_RATIO);
  const max = policy.maxFileSizeBytes ?? Math.floor(target * MAX_FILE_SIZE_DEFAULT_RATIO);
  const resolved: ResolvedPolicy = {
    targetFileSizeBytes: target,
    minFileSizeBytes: min,
    maxFileSizeBytes: max,
    minInputFiles: policy.minInputFiles ?? POLICY_DEFAULTS.minInputFiles,
    deleteFileThreshold: policy.deleteFileThreshold ?? POLICY_DEFAULTS.deleteFileThreshold,
    deleteRatioThreshold: policy.deleteRatioThreshold ?? POLICY_DEFAULTS.deleteRatioThreshold,
    quietMinutes: policy.quietMinutes ?? POLICY_DEFAULTS.quietMinutes,
    mode: policy.mode ?? POLICY_DEFAULTS.mode,
    strategy: policy.strategy ?? (policy.sortOrder !== undefined ? 'sort' : POLICY_DEFAULTS.strategy),
    maxGroupBytes: policy.maxGroupBytes ?? POLICY_DEFAULTS.maxGroupBytes,
    maxGroups: policy.maxGroups ?? POLICY_DEFAULTS.maxGroups,
    ...(policy.where !== undefined && policy.where.trim() !== '' ? { where: policy.where } : {}),
    ...(policy.sortOrder !== undefined ? { sortOrder: policy.sortOrder } : {}),
  };
  // The checks and messages of SizeBasedFileRewritePlanner / BinPackRewriteFilePlanner.
  const int = (name: string, v: number): void => {
    if (!Number.isSafeInteger(v)) bad(`'${name}' is set to ${v} but must be an integer`);
  };
  int('target-file-size-bytes', target);
  int('min-file-size-bytes', min);
  int('max-file-size-bytes', max);
  int('min-input-files', resolved.minInputFiles);
  int('delete-file-threshold', resolved.deleteFileThreshold);
  int('max-file-group-size-bytes', resolved.maxGroupBytes);
  int('max-groups', resolved.maxGroups);
  if (target <= 0) bad(`'target-file-size-bytes' is set to ${target} but must be > 0`);
  if (min < 0) bad(`'min-file-size-bytes' is set to ${min} but must be >= 0`);
  if (target <= min) {
    bad(`'target-file-size-bytes' (${target}) must be > 'min-file-size-bytes' (${min}), all new files will be smaller than the min threshold`);
  }
  if (target >= max) {
    bad(`'target-file-size-bytes' (${target}) must be < 'max-file-size-bytes' (${max}), all new files will be larger than the max threshold`);
  }
  if (resolved.minInputFiles <= 0) bad(`'min-input-files' is set to ${resolved.minInputFiles} but must be > 0`);
  if (resolved.deleteFileThreshold < 0) bad(`'delete-file-threshold' is set to ${resolved.deleteFileThreshold} but must be >= 0`);
  const ratio = resolved.deleteRatioThreshold;
  if (!(ratio > 0)) bad(`'delete-ratio-threshold' is set to ${ratio} but must be > 0`);
  if (ratio > 1) bad(`'delete-ratio-threshold' is set to ${ratio} but must be <= 1`);
  if (!(resolved.quietMinutes >= 0)) bad(`'quiet-minutes' is set to ${resolved.quietMinutes} but must be >= 0`);
  if (resolved.maxGroupBytes <= 0) bad(`'max-file-group-size-bytes' is set to ${resolved.maxGroupBytes} but must be > 0`);
  if (resolved.maxGroups <= 0) bad(`'max-groups' is set to ${resolved.maxGroups} but must be > 0`);
  if (resolved.mode !== 'major' && resolved.mode !== 'minor') bad(`'mode' is set to ${String(resolved.mode)} but must be major or minor`);
  if (resolved.strategy !== 'binpack' && resolved.strategy !== 'sort') {
    bad(`'strategy' is set to ${String(resolved.strategy)} but must be binpack or sort`);
  }
  if (resolved.sortOrder !== undefined) {
    if (resolved.strategy !== 'sort') bad(`'sort-order' is set but 'strategy' is ${resolved.strategy}: a sort order needs the sort strategy`);
    parseSortOrder(resolved.sortOrder, currentSchema(metadata), metadata.sortOrders);
  } else if (resolved.strategy === 'sort' && defaultSortOrder(metadata).fields.length === 0) {
    bad(`'strategy' is sort but the table has no sort order (its default order is unsorted): give one as 'sort-order' (e.g. "ts ASC NULLS LAST, id DESC"), or set the table's`);
  }
  const filter = resolved.where === undefined ? undefined : parsePartitionFilter(resolved.where, metadata);
  return { policy: resolved, filter };
}
