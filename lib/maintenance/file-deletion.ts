/**
 * The only place retention deletes: batches of keys (S3 DeleteObjects takes 1,000) with a bounded
 * number of batches in flight, in an order that lets an interrupted run be finished by a rerun —
 * content files first, then what names them (manifests, then manifest lists, then metadata) — and
 * never anything outside the table location, whatever a metadata file said.
 */
import { NotFoundError, ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { inLocationScheme, isInsideLocation } from './file-uri.js';
import type { FileKind, ReachableFile } from './reachable-files.js';

export const DELETE_BATCH_SIZE = 1000;
export const DELETE_CONCURRENCY = 4;

/** Deletion order: a rerun after a crash still finds the lists that name what is left. */
const ORDER: readonly FileKind[] = [
  'orphan', 'data', 'position-deletes', 'equality-deletes', 'deletion-vector', 'statistics', 'partition-statistics',
  'compaction-map', 'manifest', 'manifest-list', 'metadata', 'version-hint', 'pending-expiry',
];

export interface PlannedFile {
  readonly path: string;
  readonly kind: FileKind;
  readonly size: number;
}

export interface DeletionTotals {
  readonly files: number;
  readonly bytes: number;
  readonly byKind: Partial<Record<FileKind, { files: number; bytes: number }>>;
}

export function totalsOf(files: readonly PlannedFile[]): DeletionTotals {
  const byKind: Partial<Record<FileKind, { files: number; bytes: number }>> = {};
  let bytes = 0;
  for (const f of files) {
    const k = (byKind[f.kind] ??= { files: 0, bytes: 0 });
    k.files++;
    k.bytes += f.size;
    bytes += f.size;
  }
  return { files: files.length, bytes, byKind };
}

/** Splits candidates into those inside `location` and those a metadata file named elsewhere. */
export function partitionByLocation<T extends { readonly path: string }>(location: string, files: Iterable<T>): { inside: T[]; outside: T[] } {
  const inside: T[] = [];
  const outside: T[] = [];
  for (const f of files) (isInsideLocation(location, f.path) ? inside : outside).push(f);
  return { inside, outside };
}

/**
 * Sizes for the report: the recorded size when the metadata has one, else a stat (a file the
 * stat finds gone was deleted by an earlier, interrupted run and is dropped).
 */
export async function withSizes(io: FileIO, location: string, files: readonly ReachableFile[], concurrency = 16): Promise<PlannedFile[]> {
  const out: (PlannedFile | undefined)[] = new Array(files.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const i = next++;
      const f = files[i];
      const path = inLocationScheme(location, f.path);
      if (f.size !== undefined && f.kind !== 'manifest-list' && f.kind !== 'compaction-map') {
        out[i] = { path, kind: f.kind, size: f.size };
        continue;
      }
      try {
        out[i] = { path, kind: f.kind, size: (await io.stat(path)).size };
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
  return out.filter((f): f is PlannedFile => f !== undefined);
}

export interface DeleteOptions {
  readonly batchSize?: number;
  readonly concurrency?: number;
  readonly onProgress?: (deleted: number, total: number) => void;
}

/** Deletes `files` (all inside `location`, or nothing is deleted) in kind order; returns the count deleted. */
export async function deleteFiles(io: FileIO, location: string, files: readonly PlannedFile[], options: DeleteOptions = {}): Promise<number> {
  const stray = files.find((f) => !isInsideLocation(location, f.path));
  if (stray !== undefined) {
    throw new ValidationError(`refusing to delete ${stray.path}: it is outside the table location ${location}`, { path: stray.path });
  }
  const batchSize = options.batchSize ?? DELETE_BATCH_SIZE;
  const concurrency = options.concurrency ?? DELETE_CONCURRENCY;
  let deleted = 0;
  for (const kind of ORDER) {
    const paths = files.filter((f) => f.kind === kind).map((f) => f.path);
    const batches: string[][] = [];
    for (let i = 0; i < paths.length; i += batchSize) batches.push(paths.slice(i, i + batchSize));
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < batches.length) {
        const batch = batches[next++];
        await io.deleteMany(batch);
        deleted += batch.length;
        options.onProgress?.(deleted, files.length);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
  }
  return deleted;
}
