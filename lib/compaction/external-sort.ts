/**
 * Sorting a group's rows in a table sort order with bounded memory (DESIGN.md invariant 6):
 * rows are buffered up to a byte budget, each full buffer is sorted and spilled to a local
 * temporary Parquet file (a "run"), and the runs are merged with a heap, one small batch of
 * each in memory at a time. A group that fits in one buffer never touches the disk.
 *
 * Order (spec "Sort Orders"): each sort field's transform applied to its source column,
 * ascending or descending, nulls first or last; NaN sorts above every other float. Ties keep
 * the order rows arrived in (a stable sort, and runs merged in the order they were made).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { LocalFileIO } from '../io/local.js';
import { compareValues } from '../iceberg/bounds.js';
import { METRICS_MODE_NONE } from '../iceberg/metrics-config.js';
import { indexById } from '../iceberg/schema.js';
import type { SortOrder } from '../iceberg/sort-order.js';
import { applyTransform, transformResultType } from '../iceberg/transform.js';
import { isPrimitive, type PrimitiveType, type StructType } from '../iceberg/types.js';
import type { IcebergValue, Row } from '../iceberg/values.js';
import { ParquetWriter } from '../parquet/writer.js';
import { readRows } from '../table/data-reader.js';

export type SortKey = readonly IcebergValue[];

export interface SortKeyFunctions {
  /** The row's sort key: each sort field's transformed value. */
  readonly key: (row: Row) => SortKey;
  readonly compare: (a: SortKey, b: SortKey) => number;
}

/** Key extraction and comparison for a sort order over rows of `schema`. */
export function sortKeyFunctions(order: SortOrder, schema: StructType): SortKeyFunctions {
  const index = indexById(schema);
  const fields = order.fields.map((f) => {
    const source = index.get(f.sourceId);
    if (!source || !isPrimitive(source.field.type)) {
      throw new ValidationError(`sort order ${order.orderId}: source column ${f.sourceId} is not a primitive column of the schema`);
    }
    const sourceType = source.field.type as PrimitiveType;
    return {
      path: source.path.split('.'),
      sourceType,
      resultType: transformResultType(f.transform, sourceType),
      transform: f.transform,
      sign: f.direction === 'desc' ? -1 : 1,
      nullsFirst: f.nullOrder === 'nulls-first',
    };
  });
  const key = (row: Row): SortKey =>
    fields.map((f) => {
      let v: IcebergValue = row;
      for (const p of f.path) v = v === null || typeof v !== 'object' ? null : ((v as Row)[p] ?? null);
      return f.transform.kind === 'identity' ? v : applyTransform(f.transform, f.sourceType, v);
    });
  const compare = (a: SortKey, b: SortKey): number => {
    for (let i = 0; i < fields.length; i++) {
      const x = a[i];
      const y = b[i];
      const f = fields[i];
      if (x === null || y === null) {
        if (x === y) continue;
        // Null order is independent of the direction.
        return (x === null) === f.nullsFirst ? -1 : 1;
      }
      const c = compareValues(f.resultType, x, y);
      if (c !== 0) return c * f.sign;
    }
    return 0;
  };
  return { key, compare };
}

/** A rough in-memory size of a value (what the sort buffer is budgeted in). */
export function estimateBytes(v: IcebergValue): number {
  if (v === null || typeof v === 'boolean' || typeof v === 'number') return 8;
  if (typeof v === 'bigint') return 16;
  if (typeof v === 'string') return 16 + 2 * v.length;
  if (v instanceof Uint8Array) return 64 + v.length;
  if (Array.isArray(v)) {
    let n = 16;
    for (const x of v as IcebergValue[]) n += estimateBytes(x);
    return n;
  }
  let n = 32;
  for (const k in v) n += 8 + estimateBytes(v[k]);
  return n;
}

export interface ExternalSortOptions {
  readonly order: SortOrder;
  /** The rows' schema; spilled runs are written with it. */
  readonly schema: StructType;
  /** Estimated bytes of buffered rows before a run is spilled. */
  readonly runBytes: number;
  /** Rows per batch read back from a run and per batch emitted. */
  readonly batchSize: number;
}

interface Entry {
  readonly key: SortKey;
  readonly row: Row;
}

/** A spilled run being merged: its current batch and position in it. */
interface RunCursor {
  readonly run: number;
  readonly batches: AsyncIterator<{ readonly rows: Row[] }>;
  entries: Entry[];
  at: number;
}

/** Sorts rows added in any amount, spilling sorted runs to a local temporary folder. */
export class ExternalSorter {
  private readonly keys: SortKeyFunctions;
  private readonly local = new LocalFileIO();
  private buffer: Entry[] = [];
  private bufferBytes = 0;
  private readonly runs: string[] = [];
  private dir: string | undefined;

  constructor(private readonly options: ExternalSortOptions) {
    this.keys = sortKeyFunctions(options.order, options.schema);
  }

  /** Runs spilled to disk so far. */
  get spilledRuns(): number {
    return this.runs.length;
  }

  async add(rows: readonly Row[]): Promise<void> {
    for (const row of rows) {
      this.buffer.push({ key: this.keys.key(row), row });
      this.bufferBytes += estimateBytes(row);
      if (this.bufferBytes >= this.options.runBytes) await this.spill();
    }
  }

  private sortBuffer(): Entry[] {
    const sorted = this.buffer;
    this.buffer = [];
    this.bufferBytes = 0;
    // Array.prototype.sort is stable: equal keys keep their arrival order.
    return sorted.sort((a, b) => this.keys.compare(a.key, b.key));
  }

  private async spill(): Promise<void> {
    const sorted = this.sortBuffer();
    if (sorted.length === 0) return;
    this.dir ??= await mkdtemp(join(tmpdir(), 'packice-sort-'));
    const path = join(this.dir, `run-${this.runs.length}.parquet`);
    this.runs.push(path);
    const writer = ParquetWriter.open(this.local, path, this.options.schema, {
      compression: 'lz4',
      dictionary: false,
      rowGroupRows: this.options.batchSize,
      metricsConfig: { defaultMode: METRICS_MODE_NONE, columnModes: new Map() },
    });
    try {
      for (let i = 0; i < sorted.length; i += this.options.batchSize) {
        await writer.writeRows(sorted.slice(i, i + this.options.batchSize).map((e) => e.row));
      }
      await writer.close();
    } catch (e) {
      await writer.abort();
      throw e;
    }
  }

  /** Every row added, in order, in batches of at most `batchSize`; call once, after the last `add`. */
  async *sorted(): AsyncIterable<Row[]> {
    const size = this.options.batchSize;
    if (this.runs.length === 0) {
      const sorted = this.sortBuffer();
      for (let i = 0; i < sorted.length; i += size) yield sorted.slice(i, i + size).map((e) => e.row);
      return;
    }
    if (this.buffer.length > 0) await this.spill();
    const cursors: RunCursor[] = [];
    for (const [run, path] of this.runs.entries()) {
      const batches = readRows(this.local, { filePath: path, fileFormat: 'PARQUET' }, this.options.schema, { batchSize: size })[
        Symbol.asyncIterator
      ]();
      const cursor: RunCursor = { run, batches, entries: [], at: 0 };
      if (await this.advance(cursor)) cursors.push(cursor);
    }
    const heap = new CursorHeap((a, b) => this.keys.compare(a.entries[a.at].key, b.entries[b.at].key) || a.run - b.run);
    for (const c of cursors) heap.push(c);
    let out: Row[] = [];
    while (heap.size > 0) {
      const c = heap.peek();
      out.push(c.entries[c.at].row);
      c.at++;
      if (c.at < c.entries.length || (await this.advance(c))) heap.replaceTop(c);
      else heap.pop();
      if (out.length >= size) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }

  /** Loads the cursor's next batch; false at the end of its run. */
  private async advance(c: RunCursor): Promise<boolean> {
    for (;;) {
      const next = await c.batches.next();
      if (next.done) return false;
      if (next.value.rows.length === 0) continue;
      c.entries = next.value.rows.map((row) => ({ key: this.keys.key(row), row }));
      c.at = 0;
      return true;
    }
  }

  /** Removes the spilled runs. */
  async cleanup(): Promise<void> {
    this.buffer = [];
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
    this.dir = undefined;
    this.runs.length = 0;
  }
}

/** A binary min-heap of run cursors. */
class CursorHeap {
  private readonly items: RunCursor[] = [];

  constructor(private readonly less: (a: RunCursor, b: RunCursor) => number) {}

  get size(): number {
    return this.items.length;
  }

  peek(): RunCursor {
    return this.items[0];
  }

  push(c: RunCursor): void {
    const a = this.items;
    a.push(c);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.less(a[i], a[p]) >= 0) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }

  pop(): void {
    const a = this.items;
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      this.down(0);
    }
  }

  /** The top changed its key: restore the heap. */
  replaceTop(c: RunCursor): void {
    this.items[0] = c;
    this.down(0);
  }

  private down(i: number): void {
    const a = this.items;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && this.less(a[l], a[m]) < 0) m = l;
      if (r < a.length && this.less(a[r], a[m]) < 0) m = r;
      if (m === i) return;
      [a[i], a[m]] = [a[m], a[i]];
      i = m;
    }
  }
}
