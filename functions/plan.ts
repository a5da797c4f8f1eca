/**
 * Lambda: PlanRequest → Plan, inline when it fits the state payload with its results; otherwise
 * its groups are written under PACKICE_WORK_LOCATION and a StoredPlan is returned.
 */
import { INLINE_BUDGET_ENV, placePlan, REWRITE_BATCH_ENV, WORK_LOCATION_ENV, type PlanMessage } from '../lib/pipeline/plan-payload.js';
import { planStep } from '../lib/pipeline/plan-step.js';
import { parsePlanEvent } from './event.js';
import { logStep, type LambdaContext } from './log-step.js';

export async function handler(event: unknown, context?: LambdaContext): Promise<PlanMessage> {
  return logStep('plan', context, async () => {
    const request = parsePlanEvent(event);
    const plan = await planStep(request);
    const workLocation = process.env[WORK_LOCATION_ENV] || undefined;
    const budget = Number(process.env[INLINE_BUDGET_ENV]);
    const batchSize = Number(process.env[REWRITE_BATCH_ENV]);
    const message = await placePlan(plan, {
      ...(workLocation === undefined ? {} : { workLocation }),
      ...(Number.isSafeInteger(budget) && budget > 0 ? { inlineBudgetBytes: budget } : {}),
      ...(Number.isSafeInteger(batchSize) && batchSize > 1 ? { batchSize } : {}),
    });
    return {
      result: message,
      log: {
        table: plan.table.location,
        snapshotId: plan.startingSnapshotId,
        groups: plan.groups.length,
        groupsFile: 'groupsFile' in message ? message.groupsFile.location : null,
        ...('batchCount' in message ? { batches: message.batchCount ?? null } : {}),
      },
    };
  });
}
