/** Lambda: RewriteRequest (the plan's header and one group, one item of the Map state) → GroupResult. */
import type { GroupResult } from '../lib/compaction/messages.js';
import { parseRewriteEvent } from './event.js';
import { logStep, type LambdaContext } from './log-step.js';

// Parquet (a 5 MB wasm module) is compiled at the first rewrite, once per container, not at import.
let rewriteStep: Promise<typeof import('../lib/pipeline/rewrite-step.js')> | undefined;

export async function handler(event: unknown, context?: LambdaContext): Promise<GroupResult> {
  return logStep('rewrite', context, async () => {
    const request = parseRewriteEvent(event);
    const { rewriteGroupStep } = await (rewriteStep ??= import('../lib/pipeline/rewrite-step.js'));
    const result = await rewriteGroupStep(request);
    const { rowsIn, rowsOut } = result.checksums;
    return {
      result,
      log: { table: request.table.location, groupId: result.groupId, outputs: result.outputs.length, rowsIn, rowsOut, bytesWritten: result.bytesWritten },
    };
  });
}
