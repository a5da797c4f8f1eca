import { setTimeout as sleep } from 'node:timers/promises';
import { decodeHost } from '../compaction/decode-pool.js';
import { vcpus } from '../compaction/vcpus.js';
import type { GroupResult } from '../compaction/messages.js';
import { rewriteGroup, type RewriteOptions } from '../compaction/rewriter.js';
import { IoError } from '../errors.js';
import { failedGroup, type RewriteOutcome } from './group-outcome.js';
import { rewriteInThreads, workerError, type WorkerError } from './group-threads.js';
import { openTable } from './open-table.js';
import { batchPlan, oneGroupPlan, planHeaderOf, type RewriteBatch, type RewriteRequest } from './rewrite-request.js';

/**
 * Rewrites one group. The table may have moved on since the plan, but the group's inputs and
 * deletes are fixed by it; the commit checks they are still live.
 */
export async function rewriteGroupStep(request: RewriteRequest, options: RewriteOptions = {}): Promise<GroupResult> {
  const table = await openTable(request.table);
  return rewriteGroup(table.io, table.metadata, oneGroupPlan(request), request.group, options);
}

/**
 * The rewrite state's retry of an IoError (cdk IO_RETRY: two more attempts, 5 s then 10 s apart),
 * applied here to a batch's groups one by one: a group that failed on I/O is rewritten again, and
 * the others are not redone. A retry is made only while the invocation has time for another
 * attempt as long as the last one took, and a margin (a timeout would fail the whole batch).
 */
export const BATCH_IO_RETRY = { attempts: 2, firstWaitMs: 5_000, marginMs: 30_000 } as const;

export interface RewriteBatchOptions extends RewriteOptions {
  /** vCPUs to use (default: this process's, on Lambda its memory's: vcpus.ts). */
  readonly vcpus?: number;
  /** @default BATCH_IO_RETRY.firstWaitMs (doubling) */
  readonly retryWaitMs?: number;
  /** Milliseconds the invocation has left (Lambda's context.getRemainingTimeInMillis); unbounded when absent. */
  readonly remainingMs?: () => number;
  /** Called with the groups about to be rewritten again, before the wait. */
  readonly onRetry?: (groupIds: readonly string[]) => Promise<void> | void;
}

/**
 * Rewrites a batch's groups, one outcome per group in the batch's order. With more than one vCPU
 * they run side by side, one thread each (group-threads.ts), each group sized to its share of the
 * function (vCPUs left over go to its merge workers, and no table property gives it more; its
 * share of the memory); a 10,240 MB Lambda's six vCPUs rewrite six groups at once at the cost per
 * GB of one vCPU. A group that fails is a FailedGroup (as the Map state's Catch leaves one), after
 * the retries its IoError is given, and the others stand. Every outcome carries the batch's size
 * and duration (GroupResult.batch), which the run's report bills.
 */
export async function rewriteBatchStep(batch: RewriteBatch, options: RewriteBatchOptions = {}): Promise<RewriteOutcome[]> {
  const { vcpus: cpus = vcpus(), retryWaitMs = BATCH_IO_RETRY.firstWaitMs, remainingMs, onRetry, ...rewrite } = options;
  const started = performance.now();
  const plan = batchPlan(batch);
  const outcomes = new Map<string, RewriteOutcome>();
  const done = (groupId: string, result?: GroupResult, error?: WorkerError): void => {
    outcomes.set(groupId, result ?? failedGroup(groupId, error ?? { name: 'Error', message: 'the rewrite thread gave no answer' }));
  };
  let pending = plan.groups;
  for (let attempt = 0; ; attempt++) {
    const attemptStarted = performance.now();
    const parallelism = Math.min(cpus, pending.length);
    if (parallelism <= 1) {
      for (const group of pending) {
        try {
          done(group.id, await rewriteGroupStep({ ...planHeaderOf(plan), group }, rewrite));
        } catch (e) {
          done(group.id, undefined, workerError(e));
        }
      }
    } else {
      const spare = Math.max(0, Math.floor(cpus / parallelism) - 1);
      const host = rewrite.decodeHost ?? decodeHost();
      const share: RewriteOptions = {
        maxDefaultDecodeWorkers: spare,
        workerCap: spare,
        decodeHost: { vcpus: spare + 1, memoryBytes: host.memoryBytes / parallelism, ...(host.dedicated !== undefined ? { dedicated: host.dedicated } : {}) },
      };
      await rewriteInThreads({ ...plan, groups: pending }, parallelism, { ...rewrite, ...share }, done).catch((e: unknown) => {
        for (const g of pending) if (!outcomes.has(g.id)) done(g.id, undefined, workerError(e));
      });
    }
    const again = pending.filter((g) => {
      const outcome = outcomes.get(g.id);
      return outcome !== undefined && 'error' in outcome && typeof outcome.error === 'object' && outcome.error.Error === IoError.name;
    });
    if (again.length === 0 || attempt === BATCH_IO_RETRY.attempts) break;
    const waitMs = retryWaitMs * 2 ** attempt;
    if (remainingMs !== undefined && remainingMs() < waitMs + (performance.now() - attemptStarted) + BATCH_IO_RETRY.marginMs) break;
    await onRetry?.(again.map((g) => g.id));
    await sleep(waitMs);
    for (const g of again) outcomes.delete(g.id);
    pending = again;
  }
  const share = { groups: plan.groups.length, durationMs: Math.round(performance.now() - started) };
  return plan.groups.map((g) => ({ ...(outcomes.get(g.id) ?? failedGroup(g.id, { name: 'Error', message: 'not rewritten' })), batch: share }));
}
