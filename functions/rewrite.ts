/** Lambda: `{ plan, groupId }` (one item of the Map state) → GroupResult. */
import type { GroupResult } from '../lib/compaction/messages.js';
import { rewriteStep } from '../lib/pipeline/steps.js';
import { parseRewriteEvent } from './event.js';
import { logStep, type LambdaContext } from './log-step.js';

export async function handler(event: unknown, context?: LambdaContext): Promise<GroupResult> {
  return logStep('rewrite', context, async () => {
    const request = parseRewriteEvent(event);
    const result = await rewriteStep(request);
    const { rowsIn, rowsOut } = result.checksums;
    return {
      result,
      log: { table: request.plan.table.location, groupId: result.groupId, outputs: result.outputs.length, rowsIn, rowsOut, bytesWritten: result.bytesWritten },
    };
  });
}
