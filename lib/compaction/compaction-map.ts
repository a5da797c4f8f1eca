/**
 * Compaction maps (DESIGN.md "Compaction maps"): where each surviving row of a bin-pack
 * rewrite went, as runs — rows [s, s+n) of source file A became rows [t, t+n) of target
 * file X. A deleted row or a file roll ends a run. Whoever holds a delete against the old
 * layout translates it through the map instead of re-reading data.
 *
 * File: an Avro object container, one record per (source, target) pair, written next to the
 * table metadata (`metadata/compaction-maps/<starting snapshot>-<group>-<uuid>.avro`). The
 * record schema carries Iceberg-style field ids, chosen here (no spec assigns them):
 *
 *   1 source_file: string (required)
 *   2 target_file: string (required)
 *   3 runs: list<7: struct<4 source_position: long, 5 target_position: long, 6 length: long>>
 *
 * Header keys: `packice.compaction-map.version` = "1" and `packice.group-id`.
 */
import { randomUUID } from 'node:crypto';
import { InvalidFileError, UnsupportedError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { normalizePath } from '../io/path.js';
import { headerString, icebergToAvroSchema, openAvroContainer, writeAvroContainer } from '../iceberg/avro.js';
import { newMetadataLocation } from '../iceberg/locations.js';
import type { TableMetadata } from '../iceberg/table-metadata.js';
import type { StructType } from '../iceberg/types.js';

export const COMPACTION_MAP_VERSION = '1';
export const COMPACTION_MAP_VERSION_KEY = 'packice.compaction-map.version';
export const COMPACTION_MAP_GROUP_KEY = 'packice.group-id';
/** Folder under the table's metadata folder. */
export const COMPACTION_MAP_FOLDER = 'compaction-maps';

export const CompactionMapFieldId = {
  SOURCE_FILE: 1,
  TARGET_FILE: 2,
  RUNS: 3,
  SOURCE_POSITION: 4,
  TARGET_POSITION: 5,
  LENGTH: 6,
  RUN: 7,
} as const;

export const COMPACTION_MAP_TYPE: StructType = {
  type: 'struct',
  fields: [
    { id: CompactionMapFieldId.SOURCE_FILE, name: 'source_file', required: true, type: { type: 'string' } },
    { id: CompactionMapFieldId.TARGET_FILE, name: 'target_file', required: true, type: { type: 'string' } },
    {
      id: CompactionMapFieldId.RUNS,
      name: 'runs',
      required: true,
      type: {
        type: 'list',
        elementId: CompactionMapFieldId.RUN,
        elementRequired: true,
        element: {
          type: 'struct',
          fields: [
            { id: CompactionMapFieldId.SOURCE_POSITION, name: 'source_position', required: true, type: { type: 'long' } },
            { id: CompactionMapFieldId.TARGET_POSITION, name: 'target_position', required: true, type: { type: 'long' } },
            { id: CompactionMapFieldId.LENGTH, name: 'length', required: true, type: { type: 'long' } },
          ],
        },
      },
    },
  ],
};

/** The Avro schema of a map record, as Java's AvroSchemaUtil would write the struct above. */
export const COMPACTION_MAP_AVRO_SCHEMA = icebergToAvroSchema(COMPACTION_MAP_TYPE, 'compaction_map');

/** Rows [sourcePosition, sourcePosition + length) became rows [targetPosition, targetPosition + length). */
export interface CompactionRun {
  readonly sourcePosition: number;
  readonly targetPosition: number;
  readonly length: number;
}

export interface CompactionMapEntry {
  readonly sourceFile: string;
  readonly targetFile: string;
  /** Ascending and disjoint in both source and target positions. */
  readonly runs: readonly CompactionRun[];
}

export interface CompactionMap {
  readonly groupId: string;
  readonly entries: readonly CompactionMapEntry[];
}

export interface RemappedPosition {
  readonly targetFile: string;
  readonly pos: number;
}

interface MutableRun {
  sourcePosition: number;
  targetPosition: number;
  length: number;
}

interface MutableEntry {
  readonly sourceFile: string;
  readonly targetFile: string;
  readonly runs: MutableRun[];
}

/**
 * Collects a map row by row. Rows of one source must come in ascending source position and
 * land at ascending target positions within each target (a streaming rewrite does both);
 * consecutive rows extend the last run of their (source, target) pair, so runs are maximal.
 */
export class CompactionMapBuilder {
  private readonly pairs = new Map<string, Map<string, MutableEntry>>();
  private readonly order: MutableEntry[] = [];
  private last: MutableEntry | undefined;
  private rows = 0;

  constructor(readonly groupId: string) {}

  /** Rows recorded so far. */
  get rowCount(): number {
    return this.rows;
  }

  /** Row `sourcePosition` of `sourceFile` became row `targetPosition` of `targetFile`. */
  add(sourceFile: string, sourcePosition: number, targetFile: string, targetPosition: number): void {
    this.addRun(sourceFile, sourcePosition, targetFile, targetPosition, 1);
  }

  /** `length` consecutive rows from `sourcePosition` became consecutive rows from `targetPosition`. */
  addRun(sourceFile: string, sourcePosition: number, targetFile: string, targetPosition: number, length: number): void {
    if (!(length > 0)) return;
    let entry = this.last;
    if (!entry || entry.sourceFile !== sourceFile || entry.targetFile !== targetFile) {
      let targets = this.pairs.get(sourceFile);
      if (!targets) this.pairs.set(sourceFile, (targets = new Map()));
      entry = targets.get(targetFile);
      if (!entry) {
        entry = { sourceFile, targetFile, runs: [] };
        targets.set(targetFile, entry);
        this.order.push(entry);
      }
      this.last = entry;
    }
    this.rows += length;
    const run = entry.runs.length > 0 ? entry.runs[entry.runs.length - 1] : undefined;
    if (run && run.sourcePosition + run.length === sourcePosition && run.targetPosition + run.length === targetPosition) {
      run.length += length;
    } else {
      entry.runs.push({ sourcePosition, targetPosition, length });
    }
  }

  build(): CompactionMap {
    return { groupId: this.groupId, entries: this.order };
  }
}

/** Where a group's map goes: `<metadata folder>/compaction-maps/<snapshot>-<group>-<uuid>.avro`. */
export function compactionMapPath(metadata: TableMetadata, startingSnapshotId: string | null, groupId: string): string {
  return newMetadataLocation(metadata, `${COMPACTION_MAP_FOLDER}/${startingSnapshotId ?? 'none'}-${safeName(groupId)}-${randomUUID()}.avro`);
}

/** A name part safe in any object key and file system. */
export function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** The map as container-file bytes. */
export function encodeCompactionMap(map: CompactionMap): Uint8Array {
  const records = map.entries.map((e) => ({
    source_file: e.sourceFile,
    target_file: e.targetFile,
    runs: e.runs.map((r) => ({
      source_position: BigInt(r.sourcePosition),
      target_position: BigInt(r.targetPosition),
      length: BigInt(r.length),
    })),
  }));
  return writeAvroContainer(COMPACTION_MAP_AVRO_SCHEMA, records, {
    meta: [
      [COMPACTION_MAP_VERSION_KEY, COMPACTION_MAP_VERSION],
      [COMPACTION_MAP_GROUP_KEY, map.groupId],
    ],
  });
}

/** Writes the map at `path`; returns the bytes written. */
export async function writeCompactionMap(io: FileIO, path: string, map: CompactionMap): Promise<number> {
  const bytes = encodeCompactionMap(map);
  await io.write(path, bytes);
  return bytes.length;
}

interface MapRecord {
  readonly source_file: string;
  readonly target_file: string;
  readonly runs: readonly { readonly source_position: bigint; readonly target_position: bigint; readonly length: bigint }[];
}

/**
 * Reads and checks a map: version 1, runs of positive length at non-negative positions,
 * disjoint per source file and per target file. Throws InvalidFileError naming the file.
 */
export async function readCompactionMap(io: FileIO, path: string): Promise<CompactionMap> {
  const reader = await openAvroContainer<MapRecord>(await io.read(path), path);
  const version = headerString(reader.header, COMPACTION_MAP_VERSION_KEY);
  if (version === undefined) {
    throw new InvalidFileError(`not a compaction map: the header has no ${COMPACTION_MAP_VERSION_KEY}`, { path });
  }
  if (version !== COMPACTION_MAP_VERSION) {
    throw new UnsupportedError(`compaction map version ${version} is not supported (packice reads version ${COMPACTION_MAP_VERSION})`, {
      path,
    });
  }
  const groupId = headerString(reader.header, COMPACTION_MAP_GROUP_KEY) ?? '';
  const position = (v: bigint, what: string, i: number): number => {
    if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new InvalidFileError(`compaction map record ${i}: ${what} ${v} is out of range`, { path });
    }
    return Number(v);
  };
  const entries: CompactionMapEntry[] = [];
  let i = 0;
  for await (const r of reader) {
    const runs = r.runs.map((x) => {
      const run = {
        sourcePosition: position(x.source_position, 'source_position', i),
        targetPosition: position(x.target_position, 'target_position', i),
        length: position(x.length, 'length', i),
      };
      if (run.length === 0) throw new InvalidFileError(`compaction map record ${i}: a run of length 0`, { path });
      return run;
    });
    entries.push({ sourceFile: r.source_file, targetFile: r.target_file, runs });
    i++;
  }
  checkDisjoint(entries, (e) => e.sourceFile, (r) => r.sourcePosition, 'source', path);
  checkDisjoint(entries, (e) => e.targetFile, (r) => r.targetPosition, 'target', path);
  return { groupId, entries };
}

function checkDisjoint(
  entries: readonly CompactionMapEntry[],
  file: (e: CompactionMapEntry) => string,
  start: (r: CompactionRun) => number,
  what: string,
  path: string,
): void {
  const byFile = new Map<string, CompactionRun[]>();
  for (const e of entries) {
    const key = normalizePath(file(e));
    let list = byFile.get(key);
    if (!list) byFile.set(key, (list = []));
    list.push(...e.runs);
  }
  for (const [f, runs] of byFile) {
    runs.sort((a, b) => start(a) - start(b));
    for (let k = 1; k < runs.length; k++) {
      if (start(runs[k - 1]) + runs[k - 1].length > start(runs[k])) {
        throw new InvalidFileError(`compaction map: runs overlap at ${what} position ${start(runs[k])} of ${f}`, { path });
      }
    }
  }
}

/** Runs of one source file sorted by source position, as parallel arrays for binary search. */
interface SourceIndex {
  readonly starts: Float64Array;
  readonly targets: Float64Array;
  readonly lengths: Float64Array;
  readonly files: readonly string[];
}

const indexes = new WeakMap<CompactionMap, Map<string, SourceIndex>>();

function sourceIndex(map: CompactionMap): Map<string, SourceIndex> {
  let index = indexes.get(map);
  if (index) return index;
  const bySource = new Map<string, { run: CompactionRun; file: string }[]>();
  for (const e of map.entries) {
    const key = normalizePath(e.sourceFile);
    let list = bySource.get(key);
    if (!list) bySource.set(key, (list = []));
    for (const run of e.runs) list.push({ run, file: e.targetFile });
  }
  index = new Map();
  for (const [key, list] of bySource) {
    list.sort((a, b) => a.run.sourcePosition - b.run.sourcePosition);
    index.set(key, {
      starts: Float64Array.from(list, (x) => x.run.sourcePosition),
      targets: Float64Array.from(list, (x) => x.run.targetPosition),
      lengths: Float64Array.from(list, (x) => x.run.length),
      files: list.map((x) => x.file),
    });
  }
  indexes.set(map, index);
  return index;
}

/**
 * Where row `pos` of `sourceFile` went, or undefined when the rewrite removed it (deleted
 * before the rewrite) or the map does not cover that file. Paths compare normalized.
 * The map must not change after the first call (its index is cached).
 */
export function remapPosition(map: CompactionMap, sourceFile: string, pos: number | bigint): RemappedPosition | undefined {
  const index = sourceIndex(map).get(normalizePath(sourceFile));
  if (!index) return undefined;
  const p = Number(pos);
  const { starts } = index;
  // The last run starting at or before p.
  let lo = 0;
  let hi = starts.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid] <= p) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (found < 0 || p >= starts[found] + index.lengths[found]) return undefined;
  return { targetFile: index.files[found], pos: index.targets[found] + (p - starts[found]) };
}
