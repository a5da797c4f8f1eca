/**
 * What a compaction run did, counted over the groups its commit committed: the same figures for
 * the local runner's summary and the state machine's report.
 */
import type { CompactionCommitResult, GroupResult, Plan } from '../compaction/messages.js';

export interface RunTotals {
  /** Data files the committed groups replaced, and the files they wrote. */
  readonly filesIn: number;
  readonly filesOut: number;
  readonly bytesRead: number;
  readonly bytesWritten: number;
  readonly rowsIn: number;
  readonly rowsOut: number;
}

export function runTotals(plan: Plan, results: readonly GroupResult[], commit: CompactionCommitResult | null): RunTotals {
  const committed = new Set(commit?.committedGroups ?? []);
  const done = results.filter((r) => committed.has(r.groupId));
  const groups = new Map(plan.groups.map((g) => [g.id, g]));
  const sum = (f: (r: GroupResult) => number): number => done.reduce((n, r) => n + f(r), 0);
  return {
    filesIn: sum((r) => groups.get(r.groupId)?.inputs.length ?? 0),
    filesOut: sum((r) => r.outputs.length),
    bytesRead: sum((r) => r.bytesRead),
    bytesWritten: sum((r) => r.bytesWritten),
    rowsIn: sum((r) => Number(r.checksums.rowsIn)),
    rowsOut: sum((r) => Number(r.checksums.rowsOut)),
  };
}
