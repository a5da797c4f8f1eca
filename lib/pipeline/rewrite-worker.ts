import { parentPort, workerData } from 'node:worker_threads';
import type { RewriteOptions } from '../compaction/rewriter.js';
import type { Plan } from '../compaction/messages.js';
import { rewriteRequestOf } from './rewrite-request.js';
import { rewriteGroupStep } from './rewrite-step.js';

/** One rewriter per thread: takes {plan, groupId} jobs, answers {groupId, result | error}. */
interface Job {
  readonly groupId: string;
}

const { plan, options } = workerData as { plan: Plan; options: RewriteOptions };
parentPort!.on('message', (job: Job) => {
  rewriteGroupStep(rewriteRequestOf(plan, job.groupId), options).then(
    (result) => parentPort!.postMessage({ groupId: job.groupId, result }),
    (e: unknown) =>
      parentPort!.postMessage({
        groupId: job.groupId,
        error: { message: e instanceof Error ? e.message : String(e), name: e instanceof Error ? e.name : 'Error' },
      }),
  );
});
parentPort!.postMessage({ ready: true });
