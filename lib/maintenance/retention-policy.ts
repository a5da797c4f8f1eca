/**
 * Which snapshots and refs an expiry keeps (Java's RemoveSnapshots): the table's
 * `history.expire.*` properties, each ref's own overrides, and what the operator adds —
 * `--older-than`, `--retain-last`, pinned snapshots or tags, and horizons inside which nothing
 * expires. A pure function of the metadata and the clock, so a retried commit recomputes it.
 */
import { InvalidArgumentError, ValidationError } from '../errors.js';
import { MAIN_BRANCH, type SnapshotRef } from '../iceberg/snapshot.js';
import type { Snapshot } from '../iceberg/snapshot.js';
import { intProperty, property, type TableMetadata } from '../iceberg/table-metadata.js';

export const MAX_SNAPSHOT_AGE_MS = 'history.expire.max-snapshot-age-ms';
export const MIN_SNAPSHOTS_TO_KEEP = 'history.expire.min-snapshots-to-keep';
export const MAX_REF_AGE_MS = 'history.expire.max-ref-age-ms';
export const GC_ENABLED = 'gc.enabled';
/** TableProperties.java defaults: 5 days, 1 snapshot, refs never age out. */
export const DEFAULT_MAX_SNAPSHOT_AGE_MS = 432_000_000;
export const DEFAULT_MIN_SNAPSHOTS_TO_KEEP = 1;

export interface RetentionOptions {
  readonly nowMs: number;
  /** Snapshots older than this age may expire; overrides `history.expire.max-snapshot-age-ms` (not a ref's own value). */
  readonly olderThanMs?: number;
  /** Keep at least this many ancestors per branch; overrides `history.expire.min-snapshots-to-keep` (not a ref's own value). */
  readonly retainLast?: number;
  /** Snapshot ids (decimal) or ref names that never expire; a pinned ref is never dropped. */
  readonly pins?: readonly string[];
  /** Nothing younger than the longest horizon expires, refs included. */
  readonly horizonsMs?: readonly number[];
}

export type RetainReason = 'ref' | 'branch-history' | 'newer-than-cutoff' | 'pinned' | 'horizon';

export interface RetentionDecision {
  /** Every snapshot the table keeps, and the first rule that kept it. */
  readonly retained: ReadonlyMap<bigint, RetainReason>;
  /** Snapshot ids to remove, oldest first. */
  readonly expired: readonly bigint[];
  /** Refs older than their max-ref-age that are dropped. */
  readonly removedRefs: readonly string[];
  /** Effective cutoff (ms since the epoch) for snapshots no ref overrides. */
  readonly cutoffMs: number;
}

/** Refuses as Java does when the table forbids garbage collection (another table may share its files). */
export function checkGcEnabled(m: TableMetadata, action: string): void {
  if (property(m, GC_ENABLED, 'true').toLowerCase() === 'false') {
    throw new ValidationError(
      `Cannot ${action}: GC is disabled (deleting files may corrupt other tables); the table sets ${GC_ENABLED}=false`,
      { path: m.location },
    );
  }
}

/** The table's refs, with `main` made explicit for metadata that only names a current snapshot. */
export function refsOf(m: TableMetadata): Record<string, SnapshotRef> {
  const refs: Record<string, SnapshotRef> = { ...m.refs };
  if (refs[MAIN_BRANCH] === undefined && m.currentSnapshotId !== null) {
    refs[MAIN_BRANCH] = { snapshotId: m.currentSnapshotId, type: 'branch' };
  }
  return refs;
}

export function decideRetention(m: TableMetadata, o: RetentionOptions): RetentionDecision {
  const maxAge = o.olderThanMs ?? intProperty(m, MAX_SNAPSHOT_AGE_MS, DEFAULT_MAX_SNAPSHOT_AGE_MS);
  const minKeep = o.retainLast ?? intProperty(m, MIN_SNAPSHOTS_TO_KEEP, DEFAULT_MIN_SNAPSHOTS_TO_KEEP);
  if (!Number.isInteger(minKeep) || minKeep < 1) {
    throw new InvalidArgumentError(`Number of snapshots to retain must be at least 1, cannot be: ${minKeep}`, { path: m.location });
  }
  const defaultMaxRefAge = m.properties[MAX_REF_AGE_MS] === undefined ? Infinity : intProperty(m, MAX_REF_AGE_MS, 0);
  const horizon = Math.max(0, ...(o.horizonsMs ?? []));
  const horizonStart = o.nowMs - horizon;
  const cutoffMs = Math.min(o.nowMs - maxAge, horizonStart);
  const byId = new Map(m.snapshots.map((s) => [s.snapshotId, s]));
  // A branch's ancestors by map lookups (table-metadata's ancestorsOf scans the list per step: quadratic at 10,000 snapshots).
  const lineage = function* (id: bigint): Generator<Snapshot> {
    for (let s = byId.get(id); s !== undefined; s = s.parentSnapshotId === undefined ? undefined : byId.get(s.parentSnapshotId)) {
      yield s;
    }
  };
  const refs = refsOf(m);

  const pinnedIds = new Set<bigint>();
  const pinnedRefs = new Set<string>();
  for (const pin of o.pins ?? []) {
    if (refs[pin] !== undefined) {
      pinnedRefs.add(pin);
      pinnedIds.add(refs[pin].snapshotId);
    } else if (/^-?\d+$/.test(pin) && byId.has(BigInt(pin))) {
      pinnedIds.add(BigInt(pin));
    } else {
      throw new InvalidArgumentError(`--pin ${pin}: no snapshot with that id and no tag or branch with that name`, { path: m.location });
    }
  }

  const retained = new Map<bigint, RetainReason>();
  const keep = (id: bigint, why: RetainReason): void => {
    if (byId.has(id) && !retained.has(id)) retained.set(id, why);
  };

  // Refs: main and pinned refs always stay; others age out by their snapshot's timestamp.
  const removedRefs: string[] = [];
  const kept: [string, SnapshotRef][] = [];
  for (const [name, ref] of Object.entries(refs)) {
    const s = byId.get(ref.snapshotId);
    const maxRefAge = ref.maxRefAgeMs ?? defaultMaxRefAge;
    const aged = s !== undefined && o.nowMs - s.timestampMs > maxRefAge && s.timestampMs < horizonStart;
    if (name !== MAIN_BRANCH && !pinnedRefs.has(name) && aged) removedRefs.push(name);
    else kept.push([name, ref]);
  }

  for (const [, ref] of kept) {
    keep(ref.snapshotId, 'ref');
    if (ref.type !== 'branch') continue;
    // Ref-level values override both the table properties and the operator's flags (RemoveSnapshots).
    const branchCutoff = Math.min(ref.maxSnapshotAgeMs !== undefined ? o.nowMs - ref.maxSnapshotAgeMs : o.nowMs - maxAge, horizonStart);
    const branchMin = ref.minSnapshotsToKeep ?? minKeep;
    let n = 0;
    for (const s of lineage(ref.snapshotId)) {
      if (n < branchMin || s.timestampMs >= branchCutoff) {
        keep(s.snapshotId, 'branch-history');
        n++;
      } else break;
    }
  }

  // Snapshots on no kept ref's history stay only while newer than the cutoff.
  const referenced = new Set<bigint>();
  for (const [, ref] of kept) {
    if (ref.type === 'tag') referenced.add(ref.snapshotId);
    else for (const s of lineage(ref.snapshotId)) referenced.add(s.snapshotId);
  }
  for (const s of m.snapshots) {
    if (!referenced.has(s.snapshotId) && s.timestampMs >= o.nowMs - maxAge) keep(s.snapshotId, 'newer-than-cutoff');
  }
  for (const id of pinnedIds) keep(id, 'pinned');
  for (const s of m.snapshots) if (s.timestampMs >= horizonStart) keep(s.snapshotId, 'horizon');

  const expired = m.snapshots
    .filter((s) => !retained.has(s.snapshotId))
    .sort((a, b) => a.timestampMs - b.timestampMs)
    .map((s) => s.snapshotId);
  return { retained, expired, removedRefs, cutoffMs };
}
