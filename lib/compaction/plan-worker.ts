/**
 * A plan decode worker of plan-pool.ts: takes a data manifest's bytes, decodes its live data
 * files into columns (lib/iceberg/manifest-columns.ts) and sends them back, buffers transferred.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { errorToJson } from '../errors.js';
import { columnBuffers, decodeManifestColumns } from '../iceberg/manifest-columns.js';
import { currentSchema, specsById } from '../iceberg/table-metadata.js';
import type { FromPlanWorker, PlanWorkerData, ToPlanWorker } from './plan-pool.js';

const port = parentPort!;
const { metadata, pathDeletes: paths } = workerData as PlanWorkerData;
const pathDeletes = new Set(paths);
const specs = specsById(metadata);
const schema = currentSchema(metadata);

// One manifest at a time, in the order sent: the planner takes the first while the next decodes.
let queue = Promise.resolve();
port.on('message', (m: ToPlanWorker) => {
  queue = queue.then(() =>
    decodeManifestColumns(m.bytes, m.manifest, specs.get(m.manifest.partitionSpecId)!, schema, pathDeletes).then(
      (columns) => port.postMessage({ id: m.id, columns } satisfies FromPlanWorker, columnBuffers(columns)),
      (e: unknown) => port.postMessage({ id: m.id, error: errorToJson(e) } satisfies FromPlanWorker),
    ),
  );
});
