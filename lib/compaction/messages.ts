/**
 * The messages of the compaction flow (DESIGN.md "The flow"): the same JSON in the CLI,
 * the local runner, the tests and Step Functions. Every field is plain JSON: longs are
 * decimal strings, bytes are base64, so a message survives any hop unchanged.
 */
import type { DataFile } from '../iceberg/manifest.js';
import type { DataFileJson } from '../iceberg/data-file-json.js';
import type { IcebergValue, Row } from '../iceberg/values.js';

/** A table reference: its location, and the S3 endpoint when not AWS. */
export interface TableRef {
  readonly location: string;
  readonly s3Endpoint?: string;
}

export type CompactionMode = 'major' | 'minor';
export type CompactionStrategy = 'binpack' | 'sort';

/** Thresholds and targets; unset fields default from the table's properties (see policy.ts). */
export interface CompactionPolicy {
  readonly targetFileSizeBytes?: number;
  readonly minFileSizeBytes?: number;
  readonly maxFileSizeBytes?: number;
  readonly minInputFiles?: number;
  readonly deleteFileThreshold?: number;
  readonly deleteRatioThreshold?: number;
  /** Partitions with a commit in the last N minutes wait. */
  readonly quietMinutes?: number;
  /** The `--where` filter over partition fields and columns, e.g. `ts_hour >= '2026-01-01-04' and action = 'click'`. */
  readonly where?: string;
  readonly mode?: CompactionMode;
  readonly strategy?: CompactionStrategy;
  /** Sort by this order instead of the table's (Spark's `sort_order`: `"ts ASC NULLS LAST, id DESC"`); implies the sort strategy. */
  readonly sortOrder?: string;
  readonly maxGroupBytes?: number;
  readonly maxGroups?: number;
}

export interface PlanRequest {
  readonly table: TableRef;
  readonly policy?: CompactionPolicy;
}

export type { DataFileJson } from '../iceberg/data-file-json.js';

/** An input of a group: a live data file, its data sequence number, and the deletes that reach it. */
export interface GroupInput {
  readonly file: DataFileJson;
  readonly dataSequenceNumber: string;
  readonly deletes: readonly { readonly file: DataFileJson; readonly dataSequenceNumber: string }[];
}

export interface GroupEstimate {
  readonly bytesToRead: number;
  readonly bytesToWrite: number;
  readonly filesIn: number;
  readonly filesOut: number;
  /** Live rows after deletes, estimated from record counts. */
  readonly liveRows: number;
}

/** One partition of one spec. */
export interface PartitionRef {
  readonly specId: number;
  /** Partition values in their JSON single-value form. */
  readonly partition: Record<string, unknown>;
  /** Human-readable partition, e.g. `action=click/ts_hour=2026-01-01-10`. */
  readonly partitionPath: string;
}

export interface FileGroup extends PartitionRef {
  readonly id: string;
  readonly inputs: readonly GroupInput[];
  readonly estimate: GroupEstimate;
  /** Why the planner picked it: `too-small`, `too-large`, `deletes`, `delete-ratio`. */
  readonly reasons: readonly string[];
  /** Output sequence number for minor mode (an interval no equality delete falls in). */
  readonly outputSequenceNumber?: string;
}

export interface TableSummary {
  readonly dataFilesBefore: number;
  readonly dataFilesAfter: number;
  readonly deleteFilesBefore: number;
  readonly deleteFilesAfter: number;
  readonly bytesBefore: number;
  readonly bytesAfter: number;
  /** Bytes the plan rewrites over the table's live bytes. */
  readonly rewriteRatio: number;
}

export interface Plan {
  readonly table: TableRef;
  readonly policy: Required<Omit<CompactionPolicy, 'where' | 'sortOrder'>> & Pick<CompactionPolicy, 'where' | 'sortOrder'>;
  /** Snapshot the plan was made from; rewritten files take its sequence number. */
  readonly startingSnapshotId: string | null;
  readonly startingSequenceNumber: string;
  readonly formatVersion: number;
  readonly groups: readonly FileGroup[];
  readonly summary: TableSummary;
  /** Files left alone because we cannot rewrite their format (path, format). */
  readonly skipped: readonly { readonly path: string; readonly reason: string }[];
  readonly createdAtMs: number;
  /** Delete files no live data file needs (table-wide), when there are any: compaction drops them. */
  readonly danglingDeletes?: { readonly files: number; readonly bytes: number };
}

/** Order-independent proof of a group's content. */
export interface Checksums {
  readonly rowsIn: string;
  readonly rowsOut: string;
  /** Hex of the sum (mod 2^64) of the 64-bit hashes of every live row. */
  readonly hashIn: string;
  readonly hashOut: string;
}

export interface GroupResult {
  readonly groupId: string;
  readonly outputs: readonly DataFileJson[];
  /** Delete files every target of which this group rewrote. */
  readonly obsoleteDeletes: readonly DataFileJson[];
  /** Location of the Avro compaction map (binpack only). */
  readonly compactionMap?: string;
  readonly checksums: Checksums;
  readonly bytesRead: number;
  readonly bytesWritten: number;
  readonly durationMs: number;
  /** How many inputs had their row groups copied, merged page by page (deleted rows dropped there too) or decoded. */
  readonly inputPaths?: InputPaths;
  /**
   * Where a batching rewrite function rewrote it beside other groups (lib/pipeline/rewrite-step.ts
   * rewriteBatchStep): the batch's groups and the invocation's duration, which they share (the
   * run's report bills each group its share).
   */
  readonly batch?: { readonly groups: number; readonly durationMs: number };
}

export interface InputPaths {
  readonly copied: number;
  readonly merged: number;
  readonly decoded: number;
  /** Why the first decoded inputs (at most DECODE_REASONS_SHOWN, in group order) were neither copied nor merged. */
  readonly decodedBecause?: readonly DecodeReason[];
}

/** Decoded inputs a GroupResult names with their reason: a Map state's result must stay small. */
export const DECODE_REASONS_SHOWN = 3;
/**
 * The longest reason a GroupResult carries, in printable ASCII (longer ones are cut, other characters
 * shown as `?`), so that a plan's size estimate can count on it (lib/pipeline/plan-payload.ts).
 */
export const DECODE_REASON_MAX_CHARS = 160;

/** Why an input goes through the decoder rather than the column-chunk copy or the page-level merge. */
export interface DecodeReason {
  readonly file: string;
  readonly reason: string;
}

export interface AbortedGroup {
  readonly groupId: string;
  readonly reason: string;
}

/** What the compaction commit did: the commit step's answer, the state machine's output. */
export interface CompactionCommitResult {
  /** The table's current snapshot after the commit: ours, or a concurrent writer's when nothing of ours committed. */
  readonly snapshotId: string | null;
  /** The snapshots this commit wrote, oldest first (one per K groups with partial progress); empty when it wrote none. */
  readonly committedSnapshotIds: readonly string[];
  readonly committedGroups: readonly string[];
  readonly abortedGroups: readonly AbortedGroup[];
  readonly attempts: number;
  readonly filesRemoved: number;
  readonly filesAdded: number;
  /** Position delete files and deletion vectors committed meanwhile and rebased onto the outputs. */
  readonly deletesRebased: number;
}

export type { DataFile, IcebergValue, Row };
