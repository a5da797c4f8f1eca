import type { FileIO } from '../io/file-io.js';
import { InvalidFileError } from '../errors.js';
import { normalizePath } from '../io/path.js';
import type { ApplicableDeletes } from '../iceberg/delete-index.js';
import { ensureRoaring, PositionDeleteIndex, readDeletionVector } from '../iceberg/deletion-vector.js';
import type { DataFile } from '../iceberg/manifest.js';
import { canonicalValueString } from '../iceberg/partition.js';
import { indexById, MetadataColumns, type Schema } from '../iceberg/schema.js';
import type { NestedField, StructType } from '../iceberg/types.js';
import type { Row } from '../iceberg/values.js';
import { readRows } from './data-reader.js';

/** Equality deletes on one set of field ids: the canonical keys of the deleted rows. */
export interface EqualitySet {
  readonly fieldIds: readonly number[];
  readonly keys: ReadonlySet<string>;
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
    const byIds: { fieldIds: readonly number[]; files: ReadonlySet<string>[] }[] = [];
    for (const d of deletes.equalityDeletes) {
      const ids = d.file.equalityIds ?? [];
      let set = byIds.find((e) => sameIds(e.fieldIds, ids));
      if (!set) byIds.push((set = { fieldIds: ids, files: [] }));
      set.files.push(await (cache ?? new DeleteFileCache()).equalityKeys(io, d.file, schemas));
    }
    // One file's keys are shared as the cache holds them (the data files of a partition see the same set).
    const equality = byIds.map(({ fieldIds, files }) => ({ fieldIds, keys: files.length === 1 ? files[0] : new Set(files.flatMap((f) => [...f])) }));
    return new DeleteFilter(positions, equality);
  }

  /**
   * True if the row at `pos` is deleted. `valueOf(fieldId)` gives the row's value
   * for an equality field (null matches null).
   */
  isDeleted(pos: number | bigint, valueOf: (fieldId: number) => unknown): boolean {
    if (this.positions?.has(pos)) return true;
    for (const e of this.equality) if (e.keys.has(equalityKey(e.fieldIds.map(valueOf)))) return true;
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
        const projection = projectionOf(file.equalityIds ?? [], schemas, file);
        const keys = new Set<string>();
        for await (const batch of readRows(io, file, projection)) {
          for (const r of batch.rows) keys.add(equalityKey(projection.fields.map((f) => r[f.name])));
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

/** Equality fields resolved by id through every schema the table had (dropped columns still apply). */
export function projectionOf(ids: readonly number[], schemas: readonly Schema[], file: DataFile): StructType {
  const fields: NestedField[] = ids.map((id) => {
    for (let i = schemas.length - 1; i >= 0; i--) {
      const f = indexById(schemas[i]).get(id)?.field;
      if (f) return { ...f, name: `_eq_${id}`, required: false };
    }
    throw new InvalidFileError(`equality delete file ${file.filePath} names field id ${id}, which no schema of the table has`, {
      path: file.filePath,
    });
  });
  return { type: 'struct', fields };
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

export function singleFieldKeys(keys: ReadonlySet<string>): SingleFieldKeys {
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
