/**
 * The compaction flow as message → message functions (DESIGN.md "The flow"): the CLI,
 * the local runner, the tests and the Lambda handlers all call these.
 */
import { loadTable, type Table } from '../catalog/table.js';
import { commitCompaction, type CommitOptions } from '../compaction/commit.js';
import type { CommitResult, GroupResult, Plan, PlanRequest, TableRef } from '../compaction/messages.js';
import { planCompaction } from '../compaction/planner.js';
import { rewriteGroup, type RewriteOptions } from '../compaction/rewriter.js';
import { ValidationError } from '../errors.js';

export async function openTable(ref: TableRef): Promise<Table> {
  return loadTable(ref.location, ref.s3Endpoint ? { s3Endpoint: ref.s3Endpoint } : {});
}

export async function planStep(request: PlanRequest, options: { nowMs?: number } = {}): Promise<Plan> {
  const table = await openTable(request.table);
  return planCompaction(table.io, table.metadata, request, options);
}

export interface RewriteRequest {
  readonly plan: Plan;
  readonly groupId: string;
}

/**
 * Rewrites one group against the metadata of the plan's starting snapshot: the table may
 * have moved on, but the group's inputs and deletes are fixed by the plan.
 */
export async function rewriteStep(request: RewriteRequest, options: RewriteOptions = {}): Promise<GroupResult> {
  const group = request.plan.groups.find((g) => g.id === request.groupId);
  if (!group) throw new ValidationError(`group ${request.groupId} is not in the plan`);
  const table = await openTable(request.plan.table);
  return rewriteGroup(table.io, table.metadata, request.plan, group, options);
}

export interface CommitRequest {
  readonly plan: Plan;
  readonly results: readonly GroupResult[];
}

export async function commitStep(request: CommitRequest, options: CommitOptions = {}): Promise<CommitResult> {
  const table = await openTable(request.plan.table);
  const { table: _t, ...result } = await commitCompaction(table, request.plan, request.results, options);
  return result;
}
