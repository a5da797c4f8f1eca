/**
 * Lambda: `{ plan, results }` → the commit's result and its duration. Groups the Map state caught
 * (`{groupId, error}`) are not committed; they are reported among the aborted groups with their
 * error, and the rest commit. A stored plan's groups and a Distributed Map's result files are
 * read back first. The same function serves the Report state (`{ plan, results, commit, execution }`).
 */
import type { CommitStateResult } from '../lib/pipeline/commit-step.js';
import { commitStateStep } from '../lib/pipeline/commit-step.js';
import type { CompactionReport, ReportRequest } from '../lib/pipeline/report-step.js';
import { parseCommitEvent } from './event.js';
import { logStep, type LambdaContext } from './log-step.js';
import { isReportEvent, report } from './report.js';

export function handler(event: ReportRequest, context?: LambdaContext): Promise<CompactionReport>;
export function handler(event: unknown, context?: LambdaContext): Promise<CommitStateResult>;
export async function handler(event: unknown, context?: LambdaContext): Promise<CommitStateResult | CompactionReport> {
  if (isReportEvent(event)) return report(event, context);
  return logStep('commit', context, async () => {
    const request = parseCommitEvent(event);
    const result = await commitStateStep(request);
    return {
      result,
      log: { table: request.plan.table.location, snapshotId: result.snapshotId, committed: result.committedGroups, aborted: result.abortedGroups.map((a) => a.groupId) },
    };
  });
}
