/** Lambda: PlanRequest → Plan (returned inline; plans beyond the 256 KB state payload are not handled yet). */
import type { Plan } from '../lib/compaction/messages.js';
import { planStep } from '../lib/pipeline/steps.js';
import { parsePlanEvent } from './event.js';
import { logStep, type LambdaContext } from './log-step.js';

export async function handler(event: unknown, context?: LambdaContext): Promise<Plan> {
  return logStep('plan', context, async () => {
    const request = parsePlanEvent(event);
    const plan = await planStep(request);
    return { result: plan, log: { table: plan.table.location, snapshotId: plan.startingSnapshotId, groups: plan.groups.length } };
  });
}
