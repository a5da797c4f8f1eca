/**
 * Translating deletes through compaction maps (DESIGN.md "Compaction maps"): deleted positions
 * in a rewritten input become positions in the rewrite's outputs, and positions whose rows the
 * rewrite had already removed drop out. No data file is read.
 *
 * Positions travel as ascending, distinct Float64Arrays (exact below 2^53, far beyond any file's
 * row count). One map is indexed once per source file into parallel typed arrays sorted by
 * source position; a translation then either binary-searches the runs once per position
 * (`lookup`, n·log r) or walks positions and runs together once (`merge`, n + r), whichever
 * the sizes at hand make cheaper.
 */
import { ValidationError } from '../errors.js';
import { normalizePath } from '../io/path.js';
import { PositionDeleteIndex } from '../iceberg/deletion-vector.js';
import type { CompactionMap } from './compaction-map.js';

export type RemapStrategy = 'lookup' | 'merge';

export interface RemappedPosition {
  readonly targetFile: string;
  readonly pos: number;
}

export interface Translation {
  /** Per file (as the map names it): the translated positions, ascending and distinct. */
  readonly byFile: ReadonlyMap<string, Float64Array>;
  /** Positions whose rows a rewrite had already removed (deleted before it). */
  readonly dropped: number;
}

/** The runs of one source file, sorted by source position, as parallel arrays. */
interface SourceRuns {
  readonly starts: Float64Array;
  /** start + length, exclusive. */
  readonly ends: Float64Array;
  /** target position − source position. */
  readonly shifts: Float64Array;
  /** Index into the map's targets. */
  readonly targets: Uint32Array;
}

/**
 * Cost of one position through a binary search relative to one step of the merge, measured by
 * `npm run bench:remap` (a search step is a data-dependent branch; a merge step mostly predictable).
 */
const SEARCH_STEP_COST = 1.5;

/**
 * The cheaper way to translate `positions` sorted positions through `runs` runs: a binary search
 * per position costs about n·log2(r) steps, one merge pass n + r.
 */
export function chooseStrategy(positions: number, runs: number): RemapStrategy {
  if (runs <= 1) return 'merge';
  return positions + runs < SEARCH_STEP_COST * positions * Math.log2(runs) ? 'merge' : 'lookup';
}

/** A compaction map indexed for translation. Build with `CompactionMapIndex.of` (cached per map). */
export class CompactionMapIndex {
  private static readonly cache = new WeakMap<CompactionMap, CompactionMapIndex>();
  private readonly sources = new Map<string, SourceRuns>();
  private readonly targetFiles: string[] = [];

  /** The map must not change afterwards: its index is cached. */
  static of(map: CompactionMap): CompactionMapIndex {
    let index = CompactionMapIndex.cache.get(map);
    if (!index) CompactionMapIndex.cache.set(map, (index = new CompactionMapIndex(map)));
    return index;
  }

  private constructor(map: CompactionMap) {
    const targetIndex = new Map<string, number>();
    const bySource = new Map<string, { start: number; length: number; shift: number; target: number }[]>();
    for (const s of map.sources) bySource.set(normalizePath(s), []);
    for (const e of map.entries) {
      const key = normalizePath(e.sourceFile);
      let list = bySource.get(key);
      if (!list) bySource.set(key, (list = []));
      let t = targetIndex.get(e.targetFile);
      if (t === undefined) {
        targetIndex.set(e.targetFile, (t = this.targetFiles.length));
        this.targetFiles.push(e.targetFile);
      }
      for (const r of e.runs) list.push({ start: r.sourcePosition, length: r.length, shift: r.targetPosition - r.sourcePosition, target: t });
    }
    for (const [key, list] of bySource) {
      list.sort((a, b) => a.start - b.start);
      this.sources.set(key, {
        starts: Float64Array.from(list, (r) => r.start),
        ends: Float64Array.from(list, (r) => r.start + r.length),
        shifts: Float64Array.from(list, (r) => r.shift),
        targets: Uint32Array.from(list, (r) => r.target),
      });
    }
  }

  /** True when the map rewrote `file` (paths compare normalized), even if none of its rows survived. */
  covers(file: string): boolean {
    return this.sources.has(normalizePath(file));
  }

  /** Runs of `file` in the map (0 when it does not cover it). */
  runCount(file: string): number {
    return this.sources.get(normalizePath(file))?.starts.length ?? 0;
  }

  /** Where row `pos` of `file` went; undefined when the rewrite removed it or the map does not cover `file`. */
  lookup(file: string, pos: number): RemappedPosition | undefined {
    const runs = this.sources.get(normalizePath(file));
    if (!runs) return undefined;
    const j = findRun(runs, pos);
    return j < 0 ? undefined : { targetFile: this.targetFiles[runs.targets[j]], pos: pos + runs.shifts[j] };
  }

  /**
   * Where the rows at `positions` of `file` went, or undefined when the map does not cover
   * `file`. `positions` should be ascending (a DV iterates so, position delete files are sorted);
   * others are sorted first. `strategy` overrides the choice by size.
   */
  translate(file: string, positions: ArrayLike<number>, strategy?: RemapStrategy): Translation | undefined {
    const runs = this.sources.get(normalizePath(file));
    if (!runs) return undefined;
    const sorted = ascendingDistinct(positions);
    const n = sorted.length;
    const out = new Float64Array(n);
    const outTarget = new Uint32Array(n);
    const how = strategy ?? chooseStrategy(n, runs.starts.length);
    const kept = how === 'merge' ? mergeRuns(runs, sorted, out, outTarget) : lookupRuns(runs, sorted, out, outTarget);
    return { byFile: splitByTarget(this.targetFiles, out, outTarget, kept), dropped: n - kept };
  }
}

/** One pass over sorted positions and sorted runs together; returns how many positions landed. */
function mergeRuns(runs: SourceRuns, positions: Float64Array, out: Float64Array, outTarget: Uint32Array): number {
  const { starts, ends, shifts, targets } = runs;
  const r = starts.length;
  let j = 0;
  let k = 0;
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i];
    while (j < r && ends[j] <= p) j++;
    if (j === r) break;
    if (starts[j] <= p) {
      out[k] = p + shifts[j];
      outTarget[k++] = targets[j];
    }
  }
  return k;
}

/** The run holding position p (binary search), or -1 when no run does. */
function findRun(runs: SourceRuns, p: number): number {
  const { starts } = runs;
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
  return found >= 0 && p < runs.ends[found] ? found : -1;
}

/** A binary search over the runs per position; returns how many positions landed. */
function lookupRuns(runs: SourceRuns, positions: Float64Array, out: Float64Array, outTarget: Uint32Array): number {
  const { shifts, targets } = runs;
  let k = 0;
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i];
    const j = findRun(runs, p);
    if (j >= 0) {
      out[k] = p + shifts[j];
      outTarget[k++] = targets[j];
    }
  }
  return k;
}

/** Groups translated positions by target, each ascending (sorted only when runs interleave). */
function splitByTarget(files: readonly string[], out: Float64Array, outTarget: Uint32Array, n: number): Map<string, Float64Array> {
  const result = new Map<string, Float64Array>();
  if (n === 0) return result;
  let single = true;
  for (let i = 1; i < n && single; i++) single = outTarget[i] === outTarget[0];
  if (single) {
    result.set(files[outTarget[0]], ascending(out.slice(0, n)));
    return result;
  }
  const counts = new Uint32Array(files.length);
  for (let i = 0; i < n; i++) counts[outTarget[i]]++;
  const parts = new Map<number, { values: Float64Array; at: number }>();
  for (let t = 0; t < files.length; t++) if (counts[t] > 0) parts.set(t, { values: new Float64Array(counts[t]), at: 0 });
  for (let i = 0; i < n; i++) {
    const part = parts.get(outTarget[i])!;
    part.values[part.at++] = out[i];
  }
  for (const [t, part] of parts) result.set(files[t], ascending(part.values));
  return result;
}

/** Sorts in place unless already ascending (a streaming rewrite keeps each target ascending). */
function ascending(values: Float64Array): Float64Array {
  for (let i = 1; i < values.length; i++) if (values[i - 1] > values[i]) return values.sort();
  return values;
}

/**
 * Positions as an ascending Float64Array without repeats: the input itself when it already is
 * one, else a sorted copy. Throws a ValidationError on a negative or fractional position.
 */
export function ascendingDistinct(positions: ArrayLike<number>): Float64Array {
  const n = positions.length;
  let sorted = true;
  for (let i = 0; i < n; i++) {
    const p = positions[i];
    if (!Number.isSafeInteger(p) || p < 0) throw new ValidationError(`a delete position must be an integer >= 0, found ${p}`);
    if (i > 0 && !(positions[i - 1] < p)) sorted = false;
  }
  if (sorted) return positions instanceof Float64Array ? positions : Float64Array.from(positions);
  const copy = Float64Array.from(positions).sort();
  let k = 0;
  for (let i = 0; i < n; i++) if (k === 0 || copy[k - 1] !== copy[i]) copy[k++] = copy[i];
  return copy.subarray(0, k);
}

/**
 * Where row `pos` of `sourceFile` went, or undefined when the rewrite removed it (deleted
 * before the rewrite) or the map does not cover that file. Paths compare normalized. One
 * position at a time; for many, `CompactionMapIndex.translate`.
 */
export function remapPosition(map: CompactionMap, sourceFile: string, pos: number | bigint): RemappedPosition | undefined {
  return CompactionMapIndex.of(map).lookup(sourceFile, Number(pos));
}

/**
 * Translates `positions` of `file` through maps committed one after another (oldest first): the
 * positions of each stage go through the next map when it rewrote their file, and stay put when
 * it did not. Only the deleted positions move from stage to stage; no intermediate file's layout
 * is built. A position dropped by any map is counted in `dropped`.
 */
export function translateThroughMaps(maps: readonly CompactionMap[], file: string, positions: ArrayLike<number>): Translation {
  let current = new Map<string, { file: string; parts: Float64Array[] }>([[normalizePath(file), { file, parts: [ascendingDistinct(positions)] }]]);
  let dropped = 0;
  for (const map of maps) {
    const index = CompactionMapIndex.of(map);
    const next = new Map<string, { file: string; parts: Float64Array[] }>();
    const put = (f: string, values: Float64Array): void => {
      const key = normalizePath(f);
      let slot = next.get(key);
      if (!slot) next.set(key, (slot = { file: f, parts: [] }));
      slot.parts.push(values);
    };
    for (const { file: f, parts } of current.values()) {
      const values = joinAscending(parts);
      const t = index.translate(f, values);
      if (!t) {
        put(f, values);
        continue;
      }
      dropped += t.dropped;
      for (const [target, moved] of t.byFile) put(target, moved);
    }
    current = next;
  }
  const byFile = new Map<string, Float64Array>();
  for (const { file: f, parts } of current.values()) {
    const values = joinAscending(parts);
    if (values.length > 0) byFile.set(f, values);
  }
  return { byFile, dropped };
}

/** Several ascending arrays of distinct positions (from disjoint runs) as one ascending array. */
function joinAscending(parts: readonly Float64Array[]): Float64Array {
  if (parts.length === 1) return parts[0];
  const all = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return ascending(all);
}

/**
 * The deletion vector a data file gets: the positions translated onto it merged with the vector
 * it already has (v3 allows one per data file). `existing` is left unchanged. `added` counts the
 * positions that were not deleted already.
 */
export function mergeWithDeletionVector(
  existing: PositionDeleteIndex | undefined,
  positions: ArrayLike<number>,
): { readonly index: PositionDeleteIndex; readonly added: number } {
  const index = existing ? existing.clone() : new PositionDeleteIndex();
  const before = index.cardinality();
  index.addAll(positions);
  return { index, added: index.cardinality() - before };
}
