/**
 * Lambda: `{ plan, results }` → CommitResult. Groups the Map state caught (`{groupId, error}`) are
 * not committed; they are reported among the aborted groups with their error, and the rest commit.
 */
import type { CommitResult } from '../lib/compaction/messages.js';
import { commitStep } from '../lib/pipeline/steps.js';
import { failureReason, parseCommitEvent, splitResults } from './event.js';
import { logStep, type LambdaContext } from './log-step.js';

export async function handler(event: unknown, context?: LambdaContext): Promise<CommitResult> {
  return logStep('commit', context, async () => {
    const request = parseCommitEvent(event);
    const { results, failed } = splitResults(request);
    const commit = await commitStep({ plan: request.plan, results });
    const result = { ...commit, abortedGroups: [...commit.abortedGroups, ...failed.map((f) => ({ groupId: f.groupId, reason: failureReason(f.error) }))] };
    return {
      result,
      log: { table: request.plan.table.location, snapshotId: result.snapshotId, committed: result.committedGroups, aborted: result.abortedGroups.map((a) => a.groupId) },
    };
  });
}
