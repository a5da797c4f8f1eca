import { DEFAULT_ORPHAN_OLDER_THAN_MS, deleteOrphanFiles } from '../maintenance/orphan-files.js';
import { openTable } from './open-table.js';
import type { OrphanSummary, RetentionRequest } from './retention-request.js';

/**
 * Deletes the files under the table location that no metadata names and that are older than the
 * table's delay. A location or scheme mismatch stops the run (lib/maintenance's default): a
 * scheduled run never guesses.
 */
export async function orphansStep(request: RetentionRequest, options: { nowMs?: number } = {}): Promise<OrphanSummary> {
  const started = performance.now();
  const result = await deleteOrphanFiles(await openTable(request.table), {
    olderThanMs: request.retention?.orphanOlderThanMs ?? DEFAULT_ORPHAN_OLDER_THAN_MS,
    ...(options.nowMs !== undefined ? { nowMs: options.nowMs } : {}),
    dryRun: request.dryRun === true,
  });
  const { files: _files, prefixMismatches, ...counts } = result;
  return { ...counts, table: request.table.location, prefixMismatches: prefixMismatches.length, durationMs: Math.round(performance.now() - started) };
}
