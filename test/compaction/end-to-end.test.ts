/**
 * Compaction end to end: plan → rewrite → commit on real tables (the fixtures, tables we
 * write, tables Java writes), checked by Java Iceberg 1.12 (and PyIceberg where it can read
 * the table): the live rows are exactly those read before, and files drop where they should.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ObjectStoreCatalog } from '../../lib/catalog/object-store-catalog.js';
import { loadTable, type Table } from '../../lib/catalog/table.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import { ValidationError } from '../../lib/errors.js';
import type { FileIO } from '../../lib/io/file-io.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { readManifest } from '../../lib/iceberg/manifest.js';
import { readManifestList } from '../../lib/iceberg/manifest-list.js';
import { currentSchema, specsById } from '../../lib/iceberg/table-metadata.js';
import type { Row } from '../../lib/iceberg/values.js';
import { runCompaction } from '../../lib/pipeline/local-runner.js';
import { planStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { appendRows, createNewTable, deleteByEquality, deleteRows, updateSchema, updateSpec } from '../../lib/table/operations.js';
import { relocateTable } from '../../lib/table/relocate.js';
import { sortRows, type CanonicalRow } from '../support/canonical-rows.js';
import { FIXTURE_TABLES, FIXTURES, tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaInfo, javaRead, javaWrite, JAVA_SCENARIOS } from '../support/java.js';
import { pyRead } from '../support/pyiceberg.js';
import { DECODE_ONLY } from '../support/compaction.js';

const io = new LocalFileIO();

const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'category', required: false, type: { type: 'string' as const } },
    { id: 3, name: 'amount', required: false, type: { type: 'decimal' as const, precision: 10, scale: 2 } },
    { id: 4, name: 'ts', required: false, type: { type: 'timestamptz' as const } },
  ],
};

function row(id: number, category: string): Row {
  return { id: BigInt(id), category, amount: BigInt(id * 101), ts: 1_700_000_000_000_000n + BigInt(id) * 3_600_000_000n };
}

/** Many small commits, deletes of every kind the version allows, a schema and a spec change. */
/** For the decode path's faults (dropRow, failAfterOutputs): no input merged (merges are tested apart). */

async function streamingTable(formatVersion: 2 | 3, partitioned: boolean, eq: boolean, properties: Record<string, string> = {}): Promise<Table> {
  const location = join(tempDir(), `stream-v${formatVersion}-${partitioned ? 'p' : 'u'}${eq ? '-eq' : ''}`);
  let t = await createNewTable(io, location, {
    formatVersion,
    schema: SCHEMA,
    properties,
    ...(partitioned ? { partitionFields: [{ sourceId: 2, name: 'category', transform: { kind: 'identity' as const } }] } : {}),
  });
  let id = 0;
  for (let c = 0; c < 8; c++) {
    const rows: Row[] = [];
    for (let i = 0; i < 20; i++) rows.push(row(++id, ['a', 'b', 'c'][i % 3]));
    t = await appendRows(t, rows);
  }
  t = (await deleteRows(t, (r) => (r.id as bigint) % 7n === 0n)).table;
  t = (await deleteRows(t, (r) => (r.id as bigint) % 11n === 0n)).table;
  if (eq) t = await deleteByEquality(t, [1], [row(5, 'c'), row(6, 'a'), row(100, 'a')].map((r) => ({ id: r.id, category: r.category })));
  t = await updateSchema(t, [...SCHEMA.fields, { id: 5, name: 'note', required: false, type: { type: 'string' } }]);
  if (partitioned) {
    t = await updateSpec(t, [
      { sourceId: 2, name: 'category', transform: { kind: 'identity' } },
      { sourceId: 1, name: 'id_bucket', transform: { kind: 'bucket', numBuckets: 2 } },
    ]);
  }
  for (let c = 0; c < 4; c++) {
    const rows: Row[] = [];
    for (let i = 0; i < 10; i++) rows.push({ ...row(++id, ['a', 'b'][i % 2]), note: `n${id}` });
    t = await appendRows(t, rows);
  }
  return loadTable(location);
}

async function counts(location: string): Promise<{ data: number; deletes: number }> {
  const t = await loadTable(location);
  const p = await planFiles(t.io, t.metadata);
  return { data: p.tasks.length, deletes: p.deleteFiles.length };
}

/** Every file under the table folder that the current snapshot does not reference. */
async function unreferenced(location: string): Promise<string[]> {
  const t = await loadTable(location);
  const referenced = new Set<string>();
  for (const s of t.metadata.snapshots) {
    referenced.add(s.manifestList!);
    for (const m of await readManifestList(t.io, s.manifestList!, t.metadata.formatVersion)) {
      referenced.add(m.manifestPath);
      for await (const e of readManifest(t.io, m, specsById(t.metadata), currentSchema(t.metadata))) referenced.add(e.dataFile.filePath);
    }
    for (const m of (s.summary['packice.compaction-maps'] ?? '').split(',').filter(Boolean)) referenced.add(m);
  }
  const all: string[] = [];
  const walk = (d: string): void => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else all.push(p);
    }
  };
  walk(location);
  return all
    .filter((p) => !referenced.has(p) && !/metadata\/(v\d+\.metadata\.json|version-hint\.text)$/.test(p))
    .map((p) => relative(location, p));
}

const SMALL = { minInputFiles: 2, targetFileSizeBytes: 64 * 1024 * 1024 };

describe('compaction keeps every live row, as Java reads it', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  for (const name of FIXTURE_TABLES) {
    it(`fixture ${name}`, async () => {
      const location = join(tempDir(), name);
      await relocateTable(join(FIXTURES, name), location);
      const before = sortRows(await javaRead(location), Object.keys((await javaRead(location))[0])[0]);
      const c0 = await counts(location);
      const report = await runCompaction({ table: { location }, policy: SMALL }, { parallelism: 1 });
      expect(report.commit?.abortedGroups ?? []).toEqual([]);
      const key = Object.keys(before[0])[0];
      expect(sortRows(await javaRead(location), key)).toEqual(before);
      const c1 = await counts(location);
      // Every fixture has deletes on its files: major compaction applies them all.
      expect(c0.deletes).toBeGreaterThan(0);
      expect(c1.deletes).toBe(0);
      expect(c1.data).toBeLessThanOrEqual(c0.data);
      // Flink's equality deletes (keys on a date and a string) are probed on their key columns and
      // dropped from the pages: the inputs are merged, not decoded, and Java reads the same rows.
      if (name === 'iceberg_v2_delete_equality_partitioned') {
        expect(report.results.length).toBeGreaterThan(0);
        for (const r of report.results) expect(r.inputPaths).toMatchObject({ copied: 0, decoded: 0, merged: expect.any(Number) as number });
        expect(report.results.every((r) => (r.inputPaths?.merged ?? 0) > 0)).toBe(true);
      }
      if (name !== 'iceberg_v2_delete_equality_partitioned') {
        const t = await loadTable(location);
        expect(sortRows(await pyRead(t.metadataLocation), key)).toEqual(before);
      }
    });
  }

  for (const [v, partitioned, eq] of [
    [2, true, true],
    [2, false, false],
    [3, true, false],
    [3, false, false],
  ] as const) {
    it(`our v${v} ${partitioned ? 'partitioned' : 'unpartitioned'} table${eq ? ' with equality deletes' : ''}, schema${partitioned ? ' and spec' : ''} change`, async () => {
      const t = await streamingTable(v, partitioned, eq);
      const before = sortRows(await javaRead(t.location));
      const c0 = await counts(t.location);
      const report = await runCompaction({ table: { location: t.location }, policy: SMALL }, { parallelism: 2 });
      expect(report.commit?.abortedGroups ?? []).toEqual([]);
      expect(sortRows(await javaRead(t.location))).toEqual(before);
      if (!eq) expect(sortRows(await pyRead((await loadTable(t.location)).metadataLocation))).toEqual(before);
      const c1 = await counts(t.location);
      expect(c1.data).toBeLessThan(c0.data);
      expect(c1.deletes).toBe(0);
      // Checksums in the report: rows in = rows out = live rows.
      expect(report.summary.rowsIn).toBe(before.length);
      expect(report.summary.rowsOut).toBe(before.length);
      // Converges: files of the old spec land next to new-spec files of the same new
      // partition, so one more run may merge those; after it nothing is left to do.
      for (let run = 0; run < 2; run++) {
        const again = await runCompaction({ table: { location: t.location }, policy: SMALL }, { parallelism: 1 });
        if (run === 1 || !partitioned) expect(again.plan.groups).toEqual([]);
      }
      expect(sortRows(await javaRead(t.location))).toEqual(before);
    });
  }

  for (const scenario of JAVA_SCENARIOS) {
    it(`Java-written ${scenario}`, async () => {
      const location = join(tempDir(), scenario);
      await javaWrite(scenario, location);
      const before = sortRows(await javaRead(location));
      const info0 = await javaInfo(location);
      const report = await runCompaction({ table: { location }, policy: { ...SMALL, minInputFiles: 1, deleteFileThreshold: 1 } }, { parallelism: 1 });
      expect(report.commit?.abortedGroups ?? []).toEqual([]);
      expect(sortRows(await javaRead(location))).toEqual(before);
      const info1 = await javaInfo(location);
      expect(info1.dataFiles).toBeLessThanOrEqual(info0.dataFiles);
      if (info0.deleteFiles > 0) expect(info1.deleteFiles).toBeLessThan(info0.deleteFiles);
    });
  }
});

describe('failures leave the table readable and unchanged; a rerun completes', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  it('after some outputs are written', async () => {
    const t = await streamingTable(2, true, false, DECODE_ONLY);
    const before = sortRows(await javaRead(t.location));
    const snapshot = t.metadata.currentSnapshotId;
    const failed = await runCompaction(
      { table: { location: t.location }, policy: SMALL },
      { parallelism: 0, rewrite: { faults: { failAfterOutputs: 1 } } },
    );
    expect(failed.commit!.abortedGroups.length).toBeGreaterThan(0);
    expect((await loadTable(t.location)).metadata.currentSnapshotId).toBe(snapshot);
    expect(sortRows(await javaRead(t.location))).toEqual(before);
    const ok = await runCompaction({ table: { location: t.location }, policy: SMALL }, { parallelism: 0 });
    expect(ok.commit?.abortedGroups ?? []).toEqual([]);
    expect(sortRows(await javaRead(t.location))).toEqual(before);
    // Whatever the failed run left behind is referenced by nothing.
    for (const f of await unreferenced(t.location)) expect(f).toMatch(/^(data|metadata)\//);
  });

  it('before the commit (the run stops after rewriting)', async () => {
    const t = await streamingTable(3, true, false);
    const before = sortRows(await javaRead(t.location));
    const plan = await planStep({ table: { location: t.location }, policy: SMALL });
    const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));
    expect(results.length).toBeGreaterThan(0);
    // No commit: the outputs exist but nothing references them.
    expect(sortRows(await javaRead(t.location))).toEqual(before);
    const leftovers = await unreferenced(t.location);
    for (const r of results) for (const o of r.outputs) expect(leftovers).toContain(relative(t.location, o.filePath));
    const ok = await runCompaction({ table: { location: t.location }, policy: SMALL }, { parallelism: 0 });
    expect(ok.commit?.abortedGroups ?? []).toEqual([]);
    expect(sortRows(await javaRead(t.location))).toEqual(before);
  });

  it('during the commit (the metadata swap fails)', async () => {
    const t = await streamingTable(2, false, false);
    const before = sortRows(await javaRead(t.location));
    const plan = await planStep({ table: { location: t.location }, policy: SMALL });
    const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));
    const failing: FileIO = Object.assign(Object.create(io) as FileIO, {
      createIfAbsent: async (path: string): Promise<void> => {
        throw new Error(`injected failure creating ${path}`);
      },
    });
    const failingTable = { ...t, io: failing, catalog: new ObjectStoreCatalog(failing, t.location) };
    await expect(commitCompaction(failingTable, plan, results)).rejects.toThrow(/injected failure/);
    expect((await loadTable(t.location)).metadata.currentSnapshotId).toBe(t.metadata.currentSnapshotId);
    expect(sortRows(await javaRead(t.location))).toEqual(before);
    // Committing the same results again works (the commit step is idempotent and retryable).
    const done = await commitCompaction(await loadTable(t.location), plan, results);
    expect(done.committedGroups.length).toBe(plan.groups.length);
    expect(sortRows(await javaRead(t.location))).toEqual(before);
    // And once more: recognised as already committed, no new snapshot.
    const again = await commitCompaction(await loadTable(t.location), plan, results);
    expect(again.snapshotId).toBe(done.snapshotId);
  });

  it('a checksum mismatch (a dropped row) commits nothing', async () => {
    const t = await streamingTable(2, true, false, DECODE_ONLY);
    const snapshot = t.metadata.currentSnapshotId;
    const plan = await planStep({ table: { location: t.location }, policy: SMALL });
    await expect(rewriteStep({ plan, groupId: plan.groups[0].id }, { faults: { dropRow: true } })).rejects.toThrow(ValidationError);
    const report = await runCompaction(
      { table: { location: t.location }, policy: SMALL },
      { parallelism: 0, rewrite: { faults: { dropRow: true } } },
    );
    expect(report.results).toEqual([]);
    // Every group failed: the commit commits nothing and reports each, as the state machine's does.
    expect(report.commit!.snapshotId).toBeNull();
    expect(report.commit!.abortedGroups.map((a) => a.groupId)).toEqual(report.plan.groups.map((g) => g.id));
    expect(report.commit!.abortedGroups[0].reason).toMatch(/^rewrite failed: ValidationError: .*(checksum|row)/i);
    expect((await loadTable(t.location)).metadata.currentSnapshotId).toBe(snapshot);
  });
});

export type { CanonicalRow };

describe('partial progress', () => {
  it('commits every K groups as its own replace snapshot', async () => {
    const t = await streamingTable(2, true, false);
    const before = (await loadTable(t.location)).metadata.snapshots.length;
    const plan = await planStep({ table: { location: t.location }, policy: SMALL });
    expect(plan.groups.length).toBeGreaterThanOrEqual(3);
    const report = await runCompaction({ table: { location: t.location }, policy: SMALL }, { parallelism: 0, commit: { groupsPerCommit: 1 } });
    expect(report.commit?.committedGroups.length).toBe(plan.groups.length);
    const after = (await loadTable(t.location)).metadata.snapshots;
    expect(after.length - before).toBe(plan.groups.length);
    for (const s of after.slice(before)) {
      expect(s.summary.operation).toBe('replace');
      expect(s.summary['packice.compaction-groups']).toBe('1');
      expect(s.summary['packice.compaction-maps']).toMatch(/compaction-maps\/.*\.avro$/);
    }
  });
});
