/**
 * Lambda: RewriteRequest (the plan's header and one group, one item of the Map state) → GroupResult;
 * or RewriteBatch (a batching Distributed Map's `{BatchInput, Items}`) → one outcome per group,
 * a failed group as `{groupId, error}`.
 */
import type { GroupResult } from '../lib/compaction/messages.js';
import type { RewriteOutcome } from '../lib/pipeline/group-outcome.js';
import type { RewriteBatch } from '../lib/pipeline/rewrite-request.js';
import { isRewriteBatch, parseRewriteEvent } from './event.js';
import { logStep, type LambdaContext, type LogFields } from './log-step.js';

// Parquet (a 5 MB wasm module) is compiled at the first rewrite, once per container, not at import.
let rewriteStep: Promise<typeof import('../lib/pipeline/rewrite-step.js')> | undefined;

export function handler(event: RewriteBatch, context?: LambdaContext): Promise<RewriteOutcome[]>;
export function handler(event: unknown, context?: LambdaContext): Promise<GroupResult>;
export async function handler(event: unknown, context?: LambdaContext): Promise<GroupResult | RewriteOutcome[]> {
  return logStep('rewrite', context, async (): Promise<{ result: GroupResult | RewriteOutcome[]; log: LogFields }> => {
    const request = parseRewriteEvent(event);
    const { rewriteGroupStep, rewriteBatchStep } = await (rewriteStep ??= import('../lib/pipeline/rewrite-step.js'));
    if (isRewriteBatch(request)) {
      const remaining = context?.getRemainingTimeInMillis?.bind(context);
      const outcomes = await rewriteBatchStep(request, remaining ? { remainingMs: remaining } : {});
      const results = outcomes.filter((o): o is GroupResult => !('error' in o));
      return {
        result: outcomes,
        log: {
          table: request.BatchInput.table.location,
          groups: outcomes.map((o) => o.groupId),
          failed: outcomes.filter((o) => 'error' in o).map((o) => o.groupId),
          outputs: results.reduce((n, r) => n + r.outputs.length, 0),
          bytesWritten: results.reduce((n, r) => n + r.bytesWritten, 0),
        },
      };
    }
    const result = await rewriteGroupStep(request);
    const { rowsIn, rowsOut } = result.checksums;
    return {
      result,
      log: { table: request.table.location, groupId: result.groupId, outputs: result.outputs.length, rowsIn, rowsOut, bytesWritten: result.bytesWritten },
    };
  });
}
