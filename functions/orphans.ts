/** Lambda: RetentionRequest → OrphanSummary: files in the table location that no metadata names, older than the delay, deleted. */
import { orphansStep } from '../lib/pipeline/orphans-step.js';
import type { OrphanSummary } from '../lib/pipeline/retention-request.js';
import { parseRetentionEvent } from './event.js';
import { logStep, type LambdaContext } from './log-step.js';

export async function handler(event: unknown, context?: LambdaContext): Promise<OrphanSummary> {
  return logStep('orphans', context, async () => {
    const result = await orphansStep(parseRetentionEvent('orphans', event));
    return { result, log: { table: result.table, listed: result.listed, deleted: result.deleted, bytes: result.totals.bytes } };
  });
}
