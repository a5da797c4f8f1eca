/**
 * The merge of a group's small inputs with one GET each (lib/compaction/chunk-copy.ts): an input
 * the plan could not copy anyway (deletes apply to it, or it is under the copy floor) and small
 * enough is not footer-read by the plan: it is read whole here, in group order through a read
 * window, its footer parsed from those bytes (`open`), and merged into the outputs of the first
 * bucket (partition and mergeKey, merge-layout.ts) as it arrives, where the plan's footer read and
 * the merge's row-group read were two GETs. Inputs the plan merged (footers read) go through the
 * same window by row group, as writeMergedFile reads them.
 *
 * Optimistic: an input whose footer shows its partition cannot be merged (`open` says revoke)
 * stops that partition: its inputs not yet read are not read (the caller reads their footers, as
 * the plan would have, for their reasons and the decoder), and its outputs written so far are
 * deleted, so that the partition is decoded whole as chunk-copy.ts's partition rules ask.
 *
 * One bucket is written as its inputs arrive (the first the group's merged inputs open: a planner's
 * group is one partition, and its files one writer's as a rule); an input of another bucket is
 * handed back (`deferred`), its bytes kept within `heldBytes`, else read again when merged.
 *
 * Memory: the window (`window.bytes` of whole inputs or row groups), the output row group being
 * built, the bytes kept for deferred inputs, and each opened input's footer.
 */
import type { FileIO } from '../io/file-io.js';
import type { FileScanTask } from '../iceberg/scan-planning.js';
import { readWindow, type ReadWindowOptions } from '../io/read-window.js';
import { InvalidFileError } from '../errors.js';
import { chunkSpans, partBytes, readChunks, type ChunkSpan, type HeldBytes } from '../parquet/chunk-copy.js';
import type { MergedFile, MergeItem } from '../parquet/row-group-merge.js';
import { typedField, typedFields, typedItems } from '../parquet/thrift.js';
import type { MergeInput, MergeLayout } from './merge-layout.js';

/** An input of the stream: merged by the plan (`input`: its footer read), else read whole here. */
export interface StreamInput {
  readonly task: FileScanTask;
  readonly input?: MergeInput;
}

/** What `open` makes of an input read whole: merged, or its partition is not (the caller recorded why). */
export type Opened = { readonly input: MergeInput } | { readonly revoke: true };

export interface MergeStreamOptions {
  readonly io: FileIO;
  readonly layout: MergeLayout;
  readonly partitionOf: (task: FileScanTask) => string;
  /** Classifies an input read whole (all of its bytes): its footer, problems and deletes. */
  readonly open: (task: FileScanTask, bytes: Uint8Array) => Promise<Opened>;
  /** Writes one output of the streamed bucket from its source row groups (`task`: the input of the first). */
  readonly write: (task: FileScanTask, items: AsyncIterable<MergeItem>) => Promise<MergedFile>;
  readonly window: ReadWindowOptions;
  /** Bytes of inputs already read, by path (the plan's footer reads of small files); deferred inputs' whole bytes join them. */
  readonly held: Map<string, HeldBytes>;
  /** Most bytes `held` may hold. */
  readonly heldBytes: number;
}

export interface MergeStreamResult {
  /** Inputs whose row groups went into the streamed bucket (all of them: a row group wholly deleted writes nothing). */
  readonly placed: ReadonlySet<FileScanTask>;
  /** Inputs read whole and opened, merged into no output yet: another bucket's. */
  readonly deferred: ReadonlyMap<FileScanTask, MergeInput>;
  /** Inputs to read whole that were not read: their partition was revoked first. */
  readonly skipped: readonly FileScanTask[];
  /** Partitions an input's footer revoked. */
  readonly revoked: ReadonlySet<string>;
  /** Outputs written and deleted again (their partition revoked). */
  readonly removed: readonly string[];
}

type Item = { readonly task: FileScanTask; readonly input?: MergeInput; readonly rowGroup?: number; readonly size: number };
type Got = { readonly skip: true } | { readonly input: MergeInput; readonly bytes: Uint8Array } | { readonly chunks: Uint8Array[] };
/** A placed row group with its chunks, or the end of the streamed bucket's open output (its partition revoked). */
type Next = (MergeItem & { readonly task: FileScanTask; readonly newFile: boolean }) | { readonly end: true };

/** Merges `inputs` (group order) as described above; outputs of revoked partitions are deleted before it returns. */
export async function streamMerges(inputs: readonly StreamInput[], options: MergeStreamOptions): Promise<MergeStreamResult> {
  const { io, layout, partitionOf } = options;
  const revoked = new Set<string>();
  const placed = new Set<FileScanTask>();
  const deferred = new Map<FileScanTask, MergeInput>();
  const opened = new Set<FileScanTask>();
  let heldBytes = [...options.held.values()].reduce((n, h) => n + h.bytes.length, 0);
  // The streamed bucket, once an input opens it; CLOSED once its partition is revoked.
  const CLOSED = '\u0001closed';
  let active: string | undefined;
  let activePartition: string | undefined;
  const keys = new Map<MergeInput, string>();
  const keyOf = (input: MergeInput): string => {
    let k = keys.get(input);
    if (k === undefined) keys.set(input, (k = layout.key(input)));
    return k;
  };

  const items: Item[] = inputs.flatMap(({ task, input }): Item[] => {
    if (!input) return [{ task, size: Number(task.dataFile.fileSizeInBytes) }];
    // Row groups wholly deleted are neither placed nor read.
    return input.source.rowGroups
      .filter((rg) => !(input.deleted?.[rg.index] && input.deleted[rg.index]!.length >= rg.numRows))
      .map((rg) => ({ task, input, rowGroup: rg.index, size: partBytes({ source: input.source, rowGroup: rg.index }) }));
  });
  const spansOf = (input: MergeInput, rowGroup: number): ChunkSpan[] => chunkSpans(typedFields(typedItems(typedField(input.source.typed, 4))[rowGroup]));

  const read = async (item: Item): Promise<Got> => {
    if (revoked.has(partitionOf(item.task))) return { skip: true };
    const path = item.task.dataFile.filePath;
    if (item.input) {
      // Another bucket's row group is read when that bucket is merged.
      if (active !== undefined && keyOf(item.input) !== active) return { skip: true };
      return { chunks: await readChunks(io.newInputFile(path, Number(item.task.dataFile.fileSizeInBytes)), spansOf(item.input, item.rowGroup!), options.held.get(path)) };
    }
    const bytes = await io.newInputFile(path, item.size).read(0, item.size);
    if (bytes.length !== item.size) throw new InvalidFileError(`short read: asked for ${item.size} bytes, got ${bytes.length}`, { path });
    opened.add(item.task);
    const got = await options.open(item.task, bytes);
    if ('revoke' in got) {
      revoked.add(partitionOf(item.task));
      return { skip: true };
    }
    return { input: got.input, bytes };
  };

  async function* placements(): AsyncGenerator<Next> {
    let lastPlaced: FileScanTask | undefined;
    for await (const { item, value } of readWindow(items, (x) => x.size, read, options.window)) {
      if (activePartition !== undefined && active !== CLOSED && revoked.has(activePartition)) {
        active = CLOSED;
        yield { end: true };
      }
      if ('skip' in value || revoked.has(partitionOf(item.task))) continue;
      const input = item.input ?? ('input' in value ? value.input : undefined)!;
      const key = keyOf(input);
      if (active === undefined) {
        active = key;
        activePartition = partitionOf(item.task);
      }
      if (key !== active) {
        // Read whole for another bucket: kept for its merge within the budget, else read again then.
        if ('bytes' in value) {
          deferred.set(item.task, input);
          if (heldBytes + value.bytes.length <= options.heldBytes) {
            options.held.set(item.task.dataFile.filePath, { start: 0, bytes: value.bytes });
            heldBytes += value.bytes.length;
          }
        }
        continue;
      }
      if (item.task !== lastPlaced) placed.add((lastPlaced = item.task));
      const held: HeldBytes | undefined = 'bytes' in value ? { start: 0, bytes: value.bytes } : undefined;
      const indexes = item.rowGroup !== undefined ? [item.rowGroup] : input.source.rowGroups.map((rg) => rg.index);
      for (const index of indexes) {
        const at = layout.place(input, index, key);
        if (!at) continue;
        const path = item.task.dataFile.filePath;
        const bytes = 'chunks' in value ? value.chunks : await readChunks(io.newInputFile(path, item.size), spansOf(input, index), held);
        yield { task: item.task, part: at.part, bytes, newRowGroup: at.newRowGroup, newFile: at.newFile };
      }
    }
    if (activePartition !== undefined && active !== CLOSED && revoked.has(activePartition)) yield { end: true };
  }

  // One output at a time: each takes placed row groups until one starts the next file.
  const written: { partition: string; path: string }[] = [];
  const source = placements();
  let next = await source.next();
  while (!next.done) {
    const head = next.value;
    if ('end' in head) {
      next = await source.next();
      continue;
    }
    // Every row group placed belongs to the streamed bucket, of one partition.
    const partition = activePartition!;
    const opening: MergeItem = head;
    async function* file(): AsyncGenerator<MergeItem> {
      yield opening;
      for (;;) {
        next = await source.next();
        if (next.done || 'end' in next.value || next.value.newFile) return;
        yield next.value;
      }
    }
    written.push({ partition, path: (await options.write(head.task, file())).path });
  }
  const removed = written.filter((w) => revoked.has(w.partition)).map((w) => w.path);
  if (removed.length > 0) await io.deleteMany(removed);
  const skipped = inputs.filter((i) => !i.input && !opened.has(i.task)).map((i) => i.task);
  return { placed, deferred, skipped, revoked, removed };
}
