import type { Worker } from 'node:worker_threads';

/** A worker thread a pool keeps idle between uses: its thread, and when its module is loaded. */
export interface KeptThread {
  readonly thread: Worker;
  /** Resolves when it is ready, rejects if it dies first. */
  readonly started: Promise<void>;
}

/**
 * Starts threads (`make`) into `idle` until it holds `count` (at most `max`), and waits until every
 * idle one is ready: a process that will use a pool (or a test of its workers) pays their start first.
 * Those still idle afterwards are unref'd again: an idle thread never keeps the process alive.
 */
export async function prestartThreads<T extends KeptThread>(idle: T[], count: number, max: number, make: () => T): Promise<void> {
  while (idle.length < Math.min(count, max)) idle.push(make());
  // Referenced while starting (else nothing may keep the process alive to see them ready).
  const starting = [...idle];
  for (const w of starting) w.thread.ref();
  try {
    await Promise.all(starting.map((w) => w.started));
  } finally {
    for (const w of starting) if (idle.includes(w)) w.thread.unref();
  }
}

/**
 * Terminates `thread` once `busy()` says it holds no more work (its answers still arrive, and are
 * dropped), or after `waitMs`: stopped in the middle of its work, a thread can be cut between a
 * node:zlib handle's creation and its init, which Node 20 answers at the thread's teardown by
 * aborting the whole process ("close before init", node_zlib.cc; seen once in the suite, on a
 * plan failure).
 */
export async function terminateWhenIdle(thread: Worker, busy: () => boolean, waitMs = 10_000): Promise<void> {
  if (busy()) {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        thread.off('message', check);
        thread.off('exit', done);
        resolve();
      };
      // Registered after the pool's own listener: it sees the count that answer left.
      const check = (): void => {
        if (!busy()) done();
      };
      const timer = setTimeout(done, waitMs);
      thread.on('message', check);
      thread.on('exit', done);
    });
  }
  await thread.terminate().catch(() => undefined);
}

/**
 * Where a worker thread of lib/compaction starts: from the sources through lib/worker-entry.mjs
 * (which registers the tsx loader), else `<name>.js` beside this module (dist/lib/compaction, or
 * `index.js` in a Lambda bundle, which carries the worker beside it: cdk WORKER_BUNDLES).
 */
export function workerStart(name: string): { readonly url: URL; readonly module: string } {
  const here = import.meta.url;
  if (here.endsWith('.ts')) return { url: new URL('../worker-entry.mjs', here), module: new URL(`./${name}.ts`, here).href };
  const url = new URL(`./${name}.js`, here);
  return { url, module: url.href };
}
