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
