/**
 * A table whose history puts every retention trap in reach, on disk or on S3 (retention tests
 * of issue 8). v3, partitioned by `category`; snapshot ages are set after the fact (the
 * metadata is rewritten with back-dated timestamps, as a table written over ten days has):
 *
 *   s1  -10d   append ids 1-10 (files A: one per category)
 *   s2   -9d   append ids 11-14 (files B)                          tag `audit` -> s2
 *   dev  -8.5d on branch `dev` from s1: append ids 50-51 (files C)
 *   s3   -8d   remove B (B now reachable only from the tag)
 *   s4   -7d   delete ids 1, 2: one Puffin file P with a DV for each A file
 *   s5   -6d   delete id 3: A(b)'s DV is rewritten into P2; P keeps A(a)'s live DV
 *   s6   -5d   append ids 20-21 (files F) plus references to files outside the location
 *   s7   -4d   remove F and the outside references (F reachable only from s6)
 *   s8   -2d   append ids 30-31 (files E)
 *   s9   -1.5d remove E (E reachable only from s8, inside a 3-day horizon)
 *   s10  -1h   append ids 40-41 (files G), named `s3a://` on S3 or `file://` on disk
 *
 * `packice expire --older-than 1d --horizon 3d` keeps s10, s9, s8 (horizon), s2 (tag) and the
 * dev head, expires s1 and s3-s7, and may delete only F among the data files.
 */
import { commitNext } from '../../lib/catalog/object-store-catalog.js';
import { commitTable, loadTable, type Table } from '../../lib/catalog/table.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { fileIOFor } from '../../lib/io/index.js';
import { parentOf } from '../../lib/io/path.js';
import type { DataFile } from '../../lib/iceberg/manifest.js';
import { snapshotById, serializeTableMetadata } from '../../lib/iceberg/table-metadata.js';
import type { Row } from '../../lib/iceberg/values.js';
import { writeDataFiles } from '../../lib/table/data-writer.js';
import { commitChanges, createNewTable, deleteRows } from '../../lib/table/operations.js';
import { freshBucket, testS3Endpoint } from './s3.js';
import { SMALL_TABLE_SCHEMA } from './small-table.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

export const SNAPSHOT_AGES = {
  s1: 10 * DAY, s2: 9 * DAY, dev: 8.5 * DAY, s3: 8 * DAY, s4: 7 * DAY, s5: 6 * DAY, s6: 5 * DAY, s7: 4 * DAY,
  s8: 2 * DAY, s9: 1.5 * DAY, s10: HOUR,
} as const;
export type SnapshotName = keyof typeof SNAPSHOT_AGES;

export interface RetentionTable {
  readonly location: string;
  readonly io: FileIO;
  readonly ids: Readonly<Record<SnapshotName, bigint>>;
  readonly files: {
    readonly a: readonly string[];
    readonly b: readonly string[];
    readonly c: readonly string[];
    readonly e: readonly string[];
    readonly f: readonly string[];
    /** As the metadata names them (`s3a://…` or `file://…`). */
    readonly g: readonly string[];
    /** The Puffin file holding A(a)'s live DV and A(b)'s expired one. */
    readonly sharedPuffin: string;
    /** Named by s6's manifest, outside the table location; they exist and must survive. */
    readonly outside: readonly string[];
  };
}

function rows(ids: readonly number[]): Row[] {
  return ids.map((id) => ({ id: BigInt(id), category: id % 2 === 0 ? 'a' : 'b', amount: BigInt(id * 100) }));
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function append(t: Table, ids: readonly number[], branch?: string): Promise<{ t: Table; files: DataFile[] }> {
  const files = await writeDataFiles(t.io, t.metadata, rows(ids));
  return { t: await commitChanges(t, { addedDataFiles: files, ...(branch ? { branch } : {}) }), files };
}

async function ref(t: Table, refName: string, type: 'tag' | 'branch', snapshotId: bigint): Promise<Table> {
  return (await commitTable(t, () => ({ updates: [{ action: 'set-snapshot-ref', refName, type, snapshotId }], requirements: [] }))).table;
}

/**
 * Builds the table at `location`. `outsideLocations` are two paths outside the table that the
 * caller can write (another bucket, a folder above the table); `aliasOf` spells a path the way
 * another engine would (`s3a://` for `s3://`).
 */
export async function retentionTable(
  io: FileIO,
  location: string,
  outsideLocations: readonly string[],
  aliasOf: (path: string) => string,
): Promise<RetentionTable> {
  let t = await createNewTable(io, location, {
    formatVersion: 3,
    schema: SMALL_TABLE_SCHEMA,
    partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
  });
  const ids: Partial<Record<SnapshotName, bigint>> = {};
  const head = (): bigint => t.metadata.currentSnapshotId!;

  let r = await append(t, range(1, 10));
  t = r.t;
  ids.s1 = head();
  const a = r.files.map((f) => f.filePath);
  r = await append(t, range(11, 14));
  t = r.t;
  ids.s2 = head();
  const b = r.files.map((f) => f.filePath);
  t = await ref(t, 'audit', 'tag', ids.s2);
  t = await ref(t, 'dev', 'branch', ids.s1);
  r = await append(t, [50, 51], 'dev');
  t = r.t;
  ids.dev = t.metadata.refs.dev.snapshotId;
  const c = r.files.map((f) => f.filePath);
  t = await commitChanges(t, { removedFiles: b, operation: 'delete' });
  ids.s3 = head();
  t = (await deleteRows(t, (row) => row.id === 1n || row.id === 2n)).table;
  ids.s4 = head();
  const sharedPuffin = [...new Set(await dvPaths(t))][0];
  t = (await deleteRows(t, (row) => row.id === 3n)).table;
  ids.s5 = head();
  const live = await dvPaths(t);
  if (live.length !== 2 || !live.includes(sharedPuffin)) throw new Error(`expected P and P2 live after s5, found ${live.join(', ')}`);

  r = await append(t, [20, 21]);
  const f = r.files.map((x) => x.filePath);
  // The same bytes again, named at paths outside the table, as a hostile or relocated table might.
  const bytes = await io.read(f[0]);
  const outside: DataFile[] = [];
  for (const path of outsideLocations) {
    await io.write(path, bytes);
    outside.push({ ...r.files[0], filePath: path });
  }
  t = await commitChanges(r.t, { removedFiles: [], addedDataFiles: outside });
  // s6 is the commit that holds F and the outside files together.
  ids.s6 = head();
  t = await commitChanges(t, { removedFiles: [...f, ...outsideLocations], operation: 'delete' });
  ids.s7 = head();
  r = await append(t, [30, 31]);
  t = r.t;
  ids.s8 = head();
  const e = r.files.map((x) => x.filePath);
  t = await commitChanges(t, { removedFiles: e, operation: 'delete' });
  ids.s9 = head();
  const gWritten = await writeDataFiles(t.io, t.metadata, rows([40, 41]));
  const g = gWritten.map((x) => aliasOf(x.filePath));
  t = await commitChanges(t, { addedDataFiles: gWritten.map((x) => ({ ...x, filePath: aliasOf(x.filePath) })) });
  ids.s10 = head();

  await backdate(t, ids as Record<SnapshotName, bigint>);
  return { location, io, ids: ids as Record<SnapshotName, bigint>, files: { a, b, c, e, f, g, sharedPuffin, outside: outsideLocations } };
}

async function dvPaths(t: Table): Promise<string[]> {
  const { planFiles } = await import('../../lib/iceberg/scan-planning.js');
  const plan = await planFiles(t.io, t.metadata);
  return plan.deleteFiles.map((d) => d.filePath);
}

/** Rewrites snapshot timestamps to now minus SNAPSHOT_AGES, as one more metadata version. */
async function backdate(t: Table, ids: Record<SnapshotName, bigint>): Promise<void> {
  const now = Date.now();
  const ts = new Map<bigint, number>();
  for (const [name, id] of Object.entries(ids)) ts.set(id, now - SNAPSHOT_AGES[name as SnapshotName]);
  // s6 was two commits (F, then the outside references); the first of them ages with s6.
  for (const s of t.metadata.snapshots) if (!ts.has(s.snapshotId)) ts.set(s.snapshotId, now - SNAPSHOT_AGES.s6 - 60_000);
  const m = t.metadata;
  const next = {
    ...m,
    snapshots: m.snapshots.map((s) => ({ ...s, timestampMs: ts.get(s.snapshotId)! })),
    snapshotLog: m.snapshotLog.map((e) => ({ ...e, timestampMs: ts.get(e.snapshotId) ?? e.timestampMs })),
    lastUpdatedMs: Math.max(now, m.lastUpdatedMs),
    metadataLog: [...m.metadataLog, { timestampMs: m.lastUpdatedMs, metadataFile: t.metadataLocation }],
  };
  if (!snapshotById(next, ids.s10)) throw new Error('backdate lost the head');
  await commitNext(t.io, t.location, t.version!, serializeTableMetadata(next));
  await loadTable(t.location, { io: t.io });
}

/** Where the outside files of a local table go: a sibling folder and a path that climbs out with `..`. */
export function localOutside(location: string): string[] {
  return [`${parentOf(location)}/outside/out-1.parquet`, `${location}/../sibling/out-2.parquet`];
}

/** The table on moto S3, its outside files in another bucket and above the location, G named `s3a://`. */
export async function s3RetentionTable(): Promise<RetentionTable> {
  const bucket = await freshBucket();
  const other = await freshBucket();
  const location = `s3://${bucket}/warehouse/events`;
  const io = fileIOFor(location, { s3Endpoint: testS3Endpoint() });
  const outside = [`s3://${other}/warehouse/events/data/out-1.parquet`, `s3://${bucket}/warehouse/out-2.parquet`];
  return retentionTable(io, location, outside, (p) => p.replace(/^s3:/, 's3a:'));
}
