import { availableParallelism } from 'node:os';
import type { CompactionCommitOptions } from '../compaction/commit.js';
import type { CompactionCommitResult, GroupResult, Plan, PlanRequest } from '../compaction/messages.js';
import type { RewriteOptions } from '../compaction/rewriter.js';
import { failedGroup, type FailedGroup } from './group-outcome.js';
import { closeRewriteThreads, rewriteInThreads, workerError, type WorkerError } from './group-threads.js';
import { runTotals, type RunTotals } from './run-totals.js';
import { commitStep, planStep, rewriteStep } from './steps.js';

export type ProgressEvent =
  | { readonly kind: 'planned'; readonly plan: Plan }
  | { readonly kind: 'group-done'; readonly groupId: string; readonly result: GroupResult }
  | { readonly kind: 'group-failed'; readonly groupId: string; readonly error: string }
  | { readonly kind: 'committed'; readonly commit: CompactionCommitResult };

export interface LocalRunOptions {
  /** Worker threads rewriting groups at once (default: the machine's cores); 0 rewrites in this thread. */
  readonly parallelism?: number;
  readonly dryRun?: boolean;
  readonly rewrite?: RewriteOptions;
  readonly commit?: CompactionCommitOptions;
  readonly nowMs?: number;
  readonly onProgress?: (e: ProgressEvent) => void;
}

export interface RunSummary extends RunTotals {
  /** Bytes written over the live bytes of the table. */
  readonly writeAmplification: number;
  readonly durationMs: number;
}

export interface RunReport {
  readonly plan: Plan;
  readonly results: readonly GroupResult[];
  /**
   * Null for a dry run or a plan with nothing to do. A group whose rewrite failed is among its
   * aborted groups (`rewrite failed: <error name>: <message>`), as on Lambda, and the others commit.
   */
  readonly commit: CompactionCommitResult | null;
  readonly summary: RunSummary;
}

/** Plan → rewrite every group (in worker threads) → commit, as the state machine does. */
export async function runCompaction(request: PlanRequest, options: LocalRunOptions = {}): Promise<RunReport> {
  const started = performance.now();
  const plan = await planStep(request, options.nowMs !== undefined ? { nowMs: options.nowMs } : {});
  options.onProgress?.({ kind: 'planned', plan });
  if (!options.dryRun && plan.groups.length === 0 && plan.danglingDeletes) {
    const commit = await commitStep({ plan, results: [] }, options.commit);
    options.onProgress?.({ kind: 'committed', commit });
    return { plan, results: [], commit, summary: runSummary(plan, [], commit, performance.now() - started) };
  }
  if (options.dryRun || plan.groups.length === 0) {
    return { plan, results: [], commit: null, summary: runSummary(plan, [], null, performance.now() - started) };
  }
  const results: GroupResult[] = [];
  const failed: FailedGroup[] = [];
  const onDone = (groupId: string, result?: GroupResult, error?: WorkerError): void => {
    if (result) {
      results.push(result);
      options.onProgress?.({ kind: 'group-done', groupId, result });
    } else {
      // The shape the Map state's Catch gives a failed rewrite: the commit reports both alike.
      const e = error ?? { name: 'Error', message: 'unknown error' };
      failed.push(failedGroup(groupId, e));
      options.onProgress?.({ kind: 'group-failed', groupId, error: e.message });
    }
  };
  const parallelism = Math.min(options.parallelism ?? availableParallelism(), plan.groups.length);
  if (parallelism <= 0) {
    for (const g of plan.groups) {
      try {
        onDone(g.id, await rewriteStep({ plan, groupId: g.id }, options.rewrite));
      } catch (e) {
        onDone(g.id, undefined, workerError(e));
      }
    }
  } else {
    // Groups already run side by side: by default each gets only the cores left over for decode workers of its own.
    const spare = Math.max(0, Math.floor(availableParallelism() / parallelism) - 1);
    try {
      await rewriteInThreads(plan, parallelism, { maxDefaultDecodeWorkers: spare, ...options.rewrite }, onDone);
    } finally {
      await closeRewriteThreads();
    }
  }
  // Commit in plan order, whatever order the groups finished in.
  const order = new Map(plan.groups.map((g, i) => [g.id, i]));
  results.sort((a, b) => order.get(a.groupId)! - order.get(b.groupId)!);
  const commit = await commitStep({ plan, results: [...results, ...failed] }, options.commit);
  options.onProgress?.({ kind: 'committed', commit });
  return { plan, results, commit, summary: runSummary(plan, results, commit, performance.now() - started) };
}

function runSummary(plan: Plan, results: readonly GroupResult[], commit: CompactionCommitResult | null, durationMs: number): RunSummary {
  const totals = runTotals(plan, results, commit);
  return { ...totals, writeAmplification: totals.bytesWritten / Math.max(1, plan.summary.bytesBefore), durationMs };
}
