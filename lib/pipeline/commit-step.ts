import { commitCompaction, commitDanglingDeletes, type CompactionCommitOptions } from '../compaction/commit.js';
import type { CompactionCommitResult, GroupResult, Plan } from '../compaction/messages.js';
import type { FileIOOptions } from '../io/index.js';
import { failureReason, isFailedGroup, type FailedGroup, type RewriteOutcome } from './group-outcome.js';
import { isMapResultWriterOutput, readMapResults, type MapResultWriterOutput } from './map-results.js';
import { openTable } from './open-table.js';
import { loadPlan, type PlanMessage } from './plan-payload.js';

export interface CommitRequest {
  readonly plan: Plan;
  /** Every group's outcome; failed groups are reported, not committed. */
  readonly results: readonly RewriteOutcome[];
}

/**
 * Commits the groups that rewrote; the failed ones join the aborted groups with their reason. A
 * plan with no group drops its dangling delete files in their own snapshot instead.
 */
export async function commitStep(request: CommitRequest, options: CompactionCommitOptions = {}): Promise<CompactionCommitResult> {
  const results: GroupResult[] = [];
  const failed: FailedGroup[] = [];
  for (const outcome of request.results) {
    if (isFailedGroup(outcome)) failed.push(outcome);
    else results.push(outcome);
  }
  const table = await openTable(request.plan.table);
  if (request.plan.groups.length === 0 && request.plan.danglingDeletes) return commitDanglingDeletes(table, request.plan, options);
  const result = await commitCompaction(table, request.plan, results, options);
  return { ...result, abortedGroups: [...result.abortedGroups, ...failed.map((f) => ({ groupId: f.groupId, reason: failureReason(f.error) }))] };
}

/** The commit state's input: the plan as it travelled, and the inline Map's results or the Distributed Map's result files. */
export interface CommitStateInput {
  readonly plan: PlanMessage;
  readonly results: readonly RewriteOutcome[] | MapResultWriterOutput;
}

/** The commit state's answer: the commit's, and how long the step took (the report prices it). */
export interface CommitStateResult extends CompactionCommitResult {
  readonly durationMs: number;
}

/** Reads back what travelled by reference (a stored plan's groups, a Distributed Map's results), then commits. */
export async function commitStateStep(input: CommitStateInput, options: CompactionCommitOptions & FileIOOptions = {}): Promise<CommitStateResult> {
  const started = performance.now();
  const plan = await loadPlan(input.plan, options);
  const results = await rewriteOutcomes(input.results, options);
  const result = await commitStep({ plan, results }, options);
  return { ...result, durationMs: Math.round(performance.now() - started) };
}

/** The Map's outcomes, read back from the Distributed Map's result files when they travelled by reference. */
export async function rewriteOutcomes(results: CommitStateInput['results'], options: FileIOOptions = {}): Promise<readonly RewriteOutcome[]> {
  return isMapResultWriterOutput(results) ? readMapResults(results, options) : results;
}
