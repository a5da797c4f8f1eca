/**
 * Which manifests a new snapshot lists, as Java's MergingSnapshotProducer.apply and
 * ManifestMergeManager decide: manifests without a live entry are dropped unless this commit
 * wrote them (its DELETED entries are recorded only in the snapshot that deleted the files),
 * and small manifests are merged per partition spec, by the table's
 * `commit.manifest-merge.enabled`, `commit.manifest.min-count-to-merge` and
 * `commit.manifest.target-size-bytes`.
 */
import type { FileIO } from '../io/file-io.js';
import { ManifestWriter, readManifest, ManifestEntryStatus } from './manifest.js';
import type { ManifestFile } from './manifest-list.js';
import type { PartitionSpec } from './partition.js';
import type { Schema } from './schema.js';
import { intProperty, type TableMetadata } from './table-metadata.js';

export const MANIFEST_MERGE_ENABLED = 'commit.manifest-merge.enabled';
export const MANIFEST_MIN_MERGE_COUNT = 'commit.manifest.min-count-to-merge';
export const MANIFEST_TARGET_SIZE_BYTES = 'commit.manifest.target-size-bytes';

export interface ManifestMergeSettings {
  readonly enabled: boolean;
  readonly minCountToMerge: number;
  readonly targetSizeBytes: number;
}

/** The table's merge settings, with Java's defaults (true, 100, 8 MiB). */
export function manifestMergeSettings(metadata: TableMetadata): ManifestMergeSettings {
  const enabled = metadata.properties[MANIFEST_MERGE_ENABLED];
  return {
    enabled: enabled === undefined ? true : enabled.trim().toLowerCase() === 'true',
    minCountToMerge: intProperty(metadata, MANIFEST_MIN_MERGE_COUNT, 100),
    targetSizeBytes: intProperty(metadata, MANIFEST_TARGET_SIZE_BYTES, 8 * 1024 * 1024),
  };
}

/** Java's shouldKeep: a live entry, or written by this commit. Null counts (v1 lists) mean "some". */
export function keepsManifest(m: ManifestFile, snapshotId: bigint): boolean {
  const some = (n: number | null): boolean => n === null || n > 0;
  return some(m.addedFilesCount) || some(m.existingFilesCount) || m.addedSnapshotId === snapshotId;
}

/**
 * BinPacking.ListPacker.packEnd with a look-back of 1: consecutive runs of at most `target`
 * weight, packed from the end so that the under-filled run is the first (merged next time).
 */
export function packEnd<T>(items: readonly T[], weight: (item: T) => number, target: number): T[][] {
  const bins: T[][] = [];
  let bin: T[] = [];
  let used = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    const w = weight(items[i]);
    if (bin.length > 0 && used + w > target) {
      bins.push(bin.reverse());
      bin = [];
      used = 0;
    }
    bin.push(items[i]);
    used += w;
  }
  if (bin.length > 0) bins.push(bin.reverse());
  return bins.reverse();
}

export interface MergeContext {
  readonly io: FileIO;
  readonly specs: ReadonlyMap<number, PartitionSpec>;
  readonly schema: Schema;
  readonly formatVersion: 1 | 2 | 3;
  readonly snapshotId: bigint;
  readonly settings: ManifestMergeSettings;
  /** A new manifest path for this commit. */
  readonly nextPath: () => string;
}

export interface MergedManifests {
  readonly manifests: ManifestFile[];
  /** Manifests this call wrote. */
  readonly written: string[];
  /** Manifests folded into a merged one (any writer). */
  readonly replaced: ManifestFile[];
}

/**
 * ManifestMergeManager.mergeManifests over manifests of one content, the first being this
 * commit's new one when it has any: groups by spec (highest spec id first), packs each group,
 * and rewrites a bin of several manifests into one, except the bin holding the first manifest
 * while it has fewer than min-count-to-merge manifests.
 */
export async function mergeManifests(ctx: MergeContext, manifests: readonly ManifestFile[]): Promise<MergedManifests> {
  const written: string[] = [];
  const replaced: ManifestFile[] = [];
  if (!ctx.settings.enabled || manifests.length === 0) return { manifests: [...manifests], written, replaced };
  const first = manifests[0];
  const bySpec = new Map<number, ManifestFile[]>();
  for (const m of manifests) (bySpec.get(m.partitionSpecId) ?? bySpec.set(m.partitionSpecId, []).get(m.partitionSpecId)!).push(m);
  const out: ManifestFile[] = [];
  for (const specId of [...bySpec.keys()].sort((a, b) => b - a)) {
    for (const bin of packEnd(bySpec.get(specId)!, (m) => Number(m.manifestLength), ctx.settings.targetSizeBytes)) {
      if (bin.length === 1 || (bin.includes(first) && bin.length < ctx.settings.minCountToMerge)) {
        out.push(...bin);
        continue;
      }
      out.push(await mergeBin(ctx, specId, bin, written));
      replaced.push(...bin);
    }
  }
  return { manifests: out, written, replaced };
}

async function mergeBin(ctx: MergeContext, specId: number, bin: readonly ManifestFile[], written: string[]): Promise<ManifestFile> {
  const path = ctx.nextPath();
  const writer = new ManifestWriter(ctx.io, path, {
    formatVersion: ctx.formatVersion,
    spec: ctx.specs.get(specId)!,
    schema: ctx.schema,
    snapshotId: ctx.snapshotId,
    content: bin[0].content,
  });
  for (const m of bin) {
    for await (const e of readManifest(ctx.io, m, ctx.specs, ctx.schema)) {
      if (e.status === ManifestEntryStatus.Deleted) {
        // Only this snapshot's deletes are recorded; older ones are history.
        if (e.snapshotId === ctx.snapshotId) writer.delete(e);
      } else if (e.status === ManifestEntryStatus.Added && e.snapshotId === ctx.snapshotId) {
        writer.add(e.dataFile, e.sequenceNumber);
      } else {
        writer.existing(e);
      }
    }
  }
  const merged = await writer.close();
  written.push(path);
  return merged;
}
