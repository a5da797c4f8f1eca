import type { Plan, PlanRequest } from '../compaction/messages.js';
import { planCompaction } from '../compaction/planner.js';
import { openTable } from './open-table.js';

/** PlanRequest → Plan, from the table's manifests alone (never a data file). */
export async function planStep(request: PlanRequest, options: { nowMs?: number } = {}): Promise<Plan> {
  const table = await openTable(request.table);
  return planCompaction(table.io, table.metadata, request, options);
}
