/**
 * Soak against moto S3 (issue 7, must-show 3): several seeded writers and a compaction loop run
 * at once on one table. Writers append, delete by position (position delete files on v2, deletion
 * vectors on v3; half of them prepared on the snapshot a committed compaction started from, so
 * they are rebased through its map by `deleteWhere`), delete by equality and overwrite whole
 * partitions; the compaction loop plans, rewrites and commits (lib/pipeline/steps.ts,
 * lib/compaction/commit.ts) again and again, rebasing deletes committed during its rewrite.
 * Every commit retries through the library.
 *
 * Bounded in operations and in wall-clock time (no new operation starts after the budget; times
 * are never asserted). The model is updated only with what each commit committed (the ids it
 * appended, the ids its deletes matched, the ids an overwrite's winning attempt removed) and is
 * kept as appended ids minus deleted ids, so updates commute whatever order the writers finish in.
 * At the end the table's rows equal the model and Java Iceberg 1.12 reads the same rows (from a
 * relocated copy on disk: the Java harness has no S3). The run prints commits, conflicts (retried
 * attempts), rebases (commit side and writer side) and aborts; every abort must be a genuine
 * conflict: an input an overwrite removed.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { GroupResult, Plan } from '../../lib/compaction/messages.js';
import { deleteWhere } from '../../lib/compaction/row-delta.js';
import { DataFileRemovedError } from '../../lib/errors.js';
import { fileIOFor } from '../../lib/io/index.js';
import { normalizePath } from '../../lib/io/path.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { currentSchema, specById } from '../../lib/iceberg/table-metadata.js';
import type { Row } from '../../lib/iceberg/values.js';
import { planStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { writeDataFiles } from '../../lib/table/data-writer.js';
import { writeEqualityDeleteFile } from '../../lib/table/delete-writer.js';
import { commitChanges, createNewTable } from '../../lib/table/operations.js';
import { relocateTable } from '../../lib/table/relocate.js';
import { scanRows } from '../../lib/table/scan.js';
import { type CanonicalRow, sortRows } from '../support/canonical-rows.js';
import { tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { seededRandom } from '../support/seeded-random.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { SMALL_TABLE_SCHEMA } from '../support/small-table.js';

const SEED = 0x5eed_0007;
const WRITERS = 3;
/** Operations per writer, and compactions, at most. */
const WRITER_OPS = 40;
const COMPACTIONS = 12;
/** No operation starts after this much wall-clock time. */
const BUDGET_MS = 75_000;
const CATEGORIES = ['a', 'b', 'c'] as const;

type WriterOp = 'append' | 'position-delete' | 'equality-delete' | 'overwrite';

interface Report {
  formatVersion: number;
  writerCommits: Record<WriterOp, number>;
  compactions: number;
  compactionCommits: number;
  /** Commit attempts that met a newer table version and retried (writers and compactions). */
  conflicts: { writers: number; compactions: number };
  /** Position delete files and deletion vectors committed meanwhile that compaction commits rebased. */
  commitRebases: number;
  /** Positions writers prepared on an older snapshot and committed translated through compaction maps. */
  writerRebasedPositions: number;
  /** Writer deletes prepared on an older snapshot and committed after a compaction. */
  staleDeletes: number;
  groupsCommitted: number;
  /** Compaction groups aborted; each lost an input to an overwrite. */
  groupAborts: number;
  /** Writer deletes that could not commit: their file was removed by an overwrite. */
  writerAborts: number;
  finalRows: number;
}

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The shared state of one soak: the model, the report, and what the checks at the end need. */
class Soak {
  /** Every row ever appended, by id; the live rows are these minus `deleted`. */
  private readonly appended = new Map<bigint, Row>();
  private readonly deleted = new Set<bigint>();
  /** Data files the winning attempt of an overwrite removed. */
  readonly removedByOverwrite = new Set<string>();
  /** Snapshots a committed compaction started from: deletes prepared on them must be rebased. */
  readonly compactedFrom: bigint[] = [];
  readonly groupAborts: { reason: string; inputs: string[] }[] = [];
  readonly writerAborts: DataFileRemovedError[] = [];
  readonly report: Report;
  private readonly start = Date.now();

  constructor(
    readonly location: string,
    readonly s3Endpoint: string,
    formatVersion: 2 | 3,
  ) {
    this.report = {
      formatVersion,
      writerCommits: { append: 0, 'position-delete': 0, 'equality-delete': 0, overwrite: 0 },
      compactions: 0,
      compactionCommits: 0,
      conflicts: { writers: 0, compactions: 0 },
      commitRebases: 0,
      writerRebasedPositions: 0,
      staleDeletes: 0,
      groupsCommitted: 0,
      groupAborts: 0,
      writerAborts: 0,
      finalRows: 0,
    };
  }

  inBudget(): boolean {
    return Date.now() - this.start < BUDGET_MS;
  }

  table(): Promise<Table> {
    return loadTable(this.location, { s3Endpoint: this.s3Endpoint });
  }

  appendedRows(rows: readonly Row[]): void {
    for (const r of rows) this.appended.set(r.id as bigint, r);
  }

  deletedIds(ids: Iterable<bigint>): void {
    for (const id of ids) this.deleted.add(id);
  }

  live(): Row[] {
    return sortById([...this.appended.values()].filter((r) => !this.deleted.has(r.id as bigint)));
  }

  /** One commit that retried `attempts - 1` times. */
  attempts(n: number): void {
    this.report.conflicts.writers += Math.max(0, n - 1);
  }

  /** plan → rewrite → commit until the bounds; writers commit throughout. */
  async compactions(): Promise<void> {
    const table = { location: this.location, s3Endpoint: this.s3Endpoint };
    for (let i = 0; i < COMPACTIONS && this.inBudget(); i++) {
      const plan: Plan = await planStep({ table, policy: { minInputFiles: 2, deleteFileThreshold: 1 } });
      this.report.compactions++;
      if (plan.groups.length === 0) {
        await delay(200);
        continue;
      }
      const results: GroupResult[] = [];
      for (const g of plan.groups) results.push(await rewriteStep({ plan, groupId: g.id }));
      const commit = await commitCompaction(await this.table(), plan, results);
      this.report.conflicts.compactions += commit.attempts - 1;
      this.report.commitRebases += commit.deletesRebased;
      this.report.groupsCommitted += commit.committedGroups.length;
      this.report.groupAborts += commit.abortedGroups.length;
      for (const a of commit.abortedGroups) {
        const group = plan.groups.find((g) => g.id === a.groupId)!;
        this.groupAborts.push({ reason: a.reason, inputs: group.inputs.map((x) => normalizePath(x.file.filePath)) });
      }
      if (commit.committedGroups.length > 0) {
        this.report.compactionCommits++;
        if (plan.startingSnapshotId !== null) this.compactedFrom.push(BigInt(plan.startingSnapshotId));
      }
    }
  }
}

/** One seeded writer; its ids are `w`, `w + WRITERS`, ... so writers never share one. */
class Writer {
  private readonly next: () => number;
  private nextId: bigint;

  constructor(
    private readonly soak: Soak,
    readonly w: number,
    seed: number,
  ) {
    this.next = seededRandom(seed);
    this.nextId = BigInt(w);
  }

  private int(n: number): number {
    return Math.floor(this.next() * n);
  }

  private newRows(n: number, category?: string): Row[] {
    return Array.from({ length: n }, () => {
      const id = this.nextId;
      this.nextId += BigInt(WRITERS);
      return { id, category: category ?? CATEGORIES[this.int(CATEGORIES.length)], amount: id * 7n };
    });
  }

  /** Up to `n` distinct rows the model holds live now (other writers may delete them meanwhile). */
  private pickLive(n: number, category?: string, oldest = false): Row[] {
    let live = this.soak.live().filter((r) => category === undefined || r.category === category);
    if (oldest) live = live.slice(0, Math.ceil(live.length / 2));
    const picked: Row[] = [];
    for (let i = 0; i < n && live.length > 0; i++) picked.push(live.splice(this.int(live.length), 1)[0]);
    return picked;
  }

  async append(): Promise<void> {
    const t = await this.soak.table();
    const rows = this.newRows(4 + this.int(10));
    const files = await writeDataFiles(t.io, t.metadata, rows);
    let attempts = 0;
    await commitChanges(t, () => {
      attempts++;
      return { addedDataFiles: files };
    });
    this.soak.attempts(attempts);
    this.soak.appendedRows(rows);
    this.soak.report.writerCommits.append++;
  }

  /** `deleteWhere`, half the time on the snapshot a committed compaction started from. */
  private async positionDelete(): Promise<boolean> {
    const stale = this.soak.compactedFrom.length > 0 && this.int(2) === 0 ? this.soak.compactedFrom.at(-1 - this.int(Math.min(2, this.soak.compactedFrom.length))) : undefined;
    // On an older snapshot, older rows (lower ids) are the ones likely to be there.
    const ids = new Set(this.pickLive(1 + this.int(4), undefined, stale !== undefined).map((r) => r.id as bigint));
    const matched = new Set<bigint>();
    try {
      const r = await deleteWhere(
        await this.soak.table(),
        (row) => {
          const hit = ids.has(row.id as bigint);
          if (hit) matched.add(row.id as bigint);
          return hit;
        },
        stale !== undefined ? { snapshotId: stale } : {},
      );
      this.soak.attempts(r.attempts);
      this.soak.report.writerRebasedPositions += r.rebased;
      if (stale !== undefined && r.committed) this.soak.report.staleDeletes++;
      // Every matched row is dead now: deleted by this commit, already deleted, or dropped by a compaction.
      this.soak.deletedIds(matched);
      return r.committed;
    } catch (e) {
      if (!(e instanceof DataFileRemovedError)) throw e;
      this.soak.writerAborts.push(e);
      this.soak.report.writerAborts++;
      return false;
    }
  }

  /** Equality deletes on `id` (with `category`, the partition source) of rows of one partition. */
  private async equalityDelete(): Promise<boolean> {
    const category = CATEGORIES[this.int(CATEGORIES.length)];
    const doomed = this.pickLive(1 + this.int(4), category);
    if (doomed.length === 0) return false;
    const t = await this.soak.table();
    const m = t.metadata;
    const schema = currentSchema(m);
    const spec = specById(m, m.defaultSpecId);
    const keys = doomed.map((r) => ({ id: r.id, category: r.category }));
    const file = await writeEqualityDeleteFile(t.io, m, schema, spec, { category }, [1], keys);
    let attempts = 0;
    await commitChanges(t, () => {
      attempts++;
      return { addedDeleteFiles: [file], operation: 'delete' };
    });
    this.soak.attempts(attempts);
    this.soak.deletedIds(doomed.map((r) => r.id as bigint));
    return true;
  }

  /**
   * Replaces one partition's rows with new rows, as INSERT OVERWRITE does. Each attempt removes
   * the partition's data files of its base; the model drops the ids the winning attempt saw live.
   */
  private async overwrite(): Promise<void> {
    const category = CATEGORIES[this.int(CATEGORIES.length)];
    const t = await this.soak.table();
    const rows = this.newRows(3 + this.int(6), category);
    const added = await writeDataFiles(t.io, t.metadata, rows);
    let attempts = 0;
    let removedFiles: string[] = [];
    let removedIds: bigint[] = [];
    await commitChanges(t, async (base) => {
      attempts++;
      removedFiles = (await planFiles(base.io, base.metadata)).tasks.map((task) => task.dataFile).filter((f) => f.partition.category === category).map((f) => f.filePath);
      removedIds = [];
      for await (const r of scanRows(base.io, base.metadata)) if (r.category === category) removedIds.push(r.id as bigint);
      return { addedDataFiles: added, removedFiles };
    });
    this.soak.attempts(attempts);
    for (const f of removedFiles) this.soak.removedByOverwrite.add(normalizePath(f));
    this.soak.deletedIds(removedIds);
    this.soak.appendedRows(rows);
  }

  async op(): Promise<void> {
    const x = this.int(100);
    const op: WriterOp = x < 35 || this.soak.live().length < 10 ? 'append' : x < 70 ? 'position-delete' : x < 92 ? 'equality-delete' : 'overwrite';
    if (op === 'append') await this.append();
    else if (op === 'position-delete') {
      if (!(await this.positionDelete())) return;
    } else if (op === 'equality-delete') {
      if (!(await this.equalityDelete())) return;
    } else await this.overwrite();
    this.soak.report.writerCommits[op]++;
  }

  async run(): Promise<void> {
    for (let i = 0; i < WRITER_OPS && this.soak.inBudget(); i++) {
      await this.op();
      await delay(50 + this.int(200));
    }
  }
}

function sortById(rows: Row[]): Row[] {
  return rows.sort((a, b) => ((a.id as bigint) < (b.id as bigint) ? -1 : 1));
}

/** The model's rows as Java's harness prints them (decimal(10, 2) as a plain string). */
function canonical(rows: readonly Row[]): CanonicalRow[] {
  const decimal = (unscaled: bigint): string => `${unscaled / 100n}.${(unscaled % 100n).toString().padStart(2, '0')}`;
  return rows.map((r) => ({ id: Number(r.id), category: String(r.category), amount: decimal(r.amount as bigint) }));
}

describe('soak: concurrent writers and repeated compactions on moto S3', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  for (const formatVersion of [2, 3] as const) {
    // The two tables are independent: they run at once.
    it.concurrent(`v${formatVersion}: ${WRITERS} writers and a compaction loop at once; the table keeps the model's rows; Java reads them`, async () => {
      const s3Endpoint = testS3Endpoint();
      const location = `s3://${await freshBucket()}/warehouse/soak`;
      await createNewTable(fileIOFor(location, { s3Endpoint }), location, {
        formatVersion,
        schema: SMALL_TABLE_SCHEMA,
        partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
        // Four loops commit to one table: retry long enough that nobody starves.
        properties: { 'commit.retry.num-retries': '40', 'commit.retry.min-wait-ms': '20', 'commit.retry.max-wait-ms': '1000' },
      });
      const soak = new Soak(location, s3Endpoint, formatVersion);
      const writers = Array.from({ length: WRITERS }, (_, w) => new Writer(soak, w, SEED + formatVersion * 100 + w));
      for (const w of writers) await w.append();

      await Promise.all([soak.compactions(), ...writers.map((w) => w.run())]);
      soak.report.finalRows = soak.live().length;
      console.log(`soak v${formatVersion} (seeds ${SEED + formatVersion * 100}+w): ${JSON.stringify(soak.report)}`);

      const rows: Row[] = [];
      const t = await soak.table();
      for await (const r of scanRows(t.io, t.metadata)) rows.push(r);
      expect(sortById(rows)).toEqual(soak.live());

      expect(soak.report.commitRebases + soak.report.writerRebasedPositions).toBeGreaterThan(0);
      expect(soak.report.groupsCommitted).toBeGreaterThan(0);
      // Aborts are genuine conflicts only: an input (or the file a delete aimed at) an overwrite removed.
      for (const a of soak.groupAborts) {
        expect(a.reason).toMatch(/is no longer live/);
        expect(a.inputs.some((i) => soak.removedByOverwrite.has(i)), a.reason).toBe(true);
      }
      for (const e of soak.writerAborts) {
        expect([...soak.removedByOverwrite].some((f) => e.message.includes(f)), e.message).toBe(true);
      }

      const local = join(tempDir(), 'soak');
      await relocateTable(location, local, { s3Endpoint });
      expect(sortRows(await javaRead(local))).toEqual(canonical(soak.live()));
    }, 600_000);
  }
});
