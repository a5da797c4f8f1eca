import type { GroupResult } from '../compaction/messages.js';
import { rewriteGroup, type RewriteOptions } from '../compaction/rewriter.js';
import { openTable } from './open-table.js';
import { oneGroupPlan, type RewriteRequest } from './rewrite-request.js';

/**
 * Rewrites one group. The table may have moved on since the plan, but the group's inputs and
 * deletes are fixed by it; the commit checks they are still live.
 */
export async function rewriteGroupStep(request: RewriteRequest, options: RewriteOptions = {}): Promise<GroupResult> {
  const table = await openTable(request.table);
  return rewriteGroup(table.io, table.metadata, oneGroupPlan(request), request.group, options);
}
