/**
 * Groups rewritten side by side, one worker thread each (rewrite-worker.ts): the local runner's
 * groups, and a rewrite function's batch where Lambda gives more than one vCPU. A group is a
 * whole rewrite on its own thread, so N groups use N vCPUs with no thread waiting on another.
 * Threads are kept between calls, as a Lambda container keeps its modules: a thread's first
 * rewrite compiles the Parquet wasm and warms the JIT (~10 % of a 700 MiB group's CPU), which a
 * thread per invocation would pay for every group.
 */
import { SHARE_ENV, Worker } from 'node:worker_threads';
import type { GroupResult, Plan } from '../compaction/messages.js';
import type { RewriteOptions } from '../compaction/rewriter.js';
import { planHeaderOf, type RewriteRequest } from './rewrite-request.js';

/** A rewrite's error as it crosses from a worker thread. */
export interface WorkerError {
  readonly name: string;
  readonly message: string;
}

/** Any thrown value as a WorkerError. */
export function workerError(e: unknown): WorkerError {
  return e instanceof Error ? { name: e.name, message: e.message } : { name: 'Error', message: String(e) };
}

export type GroupDone = (groupId: string, result?: GroupResult, error?: WorkerError) => void;

/** What rewrite-worker.ts takes: one group's request. */
export interface RewriteJob {
  readonly request: RewriteRequest;
  readonly options: RewriteOptions;
}

/** What it answers: `{ready}` once started, then per job its result or error. */
export type FromRewriteWorker = { readonly ready: true } | { readonly result: GroupResult } | { readonly error: WorkerError };

/** Started threads not rewriting, unref'd: they never keep the process alive. */
const idle: Worker[] = [];

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

/** A new thread, once its module has loaded; rejects if it dies first. */
function startThread(): Promise<Worker> {
  const { url, module } = rewriteWorkerStart();
  // SHARE_ENV: a kept thread sees the environment as it is now, not as it was at its start.
  const worker = new Worker(url, { workerData: { module }, env: SHARE_ENV });
  // Always listened to: an idle thread that dies leaves the pool, and its error is not thrown here.
  worker.on('error', () => undefined);
  worker.on('exit', () => {
    const at = idle.indexOf(worker);
    if (at >= 0) idle.splice(at, 1);
  });
  return answer(worker).then(() => worker);
}

/** The thread's next message; rejects if it dies before sending one. */
function answer(worker: Worker): Promise<FromRewriteWorker> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    const onMessage = (m: FromRewriteWorker): void => {
      done();
      resolve(m);
    };
    const onError = (e: Error): void => {
      done();
      void worker.terminate();
      reject(e);
    };
    const onExit = (code: number): void => {
      done();
      reject(new Error(`the thread exited with code ${code}`));
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

/**
 * Rewrites every group of `plan`, at most `parallelism` at once, calling `onDone` once per group.
 * A thread that ends (an uncaught error, a heap over its limit, an exit) fails the group it held,
 * and another thread takes the rest; a crash of the whole process (out of memory, a native abort)
 * takes every group with it. A thread that cannot start (its module does not load) rejects once
 * every other thread has finished, the groups it would have taken left unreported.
 */
export async function rewriteInThreads(plan: Plan, parallelism: number, rewrite: RewriteOptions, onDone: GroupDone): Promise<void> {
  const queue = [...plan.groups];
  const header = planHeaderOf(plan);
  const slot = async (): Promise<void> => {
    let worker: Worker | undefined;
    try {
      while (queue.length > 0) {
        worker ??= idle.pop() ?? (await startThread());
        worker.ref();
        const group = queue.shift();
        if (group === undefined) break;
        const sent = answer(worker);
        worker.postMessage({ request: { ...header, group }, options: rewrite } satisfies RewriteJob);
        let m: FromRewriteWorker;
        try {
          m = await sent;
        } catch (e) {
          const error = workerError(e);
          void worker.terminate();
          worker = undefined;
          onDone(group.id, undefined, { name: error.name, message: `the rewrite thread died: ${error.message}` });
          continue;
        }
        if ('result' in m) onDone(group.id, m.result);
        else if ('error' in m) onDone(group.id, undefined, m.error);
        else onDone(group.id, undefined, { name: 'Error', message: 'the rewrite thread answered a job with "ready"' });
      }
    } finally {
      if (worker !== undefined) {
        worker.unref();
        idle.push(worker);
      }
    }
  };
  const slots = await Promise.allSettled(Array.from({ length: Math.min(parallelism, queue.length) }, slot));
  const failed = slots.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Ends the kept threads (a host that runs compactions now and then, like the local runner, need not keep them). */
export async function closeRewriteThreads(): Promise<void> {
  await Promise.all(idle.splice(0).map((w) => w.terminate()));
}
