/**
 * Where a group's merged row groups go (lib/compaction/chunk-copy.ts): per output partition and
 * mergeKey (one output "bucket"), source row groups in input order joined into output row groups of
 * up to `write.parquet.row-group-size-bytes` (uncompressed, as their footers count them), a new file
 * once the next row group would pass the target size. Decided one source row group at a time, so
 * that the inputs read whole as they are merged (merge-stream.ts) land where the plan's would.
 */
import { partitionKey } from '../iceberg/partition.js';
import type { FileScanTask } from '../iceberg/scan-planning.js';
import type { CopySource } from '../parquet/chunk-copy.js';
import { mergeKey, type MergePart, type PageKeyProbe } from '../parquet/row-group-merge.js';

/** A merged input: its footer and, per row group, the rows deleted from it (positions in the row group). */
export interface MergeInput {
  readonly task: FileScanTask;
  readonly source: CopySource;
  readonly deleted?: readonly (Int32Array | undefined)[];
  /** Its equality deletes, probed from its own pages as it is merged (pageKeyProbes); `deleted` then holds its position deletes alone. */
  readonly keys?: readonly PageKeyProbe[];
}

/** A source row group placed: its part, and whether it starts an output file or row group. */
export interface Placement {
  readonly part: MergePart;
  /** The first of an output file (of its bucket). */
  readonly newFile: boolean;
  /** The first of an output row group (the first of a file is). */
  readonly newRowGroup: boolean;
}

interface Bucket {
  started: boolean;
  /** Compressed bytes of the open file (live rows' share). */
  size: number;
  /** Uncompressed bytes of the open row group (live rows' share). */
  groupBytes: number;
}

export class MergeLayout {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly specId: number,
    private readonly targetFileBytes: number,
    private readonly rowGroupBytes: number,
  ) {}

  /** The bucket of an input's outputs: its partition and mergeKey. */
  key(input: MergeInput): string {
    return `${partitionKey(this.specId, input.task.dataFile.partition)}\u0000${mergeKey(input.source)}`;
  }

  /** Where row group `index` of `input` (of bucket `key`) goes; undefined when its rows are all deleted. */
  place(input: MergeInput, index: number, key: string): Placement | undefined {
    const { source, deleted, keys } = input;
    const meta = source.footer.rowGroups[index];
    const rows = source.rowGroups[index].numRows;
    const dropped = deleted?.[index];
    // A row group whose rows are all deleted leaves nothing to merge.
    if (dropped && dropped.length >= rows) return undefined;
    const live = dropped ? (rows - dropped.length) / rows : 1;
    const bytes = source.rowGroups[index].bytes * live;
    // Uncompressed bytes as the footer counts them; a writer that leaves them out, the compressed.
    const uncompressed = (meta.totalByteSize > 0 ? meta.totalByteSize : source.rowGroups[index].bytes) * live;
    let b = this.buckets.get(key);
    if (!b) this.buckets.set(key, (b = { started: false, size: 0, groupBytes: 0 }));
    const newFile = !b.started || (b.size > 0 && b.size + bytes > this.targetFileBytes);
    if (newFile) {
      b.started = true;
      b.size = 0;
      b.groupBytes = 0;
    }
    const newRowGroup = newFile || (b.groupBytes > 0 && b.groupBytes + uncompressed > this.rowGroupBytes);
    if (newRowGroup) b.groupBytes = 0;
    b.groupBytes += uncompressed;
    b.size += bytes;
    return { part: { source, rowGroup: index, ...(dropped ? { deleted: dropped } : {}), ...(keys ? { keys } : {}) }, newFile, newRowGroup };
  }
}
