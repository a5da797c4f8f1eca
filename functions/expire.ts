/** Lambda: RetentionRequest (a table and its retention settings) → ExpireSummary: snapshots expired and the files only they reached deleted. */
import { expireStep } from '../lib/pipeline/expire-step.js';
import type { ExpireSummary } from '../lib/pipeline/retention-request.js';
import { parseRetentionEvent } from './event.js';
import { logStep, type LambdaContext } from './log-step.js';

export async function handler(event: unknown, context?: LambdaContext): Promise<ExpireSummary> {
  return logStep('expire', context, async () => {
    const result = await expireStep(parseRetentionEvent('expire', event));
    return { result, log: { table: result.table, expired: result.expiredSnapshots, deleted: result.deleted, bytes: result.totals.bytes } };
  });
}
