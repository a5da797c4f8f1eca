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
