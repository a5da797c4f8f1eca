/**
 * Soak against moto S3 (issue 7, must-show 3): writers append, delete by position (position delete
 * files on v2, deletion vectors on v3), delete by equality and overwrite whole partitions, while
 * compactions run again and again through the pipeline steps (plan → rewrite → commit). Writers
 * commit between plan and rewrite, between rewrite and commit, and inside the compaction commit
 * (just before its first metadata swap, which makes it conflict, reload and retry). Every writer
 * commits against the current snapshot through lib/table/operations.ts.
 *
 * Bounded in operations, not time, and seeded: the same seed gives the same operation sequence.
 * An in-memory model follows every writer; after each compaction the table's rows equal it, and at
 * the end Java Iceberg 1.12 reads the same rows (from a relocated copy on disk: the Java harness
 * has no S3). The run prints its commits, conflicts, rebases and aborts; it asserts deletes were
 * rebased and that every aborted group lost an input to an overwrite (a genuine conflict).
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { CompactionCommitResult, GroupResult, Plan } from '../../lib/compaction/messages.js';
import { normalizePath } from '../../lib/io/path.js';
import { fileIOFor } from '../../lib/io/index.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import type { Row } from '../../lib/iceberg/values.js';
import { planStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { writeDataFiles } from '../../lib/table/data-writer.js';
import { appendRows, commitChanges, createNewTable, deleteByEquality, deleteRows } from '../../lib/table/operations.js';
import { relocateTable } from '../../lib/table/relocate.js';
import { scanRows } from '../../lib/table/scan.js';
import { type CanonicalRow, sortRows } from '../support/canonical-rows.js';
import { tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { RecordingIO } from '../support/recording-io.js';
import { seededRandom } from '../support/seeded-random.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { SMALL_TABLE_SCHEMA } from '../support/small-table.js';

const SEED = 0x5eed_0007;
/** Compactions per table; writers run 3-5 operations around each. */
const COMPACTIONS = 6;
const CATEGORIES = ['a', 'b', 'c'] as const;

type WriterOp = 'append' | 'position-delete' | 'equality-delete' | 'overwrite';

interface Report {
  formatVersion: number;
  writerCommits: Record<WriterOp, number>;
  compactions: number;
  compactionCommits: number;
  /** Compaction commit attempts that met a newer table version and retried. */
  conflicts: number;
  /** Concurrent position delete files and deletion vectors the compaction commits rebased. */
  rebases: number;
  groupsCommitted: number;
  /** Groups aborted; each lost an input to an overwrite during its compaction. */
  aborts: number;
  finalRows: number;
}

/** A writer and its model: every operation loads the current table, commits, and updates the model. */
class Soak {
  private readonly next: () => number;
  private nextId = 0n;
  /** The live rows the table must hold, by id. */
  readonly model = new Map<bigint, Row>();
  readonly report: Report;
  /** Data files removed by overwrites during the current compaction. */
  removedByOverwrite = new Set<string>();

  constructor(
    readonly location: string,
    readonly s3Endpoint: string,
    formatVersion: 2 | 3,
    seed: number,
  ) {
    this.next = seededRandom(seed);
    this.report = {
      formatVersion,
      writerCommits: { append: 0, 'position-delete': 0, 'equality-delete': 0, overwrite: 0 },
      compactions: 0,
      compactionCommits: 0,
      conflicts: 0,
      rebases: 0,
      groupsCommitted: 0,
      aborts: 0,
      finalRows: 0,
    };
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  private table(): Promise<Table> {
    return loadTable(this.location, { s3Endpoint: this.s3Endpoint });
  }

  private newRows(n: number, category?: string): Row[] {
    return Array.from({ length: n }, () => {
      const id = this.nextId++;
      return { id, category: category ?? CATEGORIES[this.int(CATEGORIES.length)], amount: id * 7n };
    });
  }

  /** `n` distinct live ids, picked in id order so the pick depends on the seed alone. */
  private pickLive(n: number): Row[] {
    const ids = [...this.model.keys()].sort((a, b) => (a < b ? -1 : 1));
    const picked: Row[] = [];
    for (let i = 0; i < n && ids.length > 0; i++) picked.push(this.model.get(ids.splice(this.int(ids.length), 1)[0])!);
    return picked;
  }

  async append(): Promise<void> {
    const rows = this.newRows(4 + this.int(10));
    await appendRows(await this.table(), rows);
    for (const r of rows) this.model.set(r.id as bigint, r);
    this.report.writerCommits.append++;
  }

  async op(): Promise<WriterOp> {
    const x = this.int(100);
    const op: WriterOp = x < 35 ? 'append' : x < 70 ? 'position-delete' : x < 90 ? 'equality-delete' : 'overwrite';
    if (op === 'append' || this.model.size < 10) {
      await this.append();
      return 'append';
    }
    if (op === 'position-delete') {
      const doomed = this.pickLive(1 + this.int(4));
      const ids = new Set(doomed.map((r) => r.id));
      const { deleted } = await deleteRows(await this.table(), (r) => ids.has(r.id as bigint));
      expect(deleted).toBe(doomed.length);
      for (const id of ids) this.model.delete(id as bigint);
    } else if (op === 'equality-delete') {
      const doomed = this.pickLive(1 + this.int(4));
      await deleteByEquality(await this.table(), [1], doomed.map((r) => ({ id: r.id, category: r.category })));
      for (const r of doomed) this.model.delete(r.id as bigint);
    } else {
      // Replace every row of one partition with new rows, as INSERT OVERWRITE does.
      const category = CATEGORIES[this.int(CATEGORIES.length)];
      const t = await this.table();
      const rows = this.newRows(3 + this.int(6), category);
      const removed = (await planFiles(t.io, t.metadata)).tasks.map((task) => task.dataFile).filter((f) => f.partition.category === category);
      const added = await writeDataFiles(t.io, t.metadata, rows);
      await commitChanges(t, { addedDataFiles: added, removedFiles: removed.map((f) => f.filePath) });
      for (const f of removed) this.removedByOverwrite.add(normalizePath(f.filePath));
      for (const [id, r] of this.model) if (r.category === category) this.model.delete(id);
      for (const r of rows) this.model.set(r.id as bigint, r);
    }
    this.report.writerCommits[op]++;
    return op;
  }

  async ops(n: number): Promise<void> {
    for (let i = 0; i < n; i++) await this.op();
  }

  /** plan → writers → rewrite → writers → commit, with one more writer inside the commit half the time. */
  async compaction(): Promise<CompactionCommitResult | undefined> {
    this.removedByOverwrite = new Set();
    const table = { location: this.location, s3Endpoint: this.s3Endpoint };
    const plan: Plan = await planStep({ table, policy: { minInputFiles: 2, deleteFileThreshold: 1 } });
    this.report.compactions++;
    if (plan.groups.length === 0) return undefined;
    await this.ops(this.int(2));
    const results: GroupResult[] = [];
    for (const g of plan.groups) results.push(await rewriteStep({ plan, groupId: g.id }));
    await this.ops(1 + this.int(3));

    const io = new RecordingIO(fileIOFor(this.location, { s3Endpoint: this.s3Endpoint }));
    if (this.int(2) === 0) {
      let interleaved = false;
      io.createIfAbsent = async (path: string, data: Uint8Array): Promise<void> => {
        if (!interleaved && /\.metadata\.json$/.test(path)) {
          interleaved = true;
          await this.op();
        }
        return fileIOFor(this.location, { s3Endpoint: this.s3Endpoint }).createIfAbsent(path, data);
      };
    }
    const commit = await commitCompaction(await loadTable(this.location, { io }), plan, results);
    this.report.conflicts += commit.attempts - 1;
    this.report.rebases += commit.deletesRebased;
    this.report.groupsCommitted += commit.committedGroups.length;
    this.report.aborts += commit.abortedGroups.length;
    if (commit.committedGroups.length > 0) this.report.compactionCommits++;
    // Aborts happen only for genuine conflicts: an input an overwrite removed meanwhile.
    for (const a of commit.abortedGroups) {
      const group = plan.groups.find((g) => g.id === a.groupId)!;
      expect(a.reason).toMatch(/is no longer live/);
      expect(group.inputs.some((i) => this.removedByOverwrite.has(normalizePath(i.file.filePath))), a.reason).toBe(true);
    }
    return commit;
  }

  async rows(): Promise<Row[]> {
    const t = await this.table();
    const rows: Row[] = [];
    for await (const r of scanRows(t.io, t.metadata)) rows.push(r);
    return sortById(rows);
  }

  modelRows(): Row[] {
    return sortById([...this.model.values()]);
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

describe('soak: writers and repeated compactions on moto S3', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  for (const formatVersion of [2, 3] as const) {
    // The two tables are independent: they run at once, each in its own seeded sequence.
    it.concurrent(`v${formatVersion}: the table keeps the model's rows through ${COMPACTIONS} compactions; Java reads them`, async () => {
      const s3Endpoint = testS3Endpoint();
      const location = `s3://${await freshBucket()}/warehouse/soak`;
      await createNewTable(fileIOFor(location, { s3Endpoint }), location, {
        formatVersion,
        schema: SMALL_TABLE_SCHEMA,
        partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' } }],
      });
      const soak = new Soak(location, s3Endpoint, formatVersion, SEED + formatVersion);
      for (let i = 0; i < 6; i++) await soak.append();

      for (let i = 0; i < COMPACTIONS; i++) {
        await soak.ops(1 + soak.int(2));
        await soak.compaction();
        expect(await soak.rows(), `rows after compaction ${i + 1}`).toEqual(soak.modelRows());
      }
      soak.report.finalRows = soak.model.size;
      console.log(`soak v${formatVersion} (seed ${SEED + formatVersion}): ${JSON.stringify(soak.report)}`);

      expect(soak.report.rebases).toBeGreaterThan(0);
      expect(soak.report.conflicts).toBeGreaterThan(0);
      expect(soak.report.groupsCommitted).toBeGreaterThan(0);

      const local = join(tempDir(), 'soak');
      await relocateTable(location, local, { s3Endpoint });
      expect(sortRows(await javaRead(local))).toEqual(canonical(soak.modelRows()));
    }, 600_000);
  }
});
