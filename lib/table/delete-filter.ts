import type * as arrow from 'apache-arrow';
import type { FileIO } from '../io/file-io.js';
import { IllegalStateError, InvalidFileError } from '../errors.js';
import { normalizePath } from '../io/path.js';
import type { ApplicableDeletes } from '../iceberg/delete-index.js';
import { ensureRoaring, PositionDeleteIndex, readDeletionVector } from '../iceberg/deletion-vector.js';
import type { DataFile } from '../iceberg/manifest.js';
import { canonicalValueString } from '../iceberg/partition.js';
import { indexById, MetadataColumns, type Schema } from '../iceberg/schema.js';
import type { NestedField, StructType } from '../iceberg/types.js';
import type { Row } from '../iceberg/values.js';
import { readData } from '../parquet/values.js';
import { readBatches, readRows } from './data-reader.js';

/**
 * Equality deletes on one set of field ids: the canonical keys of the deleted rows, one set per
 * delete file as the cache holds it (a row is deleted when any holds its key; never joined, since
 * each data file of a streaming partition sees another list of delete files).
 */
export interface EqualitySet {
  readonly fieldIds: readonly number[];
  readonly keys: readonly ReadonlySet<string>[];
}

/**
 * The deletes of one data file, loaded: a position index (from its DV or its
 * position delete files) and the keys of every applicable equality delete.
 */
export class DeleteFilter {
  private constructor(
    readonly positions: PositionDeleteIndex | undefined,
    private readonly equality: readonly EqualitySet[],
  ) {}

  get isEmpty(): boolean {
    return (this.positions === undefined || this.positions.cardinality() === 0) && this.equality.length === 0;
  }

  /** The equality deletes, one set of keys per list of field ids. */
  get equalitySets(): readonly EqualitySet[] {
    return this.equality;
  }

  /** Every deleted position, ascending (empty without position deletes). */
  deletedPositions(): Float64Array {
    return this.positions ? Float64Array.from(this.positions.positions()) : new Float64Array(0);
  }

  /** Field ids a reader must project (even if dropped from the schema) to test equality deletes. */
  get equalityFieldIds(): number[] {
    return [...new Set(this.equality.flatMap((e) => e.fieldIds))];
  }

  static async load(
    io: FileIO,
    dataFilePath: string,
    deletes: ApplicableDeletes,
    schemas: readonly Schema[],
    cache?: DeleteFileCache,
  ): Promise<DeleteFilter> {
    let positions: PositionDeleteIndex | undefined;
    if (deletes.deletionVector) {
      const f = deletes.deletionVector.file;
      await ensureRoaring();
      positions = await readDeletionVector(
        io, f.filePath, Number(f.contentOffset ?? 0n), Number(f.contentSizeInBytes ?? 0n), f.recordCount,
      );
    } else if (deletes.positionDeletes.length > 0) {
      await ensureRoaring();
      positions = new PositionDeleteIndex();
      const target = normalizePath(dataFilePath);
      for (const d of deletes.positionDeletes) {
        const byPath = await (cache ?? new DeleteFileCache()).positions(io, d.file);
        for (const pos of byPath.get(target) ?? []) positions.add(pos);
      }
    }
    const files = cache ?? new DeleteFileCache();
    const equality: { fieldIds: readonly number[]; keys: ReadonlySet<string>[] }[] = [];
    for (const d of deletes.equalityDeletes) {
      const ids = d.file.equalityIds ?? [];
      let set = equality.find((e) => sameIds(e.fieldIds, ids));
      if (!set) equality.push((set = { fieldIds: ids, keys: [] }));
      set.keys.push(await files.equalityKeys(io, d.file, schemas));
    }
    return new DeleteFilter(positions, equality);
  }

  /**
   * True if the row at `pos` is deleted. `valueOf(fieldId)` gives the row's value
   * for an equality field (null matches null).
   */
  isDeleted(pos: number | bigint, valueOf: (fieldId: number) => unknown): boolean {
    if (this.positions?.has(pos)) return true;
    for (const e of this.equality) {
      const key = equalityKey(e.fieldIds.map(valueOf));
      if (e.keys.some((k) => k.has(key))) return true;
    }
    return false;
  }
}

/**
 * Parsed delete files, shared by the data files of one scan or one compaction group so
 * that a partition's delete file is read once, not once per data file.
 */
export class DeleteFileCache {
  private readonly positionFiles = new Map<string, Promise<Map<string, bigint[]>>>();
  private readonly equalityFiles = new Map<string, Promise<ReadonlySet<string>>>();

  positions(io: FileIO, file: DataFile): Promise<Map<string, bigint[]>> {
    let p = this.positionFiles.get(file.filePath);
    if (!p) {
      p = (async () => {
        const byPath = new Map<string, bigint[]>();
        for await (const batch of readRows(io, file, POSITION_DELETE_SCHEMA)) {
          for (const r of batch.rows) {
            const path = normalizePath(r.file_path as string);
            const list = byPath.get(path);
            if (list) list.push(r.pos as bigint);
            else byPath.set(path, [r.pos as bigint]);
          }
        }
        return byPath;
      })();
      this.positionFiles.set(file.filePath, p);
    }
    return p;
  }

  equalityKeys(io: FileIO, file: DataFile, schemas: readonly Schema[]): Promise<ReadonlySet<string>> {
    let p = this.equalityFiles.get(file.filePath);
    if (!p) {
      p = (async () => {
        const ids = file.equalityIds ?? [];
        const projection = projectionOf(ids, schemas, file);
        // Read as the data files' keys are (keyColumn), so both print alike.
        const columns = ids.map((id) => keyColumn(projection, id));
        const keys = new Set<string>();
        for await (const { batch } of readBatches(io, file, projection)) {
          const cols = columns.map((c) => c(batch));
          const values = new Array<unknown>(cols.length);
          for (let i = 0; i < batch.numRows; i++) {
            for (let c = 0; c < cols.length; c++) values[c] = cols[c][i];
            keys.add(equalityKey(values));
          }
        }
        return keys;
      })();
      this.equalityFiles.set(file.filePath, p);
    }
    return p;
  }
}

export const POSITION_DELETE_SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: MetadataColumns.FILE_PATH, name: 'file_path', required: true, type: { type: 'string' } },
    { id: MetadataColumns.POS, name: 'pos', required: true, type: { type: 'long' } },
  ],
};

/**
 * The columns that hold equality fields `ids`, resolved by id through every schema the table had
 * (dropped columns still apply): each field where it sits, inside its structs, the structs pruned to
 * the fields asked for. Top-level columns are renamed `_eq_<id>` so that they can sit beside a
 * projection of the same names; read a field's values with keyColumn. A field inside a list or map
 * cannot be an equality field (spec: "Equality Delete Files").
 */
export function projectionOf(ids: readonly number[], schemas: readonly Schema[], file: DataFile): StructType {
  const top: NestedField[] = [];
  for (const id of ids) {
    let chain: NestedField[] | undefined;
    for (let i = schemas.length - 1; i >= 0 && !chain; i--) {
      const index = indexById(schemas[i]);
      let entry = index.get(id);
      if (!entry) continue;
      chain = [entry.field];
      while (entry.parentId !== undefined) {
        entry = index.get(entry.parentId)!;
        if (entry.field.type.type !== 'struct') {
          throw new InvalidFileError(`equality delete file ${file.filePath} names field id ${id}, which lies inside a ${entry.field.type.type}`, { path: file.filePath });
        }
        chain.unshift(entry.field);
      }
    }
    if (!chain) {
      throw new InvalidFileError(`equality delete file ${file.filePath} names field id ${id}, which no schema of the table has`, {
        path: file.filePath,
      });
    }
    let level = top;
    chain.forEach((f, depth) => {
      const leaf = depth === chain!.length - 1;
      let at = level.find((x) => x.id === f.id);
      if (!at) {
        at = { ...f, name: depth === 0 ? `_eq_${f.id}` : f.name, required: false, ...(leaf ? {} : { type: { type: 'struct', fields: [] } }) };
        level.push(at);
      }
      if (!leaf) level = (at.type as StructType).fields as NestedField[];
    });
  }
  return { type: 'struct', fields: top };
}

export function equalityKey(values: readonly unknown[]): string {
  return canonicalValueString(values);
}

/**
 * One-field equality keys as the values they print from (equalityKey): bigints, safe integers,
 * strings and null, so that a row's value is probed without printing it. `has` answers exactly what
 * `keys.has(equalityKey([v]))` would, or undefined for a value of another kind (then ask that).
 */
export interface SingleFieldKeys {
  has(v: unknown): boolean | undefined;
}

/** Built once per key set (a delete file's keys are shared by the data files it applies to). */
const singleKeysOf = new WeakMap<ReadonlySet<string>, SingleFieldKeys>();

/** The probe of one-field keys held in `sets` (one per delete file): a row is deleted when any holds its key. */
export function singleFieldKeys(sets: readonly ReadonlySet<string>[]): SingleFieldKeys {
  const probes = sets.map(probeOf);
  if (probes.length === 1) return probes[0];
  return {
    // Every probe sorts a value alike (by its kind): all answer, or none does.
    has: (v) => {
      let answer: boolean | undefined = false;
      for (const p of probes) {
        const r = p.has(v);
        if (r === true) return true;
        if (r === undefined) answer = undefined;
      }
      return answer;
    },
  };
}

function probeOf(keys: ReadonlySet<string>): SingleFieldKeys {
  let probe = singleKeysOf.get(keys);
  if (probe) return probe;
  const bigints = new Set<bigint>();
  const numbers = new Set<number>();
  const strings = new Set<string>();
  for (const k of keys) {
    // Only keys equal to what equalityKey prints for the value they parse to.
    const digits = /^\[(-?\d+)\]$/.exec(k)?.[1];
    if (digits !== undefined) {
      const b = BigInt(digits);
      if (`[${b}]` !== k) continue;
      bigints.add(b);
      const x = Number(digits);
      if (Number.isSafeInteger(x)) numbers.add(x);
    } else if (k.startsWith('["')) {
      const parsed = parseJson(k);
      if (Array.isArray(parsed) && parsed.length === 1 && typeof parsed[0] === 'string' && equalityKey(parsed) === k) strings.add(parsed[0]);
    }
  }
  const nulls = keys.has(equalityKey([null]));
  probe = {
    has: (v) => {
      if (typeof v === 'bigint') return bigints.has(v);
      if (typeof v === 'string') return strings.has(v);
      if (v === null || v === undefined) return nulls;
      // -0 prints as 0, and a Set finds 0 for it.
      if (typeof v === 'number' && Number.isSafeInteger(v)) return numbers.has(v);
      return undefined;
    },
  };
  singleKeysOf.set(keys, probe);
  return probe;
}

/** Reads the values of field `id` (top level or inside structs) from batches of `schema`'s layout; null under a null struct. */
export function keyColumn(schema: StructType, id: number): (batch: arrow.RecordBatch) => unknown[] {
  const index = indexById(schema);
  const entry = index.get(id);
  if (!entry) throw new IllegalStateError(`equality field ${id} is not in the read schema`);
  // The field's chain of ids from the top, found level by level by id (names may repeat or contain
  // dots across schemas: a field dropped and another renamed to its name), through the struct that
  // holds the field (a struct may sit twice at the top: projected, and pruned as `_eq_<id>`).
  const chain: number[] = [id];
  for (let p = entry.parentId; p !== undefined; p = index.get(p)!.parentId) chain.unshift(p);
  const holds = (f: NestedField): boolean => f.id === id || (f.type.type === 'struct' && f.type.fields.some(holds));
  // Where the field's Arrow column sits at each level, resolved once for every batch.
  const steps: number[] = [];
  let level: readonly NestedField[] = schema.fields;
  for (const fieldId of chain) {
    const at = level.findIndex((f) => f.id === fieldId && holds(f));
    if (at < 0) throw new IllegalStateError(`equality field ${id} is not where the read schema puts it`);
    steps.push(level.slice(0, at).filter((f) => f.type.type !== 'unknown').length);
    const type = level[at].type;
    level = type.type === 'struct' ? type.fields : [];
  }
  return (batch) => {
    const parents: arrow.Data[] = [];
    let data = batch.data as arrow.Data;
    steps.forEach((at, k) => {
      if (k > 0) parents.push(data);
      data = data.children[at];
    });
    const values: unknown[] = readData(entry.field.type, data, entry.path);
    for (const p of parents) {
      for (let i = 0; i < values.length; i++) {
        const bit = p.offset + i;
        if (p.nullCount > 0 && (p.nullBitmap![bit >> 3] & (1 << (bit & 7))) === 0) values[i] = null;
      }
    }
    return values;
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export type { Row };
