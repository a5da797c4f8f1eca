/**
 * A merge worker of merge-pool.ts: builds the output row groups it is sent with buildRowGroup, as
 * the rewriter's own thread does without a pool, and sends each back as one buffer, transferred.
 */
import { parentPort } from 'node:worker_threads';
import { zstdCodec } from '../parquet/compression-codec.js';
import { digestHasher } from '../parquet/digest.js';
import { readPages } from '../parquet/page-compression.js';
import { buildRowGroup, type SourceGroup } from '../parquet/row-group-merge.js';
import { builtError, type FromMergeWorker, type ToMergeWorker } from './merge-pool.js';

const port = parentPort!;
const zstd = zstdCodec();
// No top-level await: the Lambda bundles are CommonJS.
const hashing = digestHasher();

port.on('message', (m: ToMergeWorker) => void build(m));
// Loaded: the pool sends it row groups from now on (it builds them itself meanwhile).
void hashing.then(() => port.postMessage({ type: 'ready' } satisfies FromMergeWorker));

async function build(m: ToMergeWorker): Promise<void> {
  try {
    const hasher = await hashing;
    let at = 0;
    const groups: SourceGroup[] = m.groups.map(({ lengths, ...g }) => {
      const bytes = lengths.map((n) => new Uint8Array(m.buffer, (at += n) - n, n));
      return { ...g, bytes, pages: bytes.map((b) => readPages(b, 0, b.length)) };
    });
    const built = buildRowGroup(m.shape, groups, zstd, hasher);
    const joined = new Uint8Array(built.parts.reduce((n, p) => n + p.length, 0));
    let to = 0;
    for (const p of built.parts) {
      joined.set(p, to);
      to += p.length;
    }
    port.postMessage({ type: 'built', id: m.id, built: { ...built, parts: [joined] } } satisfies FromMergeWorker, [joined.buffer]);
  } catch (e) {
    port.postMessage(builtError(m.id, e));
  }
}
