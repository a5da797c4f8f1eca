/**
 * Rewriting a snapshot's manifests clustered by partition, as Spark's `rewrite_manifests`
 * (RewriteManifestsSparkAction) does: per content and partition spec, the live entries are
 * sorted by partition and written as EXISTING entries (snapshot ids and sequence numbers kept)
 * into ceil(bytes / `commit.manifest.target-size-bytes`) manifests, each holding whole
 * partitions, and committed as a `replace` snapshot that changes no file. A streaming table's
 * one-manifest-per-commit pile becomes a few manifests a planner can skip by partition.
 * Unlike Spark (current spec only), every spec is rewritten.
 */
import { randomUUID } from 'node:crypto';
import { commitTable, type Table } from '../catalog/table.js';
import { mayHaveCommitted } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { forEachLimit } from '../io/map-limit.js';
import { compareValues } from '../iceberg/bounds.js';
import { newMetadataLocation } from '../iceberg/locations.js';
import { ManifestEntryStatus, ManifestWriter, readManifest, type ManifestEntry } from '../iceberg/manifest.js';
import { ManifestContent, readManifestList, type ManifestFile } from '../iceberg/manifest-list.js';
import { manifestMergeSettings } from '../iceberg/manifest-merge.js';
import { partitionKey, partitionType } from '../iceberg/partition.js';
import { newSnapshotId, snapshotOfManifests } from '../iceberg/snapshot-producer.js';
import { MAIN_BRANCH, Operation } from '../iceberg/snapshot.js';
import { currentSchema, currentSnapshot, specsById, type TableMetadata } from '../iceberg/table-metadata.js';
import { isPrimitive, type NestedField } from '../iceberg/types.js';
import type { Row } from '../iceberg/values.js';

export interface RewriteManifestsOptions {
  /** Plan only: read the manifests, write nothing. */
  readonly dryRun?: boolean;
  /** Defaults to the table's `commit.manifest.target-size-bytes` (8 MiB). */
  readonly targetSizeBytes?: number;
  /** Manifests read at once. @default 8 */
  readonly concurrency?: number;
  readonly retries?: number;
}

/** One content and spec of the snapshot. */
export interface ManifestGroupRewrite {
  readonly content: 'data' | 'deletes';
  readonly specId: number;
  readonly manifestsIn: number;
  /** Equal to manifestsIn (and nothing written) when the group is already one clean manifest. */
  readonly manifestsOut: number;
  readonly liveEntries: number;
  readonly partitions: number;
}

export interface RewriteManifestsResult {
  readonly dryRun: boolean;
  /** The new snapshot; null for a dry run or when nothing needed rewriting. */
  readonly snapshotId: string | null;
  readonly manifestsBefore: number;
  readonly manifestsAfter: number;
  readonly manifestsReplaced: number;
  readonly manifestsWritten: number;
  readonly groups: readonly ManifestGroupRewrite[];
  readonly attempts: number;
}

interface Group {
  readonly content: ManifestContent;
  readonly specId: number;
  readonly manifests: ManifestFile[];
}

/** Rewrites (or, with dryRun, plans) the current snapshot's manifests; retried on conflicts. */
export async function rewriteManifests(table: Table, options: RewriteManifestsOptions = {}): Promise<RewriteManifestsResult> {
  if (options.dryRun) {
    const p = await plan(table.io, table.metadata, options, false);
    return { ...p.result, dryRun: true, snapshotId: null, attempts: 0 };
  }
  const attempts: string[][] = [];
  let last: Planned | undefined;
  try {
    const r = await commitTable(
      table,
      async (base) => {
        last = await plan(base.io, base.metadata, options, true);
        attempts.push(last.written);
        if (last.result.manifestsReplaced === 0) return undefined;
        const produced = await snapshotOfManifests(base.io, base.metadata, {
          branch: MAIN_BRANCH,
          snapshotId: last.snapshotId,
          commitUuid: last.commitUuid,
          manifests: last.manifests,
          summary: last.summary,
          writtenFiles: last.written,
        });
        attempts[attempts.length - 1] = [...produced.writtenFiles];
        return produced;
      },
      { ...(options.retries !== undefined ? { retries: options.retries } : {}) },
    );
    // Attempts before the winning one left manifests nobody references.
    await table.io.deleteMany(attempts.slice(0, -1).flat()).catch(() => undefined);
    return { ...last!.result, dryRun: false, snapshotId: r.committed ? last!.snapshotId.toString() : null, attempts: r.attempts };
  } catch (e) {
    // A commit that may have applied references them.
    if (!mayHaveCommitted(e)) await table.io.deleteMany(attempts.flat()).catch(() => undefined);
    throw e;
  }
}

interface Planned {
  readonly result: Omit<RewriteManifestsResult, 'dryRun' | 'snapshotId' | 'attempts'>;
  readonly manifests: ManifestFile[];
  readonly written: string[];
  readonly snapshotId: bigint;
  readonly commitUuid: string;
  readonly summary: Record<string, string>;
}

async function plan(io: FileIO, metadata: TableMetadata, options: RewriteManifestsOptions, write: boolean): Promise<Planned> {
  const snapshot = currentSnapshot(metadata);
  const snapshotId = newSnapshotId();
  const commitUuid = randomUUID();
  const listed = snapshot?.manifestList ? await readManifestList(io, snapshot.manifestList, metadata.formatVersion) : [];
  const target = options.targetSizeBytes ?? manifestMergeSettings(metadata).targetSizeBytes;
  const specs = specsById(metadata);
  const schema = currentSchema(metadata);

  const groups = new Map<string, Group>();
  for (const m of listed) {
    const k = `${m.content}/${m.partitionSpecId}`;
    (groups.get(k) ?? groups.set(k, { content: m.content, specId: m.partitionSpecId, manifests: [] }).get(k)!).manifests.push(m);
  }
  const out: ManifestFile[] = [];
  const written: string[] = [];
  const reports: ManifestGroupRewrite[] = [];
  let replaced = 0;
  let created = 0;
  let entriesProcessed = 0;
  // Data manifests first, as Java lists them; specs in ascending id.
  const ordered = [...groups.values()].sort((a, b) => a.content - b.content || a.specId - b.specId);
  for (const g of ordered) {
    const clean = g.manifests.length === 1 && g.manifests[0].deletedFilesCount === 0 && Number(g.manifests[0].manifestLength) <= target;
    if (clean) {
      out.push(...g.manifests);
      reports.push(report(g, 1, Number(g.manifests[0].addedFilesCount ?? 0) + Number(g.manifests[0].existingFilesCount ?? 0), undefined));
      continue;
    }
    // Entries per partition, each manifest read whole and in parallel.
    const byPartition = new Map<string, ManifestEntry[]>();
    let live = 0;
    await forEachLimit(g.manifests, options.concurrency ?? 8, async (m) => {
      for await (const e of readManifest(io, m, specs, schema)) {
        if (e.status === ManifestEntryStatus.Deleted) continue;
        const k = partitionKey(g.specId, e.dataFile.partition);
        (byPartition.get(k) ?? byPartition.set(k, []).get(k)!).push(e);
        live++;
      }
    });
    entriesProcessed += live;
    const spec = specs.get(g.specId)!;
    const ptype = partitionType(spec, schema);
    const partitions = [...byPartition.values()].sort((a, b) => comparePartitions(ptype.fields, a[0].dataFile.partition, b[0].dataFile.partition));
    const bytes = g.manifests.reduce((s, m) => s + Number(m.manifestLength), 0);
    const count = live === 0 ? 0 : Math.max(1, Math.min(partitions.length, Math.ceil(bytes / target)));
    const chunks = splitByPartition(partitions, live, count);
    replaced += g.manifests.length;
    created += chunks.length;
    reports.push(report(g, chunks.length, live, partitions.length));
    if (!write) continue;
    for (const chunk of chunks) {
      const path = newMetadataLocation(metadata, `${commitUuid}-m${written.length}.avro`);
      const writer = new ManifestWriter(io, path, {
        formatVersion: metadata.formatVersion, spec, schema, snapshotId, content: g.content,
      });
      for (const entries of chunk) for (const e of entries) writer.existing(e);
      out.push(await writer.close());
      written.push(path);
    }
  }
  const summary: Record<string, string> = { operation: Operation.Replace };
  // Totals do not change: copied from the parent, as SnapshotProducer carries them.
  for (const [k, v] of Object.entries(snapshot?.summary ?? {})) if (k.startsWith('total-')) summary[k] = v;
  Object.assign(summary, {
    'manifests-created': String(created),
    'manifests-kept': String(listed.length - replaced),
    'manifests-replaced': String(replaced),
    'entries-processed': String(entriesProcessed),
  });
  return {
    result: {
      manifestsBefore: listed.length,
      manifestsAfter: listed.length - replaced + created,
      manifestsReplaced: replaced,
      manifestsWritten: created,
      groups: reports,
    },
    manifests: out,
    written,
    snapshotId,
    commitUuid,
    summary,
  };
}

function report(g: Group, out: number, liveEntries: number, partitions: number | undefined): ManifestGroupRewrite {
  return {
    content: g.content === ManifestContent.Data ? 'data' : 'deletes',
    specId: g.specId,
    manifestsIn: g.manifests.length,
    manifestsOut: out,
    liveEntries,
    partitions: partitions ?? 0,
  };
}

/** Partition order: field by field, nulls first (Spark's range partitioning sorts ascending, nulls first). */
function comparePartitions(fields: readonly NestedField[], a: Row, b: Row): number {
  for (const f of fields) {
    const x = a[f.name] ?? null;
    const y = b[f.name] ?? null;
    if (x === null || y === null) {
      if (x !== y) return x === null ? -1 : 1;
      continue;
    }
    const c = isPrimitive(f.type) ? compareValues(f.type, x, y) : 0;
    if (c !== 0) return c;
  }
  return 0;
}

/** `count` runs of whole partitions with about `total / count` entries each. */
function splitByPartition<T>(partitions: readonly T[][], total: number, count: number): T[][][] {
  if (count <= 1) return partitions.length === 0 ? [] : [[...partitions]];
  const chunks: T[][][] = [];
  let chunk: T[][] = [];
  let done = 0;
  for (const p of partitions) {
    chunk.push(p);
    done += p.length;
    if (done >= ((chunks.length + 1) * total) / count && chunks.length < count - 1) {
      chunks.push(chunk);
      chunk = [];
    }
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
