/**
 * Which snapshots expiry keeps, against RemoveSnapshots' rules: branch history by
 * min-snapshots-to-keep or age, ref-level values over table properties and flags, refs aging out
 * by max-ref-age-ms, unreferenced snapshots by the cutoff, pins and horizons.
 */
import { describe, expect, it } from 'vitest';
import type { Snapshot, SnapshotRef } from '../../lib/iceberg/snapshot.js';
import type { TableMetadata } from '../../lib/iceberg/table-metadata.js';
import { checkGcEnabled, decideRetention } from '../../lib/maintenance/retention-policy.js';

const DAY = 86_400_000;
const NOW = 100 * DAY;

/** Snapshots 1..n on main, snapshot i made i days before NOW reversed (1 is the oldest). */
function table(n: number, extra: { refs?: Record<string, SnapshotRef>; properties?: Record<string, string>; more?: Snapshot[] } = {}): TableMetadata {
  const snapshots: Snapshot[] = [];
  for (let i = 1; i <= n; i++) {
    snapshots.push({
      snapshotId: BigInt(i),
      ...(i > 1 ? { parentSnapshotId: BigInt(i - 1) } : {}),
      sequenceNumber: BigInt(i),
      timestampMs: NOW - (n - i + 1) * DAY,
      summary: { operation: 'append' },
    });
  }
  return {
    formatVersion: 2, tableUuid: 'u', location: '/t', lastSequenceNumber: BigInt(n), lastUpdatedMs: NOW, lastColumnId: 1,
    schemas: [], currentSchemaId: 0, partitionSpecs: [], defaultSpecId: 0, lastPartitionId: 999, properties: extra.properties ?? {},
    currentSnapshotId: BigInt(n), snapshots: [...snapshots, ...(extra.more ?? [])], snapshotLog: [], metadataLog: [], sortOrders: [],
    defaultSortOrderId: 0, refs: { main: { snapshotId: BigInt(n), type: 'branch' }, ...(extra.refs ?? {}) },
  };
}

const ids = (xs: Iterable<bigint>): number[] => [...xs].map(Number).sort((a, b) => a - b);

describe('decideRetention', () => {
  it('keeps the default 5 days, and at least min-snapshots-to-keep', () => {
    expect(ids(decideRetention(table(10), { nowMs: NOW }).retained.keys())).toEqual([6, 7, 8, 9, 10]);
    expect(ids(decideRetention(table(10, { properties: { 'history.expire.min-snapshots-to-keep': '7' } }), { nowMs: NOW }).retained.keys()))
      .toEqual([4, 5, 6, 7, 8, 9, 10]);
    expect(ids(decideRetention(table(10), { nowMs: NOW, olderThanMs: 0, retainLast: 2 }).retained.keys())).toEqual([9, 10]);
  });

  it('lets a ref override the table and the flags', () => {
    const m = table(10, { refs: { main: { snapshotId: 10n, type: 'branch', minSnapshotsToKeep: 4 } } });
    expect(ids(decideRetention(m, { nowMs: NOW, olderThanMs: 0, retainLast: 1 }).retained.keys())).toEqual([7, 8, 9, 10]);
    const aged = table(10, { refs: { main: { snapshotId: 10n, type: 'branch', maxSnapshotAgeMs: 3.5 * DAY } } });
    expect(ids(decideRetention(aged, { nowMs: NOW, olderThanMs: 0 }).retained.keys())).toEqual([8, 9, 10]);
  });

  it('drops refs past max-ref-age-ms (never main), keeps tags and branches otherwise', () => {
    const m = table(10, {
      refs: { old: { snapshotId: 2n, type: 'tag', maxRefAgeMs: 2 * DAY }, keep: { snapshotId: 3n, type: 'tag' } },
    });
    const d = decideRetention(m, { nowMs: NOW, olderThanMs: 0 });
    expect(d.removedRefs).toEqual(['old']);
    expect(ids(d.retained.keys())).toEqual([3, 10]);
    const byProperty = decideRetention(table(10, { refs: { keep: { snapshotId: 3n, type: 'tag' } }, properties: { 'history.expire.max-ref-age-ms': String(DAY) } }), { nowMs: NOW, olderThanMs: 0 });
    expect(byProperty.removedRefs).toEqual(['keep']);
  });

  it('keeps a branch off main by its own history and unreferenced snapshots only while young', () => {
    const side: Snapshot = { snapshotId: 20n, parentSnapshotId: 3n, sequenceNumber: 11n, timestampMs: NOW - DAY / 2, summary: { operation: 'append' } };
    const orphanOld: Snapshot = { snapshotId: 21n, sequenceNumber: 12n, timestampMs: NOW - 9 * DAY, summary: { operation: 'append' } };
    const orphanNew: Snapshot = { snapshotId: 22n, sequenceNumber: 13n, timestampMs: NOW - DAY / 4, summary: { operation: 'append' } };
    const m = table(10, { refs: { dev: { snapshotId: 20n, type: 'branch', minSnapshotsToKeep: 2 } }, more: [side, orphanOld, orphanNew] });
    const d = decideRetention(m, { nowMs: NOW, olderThanMs: DAY });
    expect(ids(d.retained.keys())).toEqual([3, 10, 20, 22]);
    expect(d.expired.map(Number)).toContain(21);
  });

  it('pins by id or ref name, and horizons keep everything younger', () => {
    const m = table(10, { refs: { audit: { snapshotId: 2n, type: 'tag', maxRefAgeMs: DAY } } });
    const d = decideRetention(m, { nowMs: NOW, olderThanMs: 0, pins: ['4', 'audit'], horizonsMs: [2 * DAY, 3.5 * DAY] });
    expect(d.removedRefs).toEqual([]);
    expect(ids(d.retained.keys())).toEqual([2, 4, 8, 9, 10]);
    expect(d.retained.get(4n)).toBe('pinned');
    expect(() => decideRetention(m, { nowMs: NOW, pins: ['nope'] })).toThrow(/--pin nope/);
  });

  it('refuses when gc.enabled is false', () => {
    expect(() => checkGcEnabled(table(1, { properties: { 'gc.enabled': 'false' } }), 'expire snapshots')).toThrow(
      /Cannot expire snapshots: GC is disabled/,
    );
    expect(() => checkGcEnabled(table(1), 'expire snapshots')).not.toThrow();
  });
});
