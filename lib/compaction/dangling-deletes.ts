/**
 * Dangling delete files: live delete files that no live data file needs any more, because the
 * data files they applied to were rewritten or removed (Iceberg's `remove-dangling-deletes`,
 * Java RemoveDanglingDeletesSparkAction). Dropping one changes no row a reader sees.
 *
 * The rule is the scan's own: a delete file is needed when the delete index applies it to a live
 * data file. That covers Java's rule (a position delete or DV reaches a live file of its
 * partition and spec whose data sequence number is <= its own, and a file-scoped one only its
 * referenced file; an equality delete one whose data sequence number is < its own) and is exact
 * where Java is coarse: a position delete that a newer DV supersedes, or whose file-path bounds
 * name no live file, is dangling too.
 */
import { deleteFileKey, deleteFileReadBytes } from '../iceberg/delete-file.js';
import { DeleteFileIndex, type DeleteFileRef } from '../iceberg/delete-index.js';
import type { DataFile } from '../iceberg/manifest.js';
import type { PartitionSpec } from '../iceberg/partition.js';
import type { ScanPlan } from '../iceberg/scan-planning.js';
import { specsById, type TableMetadata } from '../iceberg/table-metadata.js';

/** A data file live after a change, and whether existing position deletes can name it (new paths cannot). */
export interface LiveDataFile {
  readonly file: DataFile;
  readonly dataSequenceNumber: bigint;
  readonly positional: boolean;
}

/** The deletes of `deletes` that the delete index applies to none of `live`. */
export function deletesNoFileNeeds(
  specs: ReadonlyMap<number, PartitionSpec>,
  deletes: readonly DeleteFileRef[],
  live: Iterable<LiveDataFile>,
): DeleteFileRef[] {
  const index = new DeleteFileIndex(specs);
  for (const d of deletes) {
    index.add({ status: 1, snapshotId: null, sequenceNumber: d.dataSequenceNumber, fileSequenceNumber: null, dataFile: d.file });
  }
  const needed = new Set<string>();
  for (const { file, dataSequenceNumber, positional } of live) {
    const a = index.forDataFile(file, dataSequenceNumber);
    if (positional) {
      if (a.deletionVector) needed.add(deleteFileKey(a.deletionVector.file));
      for (const d of a.positionDeletes) needed.add(deleteFileKey(d.file));
    }
    for (const d of a.equalityDeletes) needed.add(deleteFileKey(d.file));
  }
  return deletes.filter((d) => !needed.has(deleteFileKey(d.file)));
}

/** The dangling delete files of a scan of the current snapshot, in the scan's order. */
export function danglingDeletes(metadata: TableMetadata, scan: ScanPlan): DeleteFileRef[] {
  return deletesNoFileNeeds(
    specsById(metadata),
    scan.deleteRefs,
    scan.tasks.map((t) => ({ file: t.dataFile, dataSequenceNumber: t.dataSequenceNumber, positional: true })),
  );
}

/** The deletes of `deletes` whose keys are not in `needed` (the keys the scan applied to a live data file). */
export function unneededDeletes(deletes: readonly DeleteFileRef[], needed: ReadonlySet<string>): DeleteFileRef[] {
  return deletes.filter((d) => !needed.has(deleteFileKey(d.file)));
}

/** Files and the bytes a reader would fetch for them (a DV by its blob). */
export function danglingFigures(dangling: readonly { readonly file: DataFile }[]): { files: number; bytes: number } {
  return { files: dangling.length, bytes: dangling.reduce((n, d) => n + Number(deleteFileReadBytes(d.file)), 0) };
}
