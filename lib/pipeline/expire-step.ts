import { expireSnapshots } from '../maintenance/expire-snapshots.js';
import { openTable } from './open-table.js';
import type { ExpireSummary, RetentionRequest } from './retention-request.js';

/** Expires the snapshots the table's retention (and the request's settings) no longer keeps, and deletes the files only they reached. */
export async function expireStep(request: RetentionRequest, options: { nowMs?: number } = {}): Promise<ExpireSummary> {
  const started = performance.now();
  const r = request.retention ?? {};
  const result = await expireSnapshots(await openTable(request.table), {
    ...(r.olderThanMs !== undefined ? { olderThanMs: r.olderThanMs } : {}),
    ...(r.retainLast !== undefined ? { retainLast: r.retainLast } : {}),
    ...(r.pins !== undefined ? { pins: r.pins } : {}),
    ...(r.horizonsMs !== undefined ? { horizonsMs: r.horizonsMs } : {}),
    ...(options.nowMs !== undefined ? { nowMs: options.nowMs } : {}),
    dryRun: request.dryRun === true,
  });
  const { files: _files, expiredSnapshots, outsideLocation, resumedRecords: _resumed, ...counts } = result;
  // The table as the request names it (`glue://…`), not where its files are.
  return { ...counts, table: request.table.location, expiredSnapshots: expiredSnapshots.length, outsideLocation: outsideLocation.length, durationMs: Math.round(performance.now() - started) };
}
