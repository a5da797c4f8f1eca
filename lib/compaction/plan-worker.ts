/**
 * A plan decode worker of plan-pool.ts: takes a plan's context, then that plan's data manifests'
 * bytes, decodes each one's live data files into columns (lib/iceberg/manifest-columns.ts) and
 * sends them back, buffers transferred. It serves one plan after another.
 */
import { parentPort } from 'node:worker_threads';
import { errorToJson } from '../errors.js';
import { decodeManifestColumns, packColumns } from '../iceberg/manifest-columns.js';
import { currentSchema, specsById } from '../iceberg/table-metadata.js';
import type { FromPlanWorker, ToPlanWorker } from './plan-pool.js';

const port = parentPort!;
let plan: { specs: ReturnType<typeof specsById>; schema: ReturnType<typeof currentSchema>; pathDeletes: ReadonlySet<string> } | undefined;

// One manifest at a time, in the order sent: the planner takes the first while the next decodes.
let queue = Promise.resolve();
port.on('message', (m: ToPlanWorker) => {
  if ('plan' in m) {
    const { metadata, pathDeletes } = m.plan;
    plan = { specs: specsById(metadata), schema: currentSchema(metadata), pathDeletes: new Set(pathDeletes) };
    return;
  }
  const { specs, schema, pathDeletes } = plan!;
  queue = queue.then(() =>
    decodeManifestColumns(m.bytes, m.manifest, specs.get(m.manifest.partitionSpecId)!, schema, pathDeletes).then(
      (columns) => {
        const { packed, transfer } = packColumns(columns);
        port.postMessage({ id: m.id, columns: packed } satisfies FromPlanWorker, transfer);
      },
      (e: unknown) => port.postMessage({ id: m.id, error: errorToJson(e) } satisfies FromPlanWorker),
    ),
  );
});
port.postMessage({ ready: true } satisfies FromPlanWorker);
