/**
 * RewriteRequest (DESIGN.md "The flow"): what one rewrite needs — the table, the starting
 * snapshot, the policy and one group — never the whole plan, so a Map item stays small
 * whatever the size of the plan.
 */
import type { FileGroup, Plan } from '../compaction/messages.js';
import { ValidationError } from '../errors.js';

/** The plan without its groups, summary and skipped files: the part every group shares. */
export type PlanHeader = Pick<Plan, 'table' | 'policy' | 'startingSnapshotId' | 'startingSequenceNumber' | 'formatVersion' | 'createdAtMs'>;

export interface RewriteRequest extends PlanHeader {
  readonly group: FileGroup;
}

export const PLAN_HEADER_FIELDS = ['table', 'policy', 'startingSnapshotId', 'startingSequenceNumber', 'formatVersion', 'createdAtMs'] as const satisfies readonly (keyof PlanHeader)[];

export function planHeaderOf(plan: PlanHeader): PlanHeader {
  const { table, policy, startingSnapshotId, startingSequenceNumber, formatVersion, createdAtMs } = plan;
  return { table, policy, startingSnapshotId, startingSequenceNumber, formatVersion, createdAtMs };
}

/** The request for one group of a plan. */
export function rewriteRequestOf(plan: Plan, groupId: string): RewriteRequest {
  const group = plan.groups.find((g) => g.id === groupId);
  if (!group) throw new ValidationError(`group ${groupId} is not in the plan`);
  return { ...planHeaderOf(plan), group };
}

/**
 * Several groups for one rewrite function, as the Distributed Map hands it a batch the plan
 * function made (plan-payload.ts rewriteBatches): the plan's header as `BatchInput`, the groups
 * as `Items` (where Lambda gives the function more than one vCPU, it rewrites them side by side:
 * rewrite-step.ts rewriteBatchStep).
 */
export interface RewriteBatch {
  readonly BatchInput: PlanHeader;
  readonly Items: readonly FileGroup[];
}

/** The request as a one-group plan, the shape lib/compaction's rewriter reads its policy and snapshot from. */
export function oneGroupPlan(request: RewriteRequest): Plan {
  return headerPlan(request, [request.group]);
}

/** A batch as a plan of its groups. */
export function batchPlan(batch: RewriteBatch): Plan {
  return headerPlan(batch.BatchInput, batch.Items);
}

function headerPlan(header: PlanHeader, groups: readonly FileGroup[]): Plan {
  return {
    ...planHeaderOf(header),
    groups: [...groups],
    // The rewriter reads neither; the table-wide figures stay with the planner.
    summary: { dataFilesBefore: 0, dataFilesAfter: 0, deleteFilesBefore: 0, deleteFilesAfter: 0, bytesBefore: 0, bytesAfter: 0, rewriteRatio: 0 },
    skipped: [],
  };
}
