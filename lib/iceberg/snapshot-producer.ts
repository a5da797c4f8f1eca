import { randomBytes, randomUUID } from 'node:crypto';
import { ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { normalizePath } from '../io/path.js';
import { deleteFileKey, isDeletionVector } from './delete-file.js';
import { newMetadataLocation } from './locations.js';
import { FileContent, ManifestWriter, readManifest, type DataFile, type ManifestEntry } from './manifest.js';
import { ManifestContent, readManifestList, writeManifestList, type ManifestFile } from './manifest-list.js';
import { keepsManifest, manifestMergeSettings, mergeManifests, type MergeContext } from './manifest-merge.js';
import { partitionKey } from './partition.js';
import { MAIN_BRANCH, Operation, type Snapshot } from './snapshot.js';
import {
  currentSchema, snapshotForRef, specById, specsById, type TableMetadata,
} from './table-metadata.js';
import type { TableRequirement, TableUpdate } from './table-update.js';

/** What one commit changes. Every later feature (compaction, row deltas) commits through this. */
export interface SnapshotChanges {
  /** Data files to add; a pair sets that file's data sequence number (minor compaction). */
  readonly addedDataFiles?: readonly (DataFile | { readonly file: DataFile; readonly dataSequenceNumber: bigint })[];
  readonly addedDeleteFiles?: readonly DataFile[];
  /**
   * Files to remove; each must be live in the parent snapshot. A path removes every
   * entry of that file; a DataFile of a deletion vector removes just that vector.
   */
  readonly removedFiles?: readonly (string | DataFile)[];
  /** Explicit data sequence number for the added files (compaction: the starting snapshot's). */
  readonly dataSequenceNumber?: bigint;
  /** Defaults from the changes: append, delete, overwrite. */
  readonly operation?: Operation;
  readonly summary?: Readonly<Record<string, string>>;
  readonly branch?: string;
  readonly snapshotId?: bigint;
  readonly nowMs?: number;
}

export interface ProducedSnapshot {
  readonly snapshot: Snapshot;
  readonly updates: readonly TableUpdate[];
  readonly requirements: readonly TableRequirement[];
  /** Every file this attempt wrote (manifests, manifest list): orphans if the commit fails. */
  readonly writtenFiles: readonly string[];
}

export function newSnapshotId(): bigint {
  // Positive 63-bit, like Java's SnapshotIdGeneratorUtil.
  const b = randomBytes(8);
  b[0] &= 0x7f;
  const id = b.readBigUInt64BE();
  return id === 0n ? 1n : id;
}

/**
 * Writes the manifests and manifest list of the next snapshot of `base` and returns
 * the updates that add it. Untouched manifests are carried over verbatim; a manifest
 * holding a removed file is rewritten with that entry DELETED and the rest EXISTING
 * (emptied manifests' DELETED entries share one manifest per spec and content). Then, as
 * Java's MergingSnapshotProducer: manifests with no live entry that an earlier commit wrote
 * are dropped, and small manifests are merged (manifest-merge.ts).
 */
export async function produceSnapshot(io: FileIO, base: TableMetadata, changes: SnapshotChanges): Promise<ProducedSnapshot> {
  const branch = changes.branch ?? MAIN_BRANCH;
  const parent = snapshotForRef(base, branch);
  const v = base.formatVersion;
  const snapshotId = changes.snapshotId ?? newSnapshotId();
  const schema = currentSchema(base);
  const specs = specsById(base);
  const commitUuid = randomUUID();
  const written: string[] = [];
  const addedEntries = (changes.addedDataFiles ?? []).map((f) =>
    'file' in f ? f : { file: f, dataSequenceNumber: changes.dataSequenceNumber },
  );
  const addedData = addedEntries.map((e) => e.file);
  const seqOf = new Map(addedEntries.map((e) => [e.file, e.dataSequenceNumber]));
  const addedDeletes = changes.addedDeleteFiles ?? [];
  const toRemove = new Map((changes.removedFiles ?? []).map((f) => (typeof f === 'string' ? [normalizePath(f), f] : [deleteFileKey(f), f.filePath])));
  const matches = (f: DataFile): string | undefined => {
    const byPath = normalizePath(f.filePath);
    if (toRemove.has(byPath)) return byPath;
    // A deletion vector by its blob: a Puffin file holds many.
    const exact = deleteFileKey(f);
    return toRemove.has(exact) ? exact : undefined;
  };
  const found = new Set<string>();
  const removed: ManifestEntry[] = [];
  let manifestCount = 0;
  const nextManifestPath = (): string => newMetadataLocation(base, `${commitUuid}-m${manifestCount++}.avro`);

  for (const f of addedDeletes) {
    if (f.content === FileContent.Data) throw new ValidationError(`${f.filePath} is a data file, added as a delete file`);
    if (v < 2) throw new ValidationError(`delete files need format version 2 or later: ${f.filePath}`);
    if (v >= 3 && f.content === FileContent.PositionDeletes && !isDeletionVector(f)) {
      throw new ValidationError(`Must use DVs for position deletes in V${v}: ${f.filePath}`);
    }
    if (v === 2 && isDeletionVector(f)) throw new ValidationError(`Must not use DVs for position deletes in V2: ${f.filePath}`);
  }

  // New manifests first, one per spec and content, as Java orders them.
  const newManifests: ManifestFile[] = [];
  const writeNew = async (files: readonly DataFile[], content: 0 | 1): Promise<void> => {
    const bySpec = new Map<number, DataFile[]>();
    for (const f of files) (bySpec.get(f.specId) ?? bySpec.set(f.specId, []).get(f.specId)!).push(f);
    for (const [specId, list] of bySpec) {
      const path = nextManifestPath();
      const writer = new ManifestWriter(io, path, { formatVersion: v, spec: specById(base, specId), schema, snapshotId, content });
      // Delete files always take the commit's sequence number.
      for (const f of list) writer.add(f, content === 0 ? (seqOf.get(f) ?? changes.dataSequenceNumber) : undefined);
      newManifests.push(await writer.close());
      written.push(path);
    }
  };
  await writeNew(addedData, 0);
  await writeNew(addedDeletes, 1);

  const carried: ManifestFile[] = [];
  let rewrittenCount = 0;
  const emptied = new Map<string, ManifestWriter>();
  const rewriterOf = (m: ManifestFile): ManifestWriter =>
    new ManifestWriter(io, nextManifestPath(), {
      formatVersion: v, spec: specById(base, m.partitionSpecId), schema, snapshotId, content: m.content,
    });
  if (parent?.manifestList !== undefined) {
    for (const manifest of await readManifestList(io, parent.manifestList, v)) {
      // A manifest without a live entry holds nothing to remove (ManifestFilterManager).
      if (toRemove.size === 0 || !keepsManifest(manifest, snapshotId)) {
        carried.push(manifest);
        continue;
      }
      const entries: ManifestEntry[] = [];
      let hits = 0;
      for await (const e of readManifest(io, manifest, specs, schema)) {
        if (e.status === 2) continue;
        entries.push(e);
        if (matches(e.dataFile) !== undefined) hits++;
      }
      if (hits === 0) {
        carried.push(manifest);
        continue;
      }
      const live = entries.filter((e) => matches(e.dataFile) === undefined);
      const gone = entries.filter((e) => matches(e.dataFile) !== undefined);
      for (const e of gone) found.add(matches(e.dataFile)!);
      removed.push(...gone);
      rewrittenCount++;
      if (live.length === 0) {
        // Java writes one DELETED-only manifest per emptied manifest; one per spec and content
        // records the same entries in far fewer files (the next commit drops it).
        const key = `${manifest.content}/${manifest.partitionSpecId}`;
        let writer = emptied.get(key);
        if (!writer) {
          writer = rewriterOf(manifest);
          emptied.set(key, writer);
        }
        for (const e of gone) writer.delete(e);
        continue;
      }
      const writer = rewriterOf(manifest);
      for (const e of gone) writer.delete(e);
      for (const e of live) writer.existing(e);
      carried.push(await writer.close());
      written.push(writer.path);
    }
  }
  for (const writer of emptied.values()) {
    carried.push(await writer.close());
    written.push(writer.path);
  }
  const missing = [...toRemove].filter(([k]) => !found.has(k)).map(([, p]) => p);
  if (missing.length > 0) {
    throw new ValidationError(`Missing required files to delete: ${missing.join(', ')}`, { path: base.location });
  }

  // Java's MergingSnapshotProducer.apply: new manifests first, dead ones dropped, small ones
  // merged; data manifests, then delete manifests.
  const ctx: MergeContext = {
    io, specs, schema, formatVersion: v, snapshotId, settings: manifestMergeSettings(base), nextPath: nextManifestPath,
  };
  const listedManifests: ManifestFile[] = [];
  const replaced: ManifestFile[] = [];
  for (const content of [ManifestContent.Data, ManifestContent.Deletes]) {
    const kept = [...newManifests, ...carried].filter((m) => m.content === content && keepsManifest(m, snapshotId));
    const merged = await mergeManifests(ctx, kept);
    listedManifests.push(...merged.manifests);
    replaced.push(...merged.replaced);
    written.push(...merged.written);
  }
  // This attempt's manifests that a merge folded in are referenced by nothing.
  const listedPaths = new Set(listedManifests.map((m) => m.manifestPath));
  const unlisted = replaced.filter((m) => m.addedSnapshotId === snapshotId && !listedPaths.has(m.manifestPath)).map((m) => m.manifestPath);
  if (unlisted.length > 0) {
    await io.deleteMany(unlisted);
    const gone = new Set(unlisted);
    written.splice(0, written.length, ...written.filter((p) => !gone.has(p)));
  }

  const operation =
    changes.operation ??
    (removed.length === 0 ? (addedDeletes.length > 0 ? Operation.Overwrite : Operation.Append) : addedData.length === 0 && addedDeletes.length === 0 ? Operation.Delete : Operation.Overwrite);
  const summary = snapshotSummary(operation, addedData, addedDeletes, removed, parent?.summary, {
    ...manifestCounts(listedManifests, snapshotId, rewrittenCount + replaced.filter((m) => m.addedSnapshotId !== snapshotId).length),
    ...changes.summary,
  });
  return snapshotOfManifests(io, base, {
    branch, snapshotId, commitUuid, manifests: listedManifests, summary, writtenFiles: written,
    ...(changes.nowMs !== undefined ? { nowMs: changes.nowMs } : {}),
  });
}

export interface ManifestsSnapshot {
  readonly branch: string;
  readonly snapshotId: bigint;
  /** Names the manifest list, like this commit's manifests. */
  readonly commitUuid: string;
  /** Every manifest of the snapshot, in list order. */
  readonly manifests: readonly ManifestFile[];
  /** The whole summary, `operation` included. */
  readonly summary: Readonly<Record<string, string>>;
  /** Manifests this attempt already wrote. */
  readonly writtenFiles: readonly string[];
  readonly nowMs?: number;
}

/**
 * Writes the manifest list of the next snapshot of `base` on `branch` from manifests already
 * written, and returns the updates that add it (produceSnapshot's last step; rewrite-manifests
 * lists manifests of its own).
 */
export async function snapshotOfManifests(io: FileIO, base: TableMetadata, next: ManifestsSnapshot): Promise<ProducedSnapshot> {
  const { branch, snapshotId } = next;
  const parent = snapshotForRef(base, branch);
  const v = base.formatVersion;
  const sequenceNumber = v >= 2 ? base.lastSequenceNumber + 1n : 0n;
  const manifestListPath = newMetadataLocation(base, `snap-${snapshotId}-1-${next.commitUuid}.avro`);
  const listed = await writeManifestList(
    io,
    manifestListPath,
    {
      formatVersion: v,
      snapshotId,
      ...(parent ? { parentSnapshotId: parent.snapshotId } : {}),
      sequenceNumber,
      ...(v >= 3 ? { firstRowId: base.nextRowId ?? 0n } : {}),
    },
    next.manifests,
  );
  const snapshot: Snapshot = {
    snapshotId,
    ...(parent ? { parentSnapshotId: parent.snapshotId } : {}),
    sequenceNumber,
    timestampMs: Math.max(next.nowMs ?? Date.now(), base.lastUpdatedMs + 1),
    manifestList: manifestListPath,
    summary: next.summary,
    schemaId: base.currentSchemaId,
    ...(v >= 3 ? { firstRowId: base.nextRowId ?? 0n, addedRows: listed.addedRows ?? 0n } : {}),
  };
  return {
    snapshot,
    updates: [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', refName: branch, snapshotId, type: 'branch', ...retentionOf(base, branch) },
    ],
    requirements: [{ type: 'assert-ref-snapshot-id', ref: branch, snapshotId: parent?.snapshotId ?? null }],
    writtenFiles: [...next.writtenFiles, manifestListPath],
  };
}

/** SnapshotProducer.buildManifestCountSummary. */
function manifestCounts(listed: readonly ManifestFile[], snapshotId: bigint, replaced: number): Record<string, string> {
  const created = listed.filter((m) => m.addedSnapshotId === snapshotId).length;
  return {
    'manifests-created': String(created),
    'manifests-kept': String(listed.length - created),
    'manifests-replaced': String(replaced),
  };
}

function retentionOf(base: TableMetadata, branch: string): Record<string, number> {
  const r = base.refs[branch];
  const out: Record<string, number> = {};
  if (r?.minSnapshotsToKeep !== undefined) out.minSnapshotsToKeep = r.minSnapshotsToKeep;
  if (r?.maxSnapshotAgeMs !== undefined) out.maxSnapshotAgeMs = r.maxSnapshotAgeMs;
  if (r?.maxRefAgeMs !== undefined) out.maxRefAgeMs = r.maxRefAgeMs;
  return out;
}

/** The standard snapshot summary fields (Java's SnapshotSummary), totals carried from the parent. */
function snapshotSummary(
  operation: Operation,
  addedData: readonly DataFile[],
  addedDeletes: readonly DataFile[],
  removed: readonly ManifestEntry[],
  parentSummary: Readonly<Record<string, string>> | undefined,
  extra: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const s: Record<string, bigint> = {};
  const inc = (k: string, n: bigint): void => {
    s[k] = (s[k] ?? 0n) + n;
  };
  const partitions = new Set<string>();
  const count = (f: DataFile, sign: 'added' | 'removed'): void => {
    partitions.add(partitionKey(f.specId, f.partition));
    const size = f.fileSizeInBytes;
    if (f.content === FileContent.Data) {
      inc(sign === 'added' ? 'added-data-files' : 'deleted-data-files', 1n);
      inc(sign === 'added' ? 'added-records' : 'deleted-records', f.recordCount);
    } else {
      inc(sign === 'added' ? 'added-delete-files' : 'removed-delete-files', 1n);
      if (isDeletionVector(f)) inc(sign === 'added' ? 'added-dvs' : 'removed-dvs', 1n);
      inc(
        f.content === FileContent.PositionDeletes
          ? sign === 'added' ? 'added-position-deletes' : 'removed-position-deletes'
          : sign === 'added' ? 'added-equality-deletes' : 'removed-equality-deletes',
        f.recordCount,
      );
    }
    inc(sign === 'added' ? 'added-files-size' : 'removed-files-size', size);
  };
  for (const f of addedData) count(f, 'added');
  for (const f of addedDeletes) count(f, 'added');
  for (const e of removed) count(e.dataFile, 'removed');
  const out: Record<string, string> = { operation };
  for (const [k, n] of Object.entries(s)) out[k] = n.toString();
  out['changed-partition-count'] = String(partitions.size);
  const total = (key: string, plus: string[], minus: string[]): void => {
    const prev = parentSummary?.[key];
    if (parentSummary !== undefined && prev === undefined) return;
    let n = BigInt(prev ?? '0');
    for (const k of plus) n += s[k] ?? 0n;
    for (const k of minus) n -= s[k] ?? 0n;
    out[key] = n.toString();
  };
  total('total-records', ['added-records'], ['deleted-records']);
  total('total-files-size', ['added-files-size'], ['removed-files-size']);
  total('total-data-files', ['added-data-files'], ['deleted-data-files']);
  total('total-delete-files', ['added-delete-files'], ['removed-delete-files']);
  total('total-position-deletes', ['added-position-deletes'], ['removed-position-deletes']);
  total('total-equality-deletes', ['added-equality-deletes'], ['removed-equality-deletes']);
  return { ...out, ...extra };
}
