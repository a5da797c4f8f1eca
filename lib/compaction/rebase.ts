/**
 * Rebasing concurrent deletes at commit time (DESIGN.md "Compaction maps"): position deletes and
 * deletion vectors a writer committed against a group's inputs after the rewrite started are read
 * (the delete files only, never a data file), translated through the group's compaction map onto
 * its outputs, and written again for the outputs: position delete files on v2 tables, one
 * deletion vector per output on v3 (merged with the one it already has). Positions whose rows
 * the rewrite had already removed drop out.
 */
import { ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { normalizePath } from '../io/path.js';
import { deleteFileKey, isDeletionVector, referencedDataFile } from '../iceberg/delete-file.js';
import type { DeleteFileRef } from '../iceberg/delete-index.js';
import { ensureRoaring, PositionDeleteIndex, readDeletionVector } from '../iceberg/deletion-vector.js';
import type { DataFile } from '../iceberg/manifest.js';
import type { TableMetadata } from '../iceberg/table-metadata.js';
import { DeleteFileCache } from '../table/delete-filter.js';
import { writePositionDeletes } from '../table/delete-writer.js';
import { readCompactionMap } from './compaction-map.js';
import { CompactionMapIndex } from './remap.js';

/** One committed group's concurrent deletes to carry over to its outputs. */
export interface RebaseRequest {
  readonly groupId: string;
  /** Location of the group's compaction map. */
  readonly compactionMap: string;
  readonly inputs: readonly DataFile[];
  readonly outputs: readonly DataFile[];
  /** Position delete files and deletion vectors committed after the rewrite started that reach an input. */
  readonly deletes: readonly DataFile[];
}

export interface RebasedDeletes {
  /** New delete files for the outputs (they take the commit's sequence number, above the outputs'). */
  readonly added: readonly DataFile[];
  /**
   * Delete files the commit drops: the concurrent ones scoped to a rewritten input (rebased, else
   * dangling) and an output's older deletion vector merged into its new one.
   */
  readonly removed: readonly DataFile[];
  /** Concurrent delete files that were translated. */
  readonly files: number;
  /** Positions written for the outputs. */
  readonly positions: number;
  /** Positions whose rows the rewrite had already removed. */
  readonly dropped: number;
}

export async function rebaseDeletes(
  io: FileIO,
  m: TableMetadata,
  requests: readonly RebaseRequest[],
  liveDeletes: readonly DeleteFileRef[],
): Promise<RebasedDeletes> {
  if (requests.length === 0) return { added: [], removed: [], files: 0, positions: 0, dropped: 0 };
  await ensureRoaring();
  const cache = new DeleteFileCache();
  const perOutput = new Map<string, { file: DataFile; positions: PositionDeleteIndex }>();
  const removed = new Map<string, DataFile>();
  const translated = new Set<string>();
  let dropped = 0;
  for (const req of requests) {
    const map = await readCompactionMap(io, req.compactionMap);
    const index = CompactionMapIndex.of(map);
    const inputs = new Map(req.inputs.map((f) => [normalizePath(f.filePath), f]));
    const outputs = new Map(req.outputs.map((f) => [normalizePath(f.filePath), f]));
    for (const d of req.deletes) {
      for (const [input, positions] of await positionsByInput(io, d, inputs, cache)) {
        const t = index.translate(input, positions);
        if (!t) {
          throw new ValidationError(`compaction map of group ${req.groupId} does not cover its input ${input}; cannot rebase ${d.filePath}`, {
            path: req.compactionMap,
          });
        }
        dropped += t.dropped;
        for (const [target, moved] of t.byFile) {
          const key = normalizePath(target);
          const out = outputs.get(key);
          if (!out) {
            throw new ValidationError(`compaction map of group ${req.groupId} names ${target}, which is not one of its outputs`, {
              path: req.compactionMap,
            });
          }
          let slot = perOutput.get(key);
          if (!slot) perOutput.set(key, (slot = { file: out, positions: new PositionDeleteIndex() }));
          slot.positions.addAll(moved);
        }
      }
      translated.add(deleteFileKey(d));
      const target = referencedDataFile(d);
      if (target !== undefined && inputs.has(normalizePath(target))) removed.set(deleteFileKey(d), d);
    }
  }
  const slots = [...perOutput.values()].filter((s) => !s.positions.isEmpty());
  const positions = slots.reduce((n, s) => n + s.positions.cardinality(), 0);
  if (m.formatVersion >= 3) {
    // One DV per data file: fold in the one an output already has, and replace it.
    const existing = new Map<string, DataFile>();
    for (const d of liveDeletes) {
      const target = referencedDataFile(d.file);
      if (isDeletionVector(d.file) && target !== undefined) existing.set(normalizePath(target), d.file);
    }
    for (const s of slots) {
      const old = existing.get(normalizePath(s.file.filePath));
      if (!old) continue;
      s.positions.merge(await readVector(io, old));
      removed.set(deleteFileKey(old), old);
    }
  }
  const added = await writePositionDeletes(io, m, slots.map((s) => ({ dataFile: s.file, positions: s.positions })));
  return { added, removed: [...removed.values()], files: translated.size, positions, dropped };
}

/** The deleted positions of each input that `d` names: a DV's vector, or a position delete file's rows for those inputs. */
async function positionsByInput(
  io: FileIO,
  d: DataFile,
  inputs: ReadonlyMap<string, DataFile>,
  cache: DeleteFileCache,
): Promise<Map<string, Float64Array>> {
  const out = new Map<string, Float64Array>();
  if (isDeletionVector(d)) {
    const target = normalizePath(referencedDataFile(d)!);
    if (inputs.has(target)) out.set(target, Float64Array.from((await readVector(io, d)).positions()));
    return out;
  }
  const byPath = await cache.positions(io, d);
  for (const input of inputs.keys()) {
    const list = byPath.get(input);
    if (list && list.length > 0) out.set(input, Float64Array.from(list, Number));
  }
  return out;
}

function readVector(io: FileIO, d: DataFile): Promise<PositionDeleteIndex> {
  return readDeletionVector(io, d.filePath, Number(d.contentOffset ?? 0n), Number(d.contentSizeInBytes ?? 0n), d.recordCount);
}
