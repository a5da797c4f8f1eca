/**
 * The compaction flow as message → message functions (DESIGN.md "The flow"): the CLI,
 * the local runner, the tests and the Lambda handlers all call these. Each step lives in its
 * own module so a Lambda bundle holds only its step: plan and commit never load Parquet.
 */
import type { GroupResult, Plan } from '../compaction/messages.js';
import type { RewriteOptions } from '../compaction/rewriter.js';
import { rewriteRequestOf } from './rewrite-request.js';
import { rewriteGroupStep } from './rewrite-step.js';

export { commitStep, type CommitRequest } from './commit-step.js';
export { openTable } from './open-table.js';
export { planStep } from './plan-step.js';
export { rewriteRequestOf, type RewriteRequest } from './rewrite-request.js';
export { rewriteGroupStep } from './rewrite-step.js';

/** Rewrites group `groupId` of `plan`, through the same RewriteRequest a Map item carries. */
export async function rewriteStep(request: { readonly plan: Plan; readonly groupId: string }, options: RewriteOptions = {}): Promise<GroupResult> {
  return rewriteGroupStep(rewriteRequestOf(request.plan, request.groupId), options);
}
