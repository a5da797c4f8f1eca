/**
 * Every file a set of snapshots reaches: manifest lists (or v1 inline manifests), manifests,
 * the data and delete files in them, compaction maps named in snapshot summaries, and the
 * statistics and partition-statistics files the metadata attaches to those snapshots. Files
 * are keyed by fileKey, so `s3a://` and `s3://` references to one object count once.
 */
import { NotFoundError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { mapLimit } from '../io/map-limit.js';
import { isDeletionVector } from '../iceberg/delete-file.js';
import { isJsonObject, type JsonObject } from '../iceberg/json.js';
import { FileContent, ManifestEntryStatus, readManifestFile } from '../iceberg/manifest.js';
import { readManifestList } from '../iceberg/manifest-list.js';
import type { Snapshot } from '../iceberg/snapshot.js';
import type { TableMetadata } from '../iceberg/table-metadata.js';
import { COMPACTION_MAPS_SUMMARY } from '../compaction/compaction-map.js';
import { fileKey } from './file-uri.js';

export type FileKind =
  | 'data'
  | 'position-deletes'
  | 'equality-deletes'
  | 'deletion-vector'
  | 'manifest'
  | 'manifest-list'
  | 'compaction-map'
  | 'statistics'
  | 'partition-statistics'
  | 'metadata'
  | 'version-hint'
  | 'pending-expiry'
  | 'orphan';

export interface ReachableFile {
  readonly path: string;
  readonly kind: FileKind;
  /** As recorded by the metadata, when it records one. */
  readonly size?: number;
}

/** Files by fileKey; the first reference seen names the file. */
export class FileSet {
  private readonly byKey = new Map<string, ReachableFile>();

  add(f: ReachableFile): void {
    const k = fileKey(f.path);
    if (!this.byKey.has(k)) this.byKey.set(k, f);
  }

  has(path: string): boolean {
    return this.byKey.has(fileKey(path));
  }

  get size(): number {
    return this.byKey.size;
  }

  values(): IterableIterator<ReachableFile> {
    return this.byKey.values();
  }
}

export interface ReachOptions {
  /**
   * `live`: ADDED and EXISTING entries, what a reader of the snapshot sees (the retained side of
   * an expiry). `all`: DELETED entries too (the expired side, and orphan removal's valid set).
   */
  readonly entries: 'live' | 'all';
  /**
   * A missing manifest list or manifest: `fail` where a guess could delete live data (the retained
   * side), `skip` where an earlier, interrupted run already deleted it (the expired side).
   */
  readonly missing: 'fail' | 'skip';
  /** Manifests (by fileKey) not to open: they are already accounted for. */
  readonly skipManifests?: ReadonlySet<string>;
  /** Manifests read at once. @default 8 */
  readonly concurrency?: number;
  readonly onManifest?: (read: number, total: number) => void;
}

export interface Reached {
  readonly files: FileSet;
  /** fileKeys of the manifests the snapshots list. */
  readonly manifests: Set<string>;
}

function fileKind(f: { content: FileContent; fileFormat: string }): FileKind {
  if (f.content === FileContent.Data) return 'data';
  if (f.content === FileContent.EqualityDeletes) return 'equality-deletes';
  return isDeletionVector(f) ? 'deletion-vector' : 'position-deletes';
}

async function ifPresent<T>(missing: ReachOptions['missing'], read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (e) {
    if (missing === 'skip' && e instanceof NotFoundError) return undefined;
    throw e;
  }
}

/** The compaction maps a snapshot's summary names (lib/compaction/commit.ts writes them comma-joined). */
export function compactionMapsOf(s: Snapshot): string[] {
  const v = s.summary[COMPACTION_MAPS_SUMMARY];
  return v === undefined ? [] : v.split(',').map((p) => p.trim()).filter((p) => p !== '');
}

/** Statistics and partition-statistics files the metadata attaches to the given snapshots. */
export function statisticsFiles(m: TableMetadata, snapshotIds: ReadonlySet<bigint> | 'all'): ReachableFile[] {
  const out: ReachableFile[] = [];
  const pick = (list: readonly JsonObject[] | undefined, kind: FileKind): void => {
    for (const st of list ?? []) {
      if (!isJsonObject(st) || typeof st['statistics-path'] !== 'string') continue;
      const id = st['snapshot-id'];
      if (snapshotIds !== 'all' && (id === undefined || id === null || !snapshotIds.has(BigInt(String(id))))) continue;
      const size = st['file-size-in-bytes'];
      out.push({ path: st['statistics-path'], kind, ...(size !== undefined && size !== null ? { size: Number(size) } : {}) });
    }
  };
  pick(m.statistics, 'statistics');
  pick(m.partitionStatistics, 'partition-statistics');
  return out;
}


/** Reads what `snapshots` reach into a new FileSet (or `into`). */
export async function reachableFromSnapshots(
  io: FileIO,
  snapshots: Iterable<Snapshot>,
  options: ReachOptions,
  into: FileSet = new FileSet(),
): Promise<Reached> {
  const manifests = new Map<string, { path: string; size?: number }>();
  const list = [...snapshots];
  const lists = await mapLimit(list, options.concurrency ?? 8, (s) =>
    s.manifestList === undefined ? Promise.resolve(undefined) : ifPresent(options.missing, () => readManifestList(io, s.manifestList!)),
  );
  list.forEach((s, i) => {
    for (const map of compactionMapsOf(s)) into.add({ path: map, kind: 'compaction-map' });
    if (s.manifestList !== undefined) into.add({ path: s.manifestList, kind: 'manifest-list' });
    for (const mf of lists[i] ?? []) {
      manifests.set(fileKey(mf.manifestPath), { path: mf.manifestPath, size: Number(mf.manifestLength) });
    }
    for (const path of s.manifests ?? []) {
      if (!manifests.has(fileKey(path))) manifests.set(fileKey(path), { path });
    }
  });
  for (const mf of manifests.values()) into.add({ path: mf.path, kind: 'manifest', ...(mf.size !== undefined ? { size: mf.size } : {}) });

  const toRead = [...manifests].filter(([k]) => !options.skipManifests?.has(k)).map(([, v]) => v.path);
  let read = 0;
  await mapLimit(toRead, options.concurrency ?? 8, async (path) => {
    const bytes = await ifPresent(options.missing, () => io.read(path));
    if (bytes !== undefined) {
      const opened = await readManifestFile(bytes, path);
      for await (const e of opened.entries) {
        if (options.entries === 'live' && e.status === ManifestEntryStatus.Deleted) continue;
        const f = e.dataFile;
        into.add({ path: f.filePath, kind: fileKind(f), size: Number(f.fileSizeInBytes) });
      }
    }
    options.onManifest?.(++read, toRead.length);
  });
  return { files: into, manifests: new Set(manifests.keys()) };
}
