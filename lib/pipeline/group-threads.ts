/**
 * Groups rewritten side by side, one worker thread each (rewrite-worker.ts): the local runner's
 * groups, and a rewrite function's batch where Lambda gives more than one vCPU. A group is a
 * whole rewrite on its own thread, so N groups use N vCPUs with no thread waiting on another.
 */
import { Worker } from 'node:worker_threads';
import type { GroupResult, Plan } from '../compaction/messages.js';
import type { RewriteOptions } from '../compaction/rewriter.js';

/** A rewrite's error as it crosses from a worker thread. */
export interface WorkerError {
  readonly name: string;
  readonly message: string;
}

export type GroupDone = (groupId: string, result?: GroupResult, error?: WorkerError) => void;

type FromRewriteWorker = { readonly ready: true } | { readonly ready?: undefined; readonly groupId: string; readonly result?: GroupResult; readonly error?: WorkerError };

/**
 * Where rewrite-worker starts: from the sources through lib/worker-entry.mjs (the tsx loader),
 * else `rewrite-worker.js` beside this module (dist/lib/pipeline, or `index.js` in a Lambda
 * bundle, which carries it beside: cdk WORKER_BUNDLES).
 */
function rewriteWorkerStart(): { readonly url: URL; readonly module: string } {
  const here = import.meta.url;
  if (here.endsWith('.ts')) return { url: new URL('../worker-entry.mjs', here), module: new URL('./rewrite-worker.ts', here).href };
  const url = new URL('./rewrite-worker.js', here);
  return { url, module: url.href };
}

/**
 * Rewrites every group of `plan`, at most `parallelism` at once, calling `onDone` once per group.
 * A thread that dies fails the group it held, and a new thread takes the rest: one group's crash
 * (out of memory, a native abort) costs no other group. A thread that dies before taking any
 * group (its module does not load) rejects, and the groups not yet taken are left unreported.
 */
export async function rewriteInThreads(plan: Plan, parallelism: number, rewrite: RewriteOptions, onDone: GroupDone): Promise<void> {
  const queue = plan.groups.map((g) => g.id);
  const { url, module } = rewriteWorkerStart();
  const slot = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      let current: string | undefined;
      const start = (): void => {
        const worker = new Worker(url, { workerData: { module, plan, options: rewrite } });
        let ready = false;
        const next = (): void => {
          current = queue.shift();
          if (current === undefined) {
            worker.removeAllListeners('exit');
            void worker.terminate().then(() => resolve());
            return;
          }
          worker.postMessage({ groupId: current });
        };
        const died = (e: Error): void => {
          worker.removeAllListeners();
          void worker.terminate();
          if (!ready) {
            reject(e);
            return;
          }
          if (current !== undefined) onDone(current, undefined, { name: e.name, message: `the rewrite thread died: ${e.message}` });
          current = undefined;
          if (queue.length === 0) resolve();
          else start();
        };
        worker.on('message', (m: FromRewriteWorker) => {
          if (m.ready === undefined) onDone(m.groupId, m.result, m.error);
          ready = true;
          next();
        });
        worker.on('error', died);
        worker.on('exit', (code) => died(new Error(`exit code ${code}`)));
      };
      start();
    });
  await Promise.all(Array.from({ length: Math.min(parallelism, queue.length) }, slot));
}
