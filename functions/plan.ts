/**
 * Lambda: PlanRequest → Plan, inline when it fits the state payload with its results; otherwise
 * its groups are written under PACKICE_WORK_LOCATION and a StoredPlan is returned.
 */
import { INLINE_BUDGET_ENV, placePlan, WORK_LOCATION_ENV, type PlanMessage } from '../lib/pipeline/plan-payload.js';
import { planStep } from '../lib/pipeline/plan-step.js';
import { parsePlanEvent } from './event.js';
import { logStep, type LambdaContext } from './log-step.js';

export async function handler(event: unknown, context?: LambdaContext): Promise<PlanMessage> {
  return logStep('plan', context, async () => {
    const request = parsePlanEvent(event);
    const plan = await planStep(request);
    const workLocation = process.env[WORK_LOCATION_ENV] || undefined;
    // 0 stores every plan (a batching rewrite: only the Distributed Map batches).
    const budget = Number(process.env[INLINE_BUDGET_ENV] || NaN);
    const message = await placePlan(plan, {
      ...(workLocation === undefined ? {} : { workLocation }),
      ...(Number.isSafeInteger(budget) && budget >= 0 ? { inlineBudgetBytes: budget } : {}),
    });
    return {
      result: message,
      log: {
        table: plan.table.location,
        snapshotId: plan.startingSnapshotId,
        groups: plan.groups.length,
        groupsFile: 'groupsFile' in message ? message.groupsFile.location : null,
      },
    };
  });
}
