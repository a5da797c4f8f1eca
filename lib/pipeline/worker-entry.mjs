// Worker threads start without the TypeScript loader the main thread has: register it, then
// load the worker module named in workerData.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.module);
