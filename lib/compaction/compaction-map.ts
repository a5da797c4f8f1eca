/**
 * Compaction maps (DESIGN.md "Compaction maps"): where each surviving row of a bin-pack
 * rewrite went, as runs — rows [s, s+n) of source file A became rows [t, t+n) of target
 * file X. A deleted row or a file roll ends a run. Whoever holds a delete against the old
 * layout translates it through the map instead of re-reading data.
 *
 * File: an Avro object container written next to the table metadata
 * (`metadata/compaction-maps/<starting snapshot>-<group>-<uuid>.avro`), header keys
 * `packice.compaction-map.version` and `packice.group-id`; field ids chosen here (no spec
 * assigns them). docs/file-formats.md describes both versions:
 *
 * - version 2 (written): one record per source file, every input of the rewrite even when none
 *   of its rows survived; its runs as four delta-coded columns (gap since the previous run of
 *   the source, length, index of the target file, gap since the previous run written to that
 *   target: 0 for a streaming rewrite), target paths listed once. Under 0.1 byte a run after
 *   deflate for regular deletes, instead of ~6 in version 1.
 * - version 1 (read): one record per (source, target) pair with absolute positions.
 */
import { randomUUID } from 'node:crypto';
import { InvalidFileError, UnsupportedError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { normalizePath } from '../io/path.js';
import { headerString, icebergToAvroSchema, openAvroContainer, writeAvroContainer } from '../iceberg/avro.js';
import { newMetadataLocation } from '../iceberg/locations.js';
import type { TableMetadata } from '../iceberg/table-metadata.js';
import type { StructType } from '../iceberg/types.js';

/** The version written. */
/** Snapshot summary key listing the compaction maps a commit brought in (expiry deletes them with the snapshot). */
export const COMPACTION_MAPS_SUMMARY = 'packice.compaction-maps';
export const COMPACTION_MAP_VERSION = '2';
export type CompactionMapVersion = 1 | 2;
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

/** The Avro schema of a version 1 record, as Java's AvroSchemaUtil would write the struct above. */
export const COMPACTION_MAP_AVRO_SCHEMA = icebergToAvroSchema(COMPACTION_MAP_TYPE, 'compaction_map');

export const CompactionMapV2FieldId = {
  SOURCE_FILE: 1,
  NEW_TARGET_FILES: 2,
  NEW_TARGET_FILE: 3,
  SOURCE_GAPS: 4,
  SOURCE_GAP: 5,
  LENGTHS: 6,
  LENGTH: 7,
  TARGETS: 8,
  TARGET: 9,
  TARGET_GAPS: 10,
  TARGET_GAP: 11,
} as const;

const column = (id: number, name: string, elementId: number, type: 'long' | 'int' | 'string') => ({
  id,
  name,
  required: true,
  type: { type: 'list' as const, elementId, elementRequired: true, element: { type } },
});

/**
 * Version 2: one record per source file; its runs by source position as four columns of equal
 * length (columns, so that deflate sees alike values together), delta-coded.
 */
export const COMPACTION_MAP_V2_TYPE: StructType = {
  type: 'struct',
  fields: [
    { id: CompactionMapV2FieldId.SOURCE_FILE, name: 'source_file', required: true, type: { type: 'string' } },
    column(CompactionMapV2FieldId.NEW_TARGET_FILES, 'new_target_files', CompactionMapV2FieldId.NEW_TARGET_FILE, 'string'),
    column(CompactionMapV2FieldId.SOURCE_GAPS, 'source_gaps', CompactionMapV2FieldId.SOURCE_GAP, 'long'),
    column(CompactionMapV2FieldId.LENGTHS, 'lengths', CompactionMapV2FieldId.LENGTH, 'long'),
    column(CompactionMapV2FieldId.TARGETS, 'targets', CompactionMapV2FieldId.TARGET, 'int'),
    column(CompactionMapV2FieldId.TARGET_GAPS, 'target_gaps', CompactionMapV2FieldId.TARGET_GAP, 'long'),
  ],
};

export const COMPACTION_MAP_V2_AVRO_SCHEMA = icebergToAvroSchema(COMPACTION_MAP_V2_TYPE, 'compaction_map');

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
  /**
   * Every input the rewrite read, in read order, including inputs none of whose rows survived
   * (they have no entry). A version 1 map does not list those: there, the entries' sources.
   */
  readonly sources: readonly string[];
  readonly entries: readonly CompactionMapEntry[];
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
  private readonly sources: string[];

  /** `sources`: every input the rewrite will read, in order, so that inputs with no surviving row are listed too. */
  constructor(
    readonly groupId: string,
    sources: Iterable<string> = [],
  ) {
    this.sources = [...new Set(sources)];
  }

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
      if (!targets) {
        this.pairs.set(sourceFile, (targets = new Map()));
        if (!this.sources.includes(sourceFile)) this.sources.push(sourceFile);
      }
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
    return { groupId: this.groupId, sources: [...this.sources], entries: this.order };
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

/** The map as container-file bytes, version 2 unless asked for 1. */
export function encodeCompactionMap(map: CompactionMap, version: CompactionMapVersion = 2): Uint8Array {
  if (version === 2) {
    return writeAvroContainer(COMPACTION_MAP_V2_AVRO_SCHEMA, v2Records(map), {
      meta: [
        [COMPACTION_MAP_VERSION_KEY, '2'],
        [COMPACTION_MAP_GROUP_KEY, map.groupId],
      ],
    });
  }
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
      [COMPACTION_MAP_VERSION_KEY, '1'],
      [COMPACTION_MAP_GROUP_KEY, map.groupId],
    ],
  });
}

interface V2Record {
  readonly source_file: string;
  readonly new_target_files: readonly string[];
  readonly source_gaps: readonly bigint[];
  readonly lengths: readonly bigint[];
  readonly targets: readonly number[];
  readonly target_gaps: readonly bigint[];
}

/**
 * Version 2 records: sources in the map's order, each one's runs by source position. A target
 * path is written once, in the record whose runs first use it; a streaming rewrite fills each
 * target in this order, so every target_gap is 0.
 */
function* v2Records(map: CompactionMap): IterableIterator<V2Record> {
  const bySource = new Map<string, { run: CompactionRun; targetFile: string }[]>();
  for (const s of map.sources) bySource.set(s, []);
  for (const e of map.entries) {
    let list = bySource.get(e.sourceFile);
    if (!list) bySource.set(e.sourceFile, (list = []));
    for (const run of e.runs) list.push({ run, targetFile: e.targetFile });
  }
  const targetIndex = new Map<string, number>();
  const targetEnd: number[] = [];
  for (const [sourceFile, list] of bySource) {
    list.sort((a, b) => a.run.sourcePosition - b.run.sourcePosition);
    const record = { source_file: sourceFile, new_target_files: [] as string[], source_gaps: [] as bigint[], lengths: [] as bigint[], targets: [] as number[], target_gaps: [] as bigint[] };
    let end = 0;
    for (const { run, targetFile } of list) {
      let t = targetIndex.get(targetFile);
      if (t === undefined) {
        t = targetEnd.length;
        targetIndex.set(targetFile, t);
        targetEnd.push(0);
        record.new_target_files.push(targetFile);
      }
      record.source_gaps.push(BigInt(run.sourcePosition - end));
      record.lengths.push(BigInt(run.length));
      record.targets.push(t);
      record.target_gaps.push(BigInt(run.targetPosition - targetEnd[t]));
      end = run.sourcePosition + run.length;
      targetEnd[t] = run.targetPosition + run.length;
    }
    yield record;
  }
}

/** Writes the map at `path` (version 2 unless asked for 1); returns the bytes written. */
export async function writeCompactionMap(io: FileIO, path: string, map: CompactionMap, version: CompactionMapVersion = 2): Promise<number> {
  const bytes = encodeCompactionMap(map, version);
  await io.write(path, bytes);
  return bytes.length;
}

interface MapRecord {
  readonly source_file: string;
  readonly target_file: string;
  readonly runs: readonly { readonly source_position: bigint; readonly target_position: bigint; readonly length: bigint }[];
}

/**
 * Reads and checks a map of version 1 or 2: runs of positive length at non-negative positions,
 * disjoint per source file and per target file. Throws InvalidFileError naming the file.
 */
export async function readCompactionMap(io: FileIO, path: string): Promise<CompactionMap> {
  const reader = await openAvroContainer<MapRecord | V2Record>(await io.read(path), path);
  const version = headerString(reader.header, COMPACTION_MAP_VERSION_KEY);
  if (version === undefined) {
    throw new InvalidFileError(`not a compaction map: the header has no ${COMPACTION_MAP_VERSION_KEY}`, { path });
  }
  if (version !== '1' && version !== '2') {
    throw new UnsupportedError(`compaction map version ${version} is not supported (packice reads versions 1 and 2)`, { path });
  }
  const fields = recordFieldNames(reader.header.schema);
  const expected = (version === '1' ? COMPACTION_MAP_TYPE : COMPACTION_MAP_V2_TYPE).fields.map((f) => f.name);
  if (expected.some((f) => !fields.includes(f))) {
    throw new InvalidFileError(`compaction map version ${version}: records need the fields ${expected.join(', ')}, found ${fields.join(', ')}`, {
      path,
    });
  }
  const groupId = headerString(reader.header, COMPACTION_MAP_GROUP_KEY) ?? '';
  const records = reader as AsyncIterable<unknown>;
  const { sources, entries } =
    version === '1' ? await readV1(records as AsyncIterable<MapRecord>, path) : await readV2(records as AsyncIterable<V2Record>, path);
  checkDisjoint(entries, (e) => e.sourceFile, (r) => r.sourcePosition, 'source', path);
  checkDisjoint(entries, (e) => e.targetFile, (r) => r.targetPosition, 'target', path);
  return { groupId, sources, entries };
}

function recordFieldNames(schema: unknown): string[] {
  const fields = (schema as { fields?: unknown }).fields;
  return Array.isArray(fields) ? fields.map((f) => String((f as { name?: unknown }).name)) : [];
}

/** A long of record `i` as a position or count, checked. */
function positionOf(v: bigint, what: string, i: number, path: string): number {
  if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new InvalidFileError(`compaction map record ${i}: ${what} ${v} is out of range`, { path });
  }
  return Number(v);
}

async function readV1(records: AsyncIterable<MapRecord>, path: string): Promise<{ sources: string[]; entries: CompactionMapEntry[] }> {
  const entries: CompactionMapEntry[] = [];
  const sources = new Set<string>();
  let i = 0;
  for await (const r of records) {
    const runs = r.runs.map((x) => {
      const run = {
        sourcePosition: positionOf(x.source_position, 'source_position', i, path),
        targetPosition: positionOf(x.target_position, 'target_position', i, path),
        length: positionOf(x.length, 'length', i, path),
      };
      if (run.length === 0) throw new InvalidFileError(`compaction map record ${i}: a run of length 0`, { path });
      return run;
    });
    entries.push({ sourceFile: r.source_file, targetFile: r.target_file, runs });
    sources.add(r.source_file);
    i++;
  }
  return { sources: [...sources], entries };
}

async function readV2(records: AsyncIterable<V2Record>, path: string): Promise<{ sources: string[]; entries: CompactionMapEntry[] }> {
  const entries: CompactionMapEntry[] = [];
  const sources: string[] = [];
  const seen = new Set<string>();
  const targets: string[] = [];
  const targetEnd: number[] = [];
  let i = 0;
  for await (const r of records) {
    const key = normalizePath(r.source_file);
    if (seen.has(key)) throw new InvalidFileError(`compaction map record ${i}: source file ${r.source_file} has an earlier record`, { path });
    seen.add(key);
    sources.push(r.source_file);
    targets.push(...r.new_target_files);
    while (targetEnd.length < targets.length) targetEnd.push(0);
    const byTarget = new Map<number, CompactionRun[]>();
    const n = r.source_gaps.length;
    if (r.lengths.length !== n || r.targets.length !== n || r.target_gaps.length !== n) {
      throw new InvalidFileError(`compaction map record ${i}: its run columns differ in length`, { path });
    }
    let end = 0;
    for (let k = 0; k < n; k++) {
      const x = { target: r.targets[k], target_gap: r.target_gaps[k] };
      const sourcePosition = end + positionOf(r.source_gaps[k], 'source_gap', i, path);
      const length = positionOf(r.lengths[k], 'length', i, path);
      if (length === 0) throw new InvalidFileError(`compaction map record ${i}: a run of length 0`, { path });
      if (!(x.target >= 0 && x.target < targets.length)) {
        throw new InvalidFileError(`compaction map record ${i}: target ${x.target} is not one of the ${targets.length} target files listed so far`, {
          path,
        });
      }
      const targetPosition = targetEnd[x.target] + Number(x.target_gap);
      if (!Number.isSafeInteger(sourcePosition + length) || !(targetPosition >= 0) || !Number.isSafeInteger(targetPosition + length)) {
        throw new InvalidFileError(`compaction map record ${i}: a run reaches a position out of range`, { path });
      }
      end = sourcePosition + length;
      targetEnd[x.target] = targetPosition + length;
      let runs = byTarget.get(x.target);
      if (!runs) byTarget.set(x.target, (runs = []));
      runs.push({ sourcePosition, targetPosition, length });
    }
    for (const [t, runs] of byTarget) entries.push({ sourceFile: r.source_file, targetFile: targets[t], runs });
    i++;
  }
  return { sources, entries };
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
