/**
 * What the expiry and orphan-removal steps take: a table and its retention settings (one item of
 * the retention state machine's Map), and the summaries they return. A summary counts what was
 * deleted rather than listing it: a run may delete a million files, and a Lambda answer or a
 * state holds at most 256 KB.
 */
import type { TableRef } from '../compaction/messages.js';
import type { ExpireResult } from '../maintenance/expire-snapshots.js';
import type { OrphanResult } from '../maintenance/orphan-files.js';
import type { TableRetention } from './maintained-table.js';

export interface RetentionRequest {
  readonly table: TableRef;
  readonly retention?: TableRetention;
  /** Decide and count, delete nothing. */
  readonly dryRun?: boolean;
}

/** ExpireResult without its file list: counts instead. */
export interface ExpireSummary extends Omit<ExpireResult, 'expiredSnapshots' | 'files' | 'outsideLocation' | 'resumedRecords'> {
  readonly expiredSnapshots: number;
  readonly outsideLocation: number;
  readonly durationMs: number;
}

/** OrphanResult without its file list: counts instead. */
export interface OrphanSummary extends Omit<OrphanResult, 'files' | 'prefixMismatches'> {
  readonly prefixMismatches: number;
  readonly durationMs: number;
}
