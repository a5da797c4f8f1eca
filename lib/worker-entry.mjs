// Worker threads start without the TypeScript loader the main thread may have: register it when
// the worker module is TypeScript (run from the sources), then load the module named in workerData.
import { workerData } from 'node:worker_threads';

if (workerData.module.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.module);
