/**
 * A merge worker of merge-pool.ts: builds the output row groups it is sent with buildRowGroup, as
 * the rewriter's own thread does without a pool, and sends each back as one buffer, transferred;
 * walks the re-read row groups it is sent with rewalk. Each task's buffer goes back with its answer.
 */
import { parentPort } from 'node:worker_threads';
import { zstdCodec } from '../parquet/compression-codec.js';
import { digestHasher } from '../parquet/digest.js';
import { readPages } from '../parquet/page-compression.js';
import { buildRowGroup, rewalk, type SourceGroup } from '../parquet/row-group-merge.js';
import { taskError, type FromMergeWorker, type ToMergeWorker } from './merge-pool.js';

const port = parentPort!;
const zstd = zstdCodec();
// No top-level await: the Lambda bundles are CommonJS.
const hashing = digestHasher();

port.on('message', (m: ToMergeWorker) => void run(m));
// Loaded: the pool sends it tasks from now on (it does them itself meanwhile).
void hashing.then(() => port.postMessage({ type: 'ready' } satisfies FromMergeWorker));

/** Takes consecutive chunks of `buffer` from its start, each as long as asked. */
function cursor(buffer: ArrayBuffer): (n: number) => Uint8Array {
  let at = 0;
  return (n) => new Uint8Array(buffer, (at += n) - n, n);
}

async function run(m: ToMergeWorker): Promise<void> {
  try {
    const hasher = await hashing;
    if (m.type === 'rewalk') {
      rewalk({ ...m.job, bytes: m.lengths.map(cursor(m.buffer)) }, zstd, hasher);
      port.postMessage({ type: 'walked', id: m.id, buffer: m.buffer } satisfies FromMergeWorker, [m.buffer]);
      return;
    }
    const take = cursor(m.buffer);
    const groups: SourceGroup[] = m.groups.map(({ lengths, ...g }) => {
      const bytes = lengths.map(take);
      return { ...g, bytes, pages: bytes.map((b) => readPages(b, 0, b.length)) };
    });
    const built = buildRowGroup(m.shape, groups, zstd, hasher);
    const joined = new Uint8Array(built.parts.reduce((n, p) => n + p.length, 0));
    let to = 0;
    for (const p of built.parts) {
      joined.set(p, to);
      to += p.length;
    }
    port.postMessage({ type: 'built', id: m.id, built: { ...built, parts: [joined] }, buffer: m.buffer } satisfies FromMergeWorker, [joined.buffer, m.buffer]);
  } catch (e) {
    port.postMessage(taskError(m.id, e, m.buffer), [m.buffer]);
  }
}
