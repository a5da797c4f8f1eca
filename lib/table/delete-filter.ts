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
import { isValidAt, readData } from '../parquet/values.js';
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

/**
 * The key equality values match by. The spec allows no float or double delete column, but other
 * engines write them, and Java applies them by Float/Double.compare (StructLikeSet, Comparators'
 * naturalOrder): -0.0 is not 0.0, every NaN is every other. canonicalValueString prints so: -0 apart
 * from 0, NaN alike whatever its bits; null matches null.
 */
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
  /** Whether a long key with these 32-bit halves is held (probed without a bigint). */
  hasLong(low: number, high: number): boolean;
  /** Whether an int key is held. */
  hasInt(v: number): boolean;
  /** Whether a null key is held. */
  readonly nulls: boolean;
}

/**
 * 64-bit integers in an open-addressing table of their 32-bit halves: a long key column is probed
 * from its Arrow values in place, where a `Set<bigint>` took a bigint made per row (~60 ns a row).
 * A one-hash Bloom bitmap of 16 bits per key answers most absent keys (~6 % pass it) before the
 * table is walked: ~5 ns a probe, not ~14 (streaming tables probe every row, most keys absent).
 */
class LongKeys {
  private readonly halves: Int32Array;
  private readonly full: Uint8Array;
  private readonly mask: number;
  private readonly bloom: Int32Array;
  private readonly bloomMask: number;

  constructor(values: ReadonlySet<bigint>) {
    let size = 16;
    while (size < values.size * 2) size *= 2;
    this.halves = new Int32Array(2 * size);
    this.full = new Uint8Array(size);
    this.mask = size - 1;
    let words = 1;
    while (words * 32 < values.size * 16) words *= 2;
    this.bloom = new Int32Array(words);
    this.bloomMask = words - 1;
    const one = new BigInt64Array(1);
    const words32 = new Int32Array(one.buffer);
    for (const v of values) {
      // A key no long holds matches no row.
      if (BigInt.asIntN(64, v) !== v) continue;
      one[0] = v;
      const [low, high] = [words32[0], words32[1]];
      if (this.has(low, high)) continue;
      const hash = LongKeys.hash(low, high);
      this.bloom[(hash >>> 5) & this.bloomMask] |= 1 << (hash & 31);
      let h = hash & this.mask;
      while (this.full[h] === 1) h = (h + 1) & this.mask;
      this.full[h] = 1;
      this.halves[2 * h] = low;
      this.halves[2 * h + 1] = high;
    }
  }

  private static hash(low: number, high: number): number {
    const h = Math.imul(low ^ Math.imul(high, 0x27d4eb2d), 0x9e3779b1);
    return h ^ (h >>> 15);
  }

  has(low: number, high: number): boolean {
    const hash = LongKeys.hash(low, high);
    if ((this.bloom[(hash >>> 5) & this.bloomMask] & (1 << (hash & 31))) === 0) return false;
    for (let h = hash & this.mask; this.full[h] === 1; h = (h + 1) & this.mask) {
      if (this.halves[2 * h] === low && this.halves[2 * h + 1] === high) return true;
    }
    return false;
  }
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
    // Loops, not some(): no closure made per row probed.
    hasLong: (low, high) => {
      for (const p of probes) if (p.hasLong(low, high)) return true;
      return false;
    },
    hasInt: (v) => {
      for (const p of probes) if (p.hasInt(v)) return true;
      return false;
    },
    nulls: probes.some((p) => p.nulls),
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
  // A -0.0 key prints apart from 0 (equalityKey), where the numbers Set would find 0 for -0.
  const negativeZero = keys.has(equalityKey([-0]));
  const longs = new LongKeys(bigints);
  probe = {
    hasLong: (low, high) => longs.has(low, high),
    hasInt: (v) => numbers.has(v),
    nulls,
    has: (v) => {
      if (typeof v === 'bigint') return bigints.has(v);
      if (typeof v === 'string') return strings.has(v);
      if (v === null || v === undefined) return nulls;
      if (typeof v === 'number' && Number.isSafeInteger(v)) return v === 0 && Object.is(v, -0) ? negativeZero : numbers.has(v);
      return undefined;
    },
  };
  singleKeysOf.set(keys, probe);
  return probe;
}

/** A key field's Arrow column in a batch, with the structs above it (a null struct makes its field null). */
export interface KeyData {
  readonly data: arrow.Data;
  readonly parents: readonly arrow.Data[];
}

/** A key field found in a read schema: its field, its path (for errors) and where its column sits in each batch. */
export interface KeyField {
  readonly field: NestedField;
  readonly path: string;
  readonly of: (batch: arrow.RecordBatch) => KeyData;
}

/** Finds field `id` (top level or inside structs) in batches of `schema`'s layout. */
export function keyData(schema: StructType, id: number): KeyField {
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
  return {
    field: entry.field,
    path: entry.path,
    of: (batch) => {
      const parents: arrow.Data[] = [];
      let data = batch.data as arrow.Data;
      steps.forEach((at, k) => {
        if (k > 0) parents.push(data);
        data = data.children[at];
      });
      return { data, parents };
    },
  };
}

/** Reads the values of field `id` (top level or inside structs) from batches of `schema`'s layout; null under a null struct. */
export function keyColumn(schema: StructType, id: number): (batch: arrow.RecordBatch) => unknown[] {
  return keyValues(keyData(schema, id));
}

/** Reads a found key field's values from a batch; null under a null struct. */
export function keyValues(key: KeyField): (batch: arrow.RecordBatch) => unknown[] {
  return (batch) => {
    const { data, parents } = key.of(batch);
    const values: unknown[] = readData(key.field.type, data, key.path);
    for (const p of parents) {
      for (let i = 0; i < values.length; i++) if (!isValidAt(p, i)) values[i] = null;
    }
    return values;
  };
}

/**
 * Marks in `dead` (made when first needed) the rows not yet dead whose one long or int key `keys`
 * holds, read from the Arrow values in place; false, with nothing marked, for another type or
 * layout (the caller probes by value). `dead` as it stands after.
 */
export function markKeys(
  type: NestedField['type'], key: KeyData, keys: SingleFieldKeys, n: number, dead: Uint8Array | undefined,
): Uint8Array | undefined | false {
  const { data, parents } = key;
  const at = data.type as arrow.DataType & { bitWidth?: number; isSigned?: boolean };
  // A column without a values buffer of its length (an all-null one may have none) is probed by value.
  const long = type.type === 'long' && data.values instanceof BigInt64Array && data.values.length >= n && at.bitWidth === 64 && at.isSigned === true;
  const int = type.type === 'int' && data.values instanceof Int32Array && data.values.length >= n && at.bitWidth === 32 && at.isSigned === true;
  if (!long && !int) return false;
  // Arrow's values start at the column's offset; its validity bits do not.
  const words = long ? new Int32Array(data.values.buffer, data.values.byteOffset, 2 * n) : (data.values as Int32Array);
  const nullable = data.nullCount > 0 || parents.some((p) => p.nullCount > 0);
  for (let i = 0; i < n; i++) {
    if (dead?.[i] === 1) continue;
    const hit = nullable && (!isValidAt(data, i) || parents.some((p) => !isValidAt(p, i)))
      ? keys.nulls
      : long ? keys.hasLong(words[2 * i], words[2 * i + 1]) : keys.hasInt(words[i]);
    if (hit) (dead ??= new Uint8Array(n))[i] = 1;
  }
  return dead;
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
