import { parentPort } from 'node:worker_threads';
import { workerError, type FromRewriteWorker, type RewriteJob } from './group-threads.js';
import { rewriteGroupStep } from './rewrite-step.js';

/** One rewriter per thread (group-threads.ts): takes one group's job at a time, answers its result or error. */
const answer = (m: FromRewriteWorker): void => parentPort!.postMessage(m);
parentPort!.on('message', (job: RewriteJob) => {
  if (job.options.faults?.exitThread !== undefined) process.exit(job.options.faults.exitThread);
  rewriteGroupStep(job.request, job.options).then(
    (result) => answer({ result }),
    (e: unknown) => answer({ error: workerError(e) }),
  );
});
answer({ ready: true });
