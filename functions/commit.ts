/**
 * Lambda: `{ plan, results }` → CompactionCommitResult. Groups the Map state caught (`{groupId, error}`) are
 * not committed; they are reported among the aborted groups with their error, and the rest commit.
 * A stored plan's groups and a Distributed Map's result files are read back first.
 */
import type { CompactionCommitResult } from '../lib/compaction/messages.js';
import { commitStateStep } from '../lib/pipeline/commit-step.js';
import { parseCommitEvent } from './event.js';
import { logStep, type LambdaContext } from './log-step.js';

export async function handler(event: unknown, context?: LambdaContext): Promise<CompactionCommitResult> {
  return logStep('commit', context, async () => {
    const request = parseCommitEvent(event);
    const result = await commitStateStep(request);
    return {
      result,
      log: { table: request.plan.table.location, snapshotId: result.snapshotId, committed: result.committedGroups, aborted: result.abortedGroups.map((a) => a.groupId) },
    };
  });
}
