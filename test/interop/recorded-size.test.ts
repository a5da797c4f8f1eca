/**
 * Tables whose manifests record a wrong file_size_in_bytes (engines have written such tables).
 * Java 1.12's generic reader opens a delete file by its location alone (DeleteFilter.loadInputFile),
 * reads a deletion vector at its blob's offset and length whatever size the Puffin file is said to
 * have (BaseDeleteLoader.readDV), and opens a data file at the size its manifest records
 * (FileIO.newInputFile(DataFile) in GenericReader). Our scan and our compaction must give the rows
 * Java gives, and fail, naming the file, where Java fails.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Table } from '../../lib/catalog/table.js';
import { loadTable } from '../../lib/catalog/table.js';
import type { RunReport } from '../../lib/pipeline/local-runner.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { ensureRoaring, PositionDeleteIndex } from '../../lib/iceberg/deletion-vector.js';
import type { DataFile } from '../../lib/iceberg/manifest.js';
import { planFiles } from '../../lib/iceberg/scan-planning.js';
import { currentSchema, specById } from '../../lib/iceberg/table-metadata.js';
import type { Row } from '../../lib/iceberg/values.js';
import { writeDataFiles } from '../../lib/table/data-writer.js';
import { writeDeletionVectorFile, writeEqualityDeleteFile, writePositionDeleteFile } from '../../lib/table/delete-writer.js';
import { appendRows, commitChanges, createNewTable } from '../../lib/table/operations.js';
import { relocateTable } from '../../lib/table/relocate.js';
import { readTask } from '../../lib/table/scan.js';
import { parseJsonLines, sortRows, type CanonicalRow } from '../support/canonical-rows.js';
import { runMain } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaRead } from '../support/java.js';
import { pyRead } from '../support/pyiceberg.js';

const io = new LocalFileIO();

const SCHEMA = {
  type: 'struct' as const,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' as const } },
    { id: 2, name: 'name', required: false, type: { type: 'string' as const } },
  ],
};

const row = (id: number): Row => ({ id: BigInt(id), name: `row ${id}` });
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** What the manifest will claim instead of the real size. */
type Lie = 'larger' | 'smaller';
const recorded = (real: bigint, lie: Lie): bigint => (lie === 'larger' ? real * 2n + 100n : real / 2n);

/** The same entry with a wrong size, as a writer that miscounted would commit it. */
function misrecorded(f: DataFile, lie: Lie): DataFile {
  const real = BigInt(statSync(f.filePath).size);
  expect(f.fileSizeInBytes).toBe(real);
  return { ...f, fileSizeInBytes: recorded(real, lie) };
}

/** Two appends of ids 1–10 and 11–20 into an unpartitioned table. */
async function twoFiles(formatVersion: 2 | 3): Promise<Table> {
  const location = join(tempDir('packice-size-'), `v${formatVersion}`);
  let t = await createNewTable(io, location, { formatVersion, schema: SCHEMA });
  t = await appendRows(t, range(1, 10).map(row));
  return appendRows(t, range(11, 20).map(row));
}

type Positions = ReadonlyMap<bigint, { readonly dataFile: DataFile; readonly pos: bigint }>;

/** Data file and position of each id, read before any delete is added. */
async function whereIs(t: Table): Promise<Positions> {
  const out = new Map<bigint, { dataFile: DataFile; pos: bigint }>();
  for (const task of (await planFiles(io, t.metadata)).tasks) {
    for await (const rows of readTask(io, t.metadata, task, currentSchema(t.metadata), { positions: true })) {
      for (const r of rows) out.set(r.id as bigint, { dataFile: task.dataFile, pos: r._pos as bigint });
    }
  }
  return out;
}

async function positionDeletes(t: Table, at: Positions, ids: readonly number[], lie: Lie): Promise<Table> {
  const m = t.metadata;
  const deletes = ids.map((id) => ({ filePath: at.get(BigInt(id))!.dataFile.filePath, pos: at.get(BigInt(id))!.pos }));
  const f = await writePositionDeleteFile(io, m, currentSchema(m), specById(m, m.defaultSpecId), {}, deletes);
  return commitChanges(t, { addedDeleteFiles: [misrecorded(f, lie)], operation: 'delete' });
}

async function equalityDeletes(t: Table, ids: readonly number[], lie: Lie): Promise<Table> {
  const m = t.metadata;
  const f = await writeEqualityDeleteFile(io, m, currentSchema(m), specById(m, m.defaultSpecId), {}, [1], ids.map((id) => ({ id: BigInt(id) })));
  return commitChanges(t, { addedDeleteFiles: [misrecorded(f, lie)], operation: 'delete' });
}

/** One Puffin file holding one DV for the data file of `ids`, its size misrecorded. */
async function deletionVector(t: Table, at: Positions, ids: readonly number[], lie: Lie): Promise<Table> {
  await ensureRoaring();
  const dataFile = at.get(BigInt(ids[0]))!.dataFile;
  const positions = new PositionDeleteIndex(ids.map((id) => at.get(BigInt(id))!.pos));
  const files = await writeDeletionVectorFile(io, t.metadata, [{ dataFile, positions }]);
  return commitChanges(t, { addedDeleteFiles: files.map((f) => misrecorded(f, lie)), operation: 'delete' });
}

/** Every delete file of the current snapshot records a size its file does not have, larger and smaller. */
async function expectWrongDeleteSizes(t: Table, count: number): Promise<void> {
  const deletes = (await planFiles(io, t.metadata)).deleteFiles;
  expect(deletes).toHaveLength(count);
  const lies = deletes.map((d) => Math.sign(Number(d.fileSizeInBytes) - statSync(d.filePath).size));
  expect(lies.filter((s) => s > 0).length).toBeGreaterThan(0);
  expect(lies.filter((s) => s < 0).length).toBeGreaterThan(0);
  expect(lies).not.toContain(0);
}

/** `packice scan`, run as bin/packice.js runs it: it must succeed and print every row. */
async function ourScan(location: string): Promise<CanonicalRow[]> {
  const r = await runMain(['scan', location]);
  expect(r.stderr).toBe('');
  expect(r.exitCode ?? 0).toBe(0);
  return sortRows(parseJsonLines(r.stdout, location));
}

/** `packice compact`: every file of the table is a candidate, one worker thread. */
async function ourCompaction(location: string): Promise<RunReport> {
  const r = await runMain([
    'compact', location, '--json', '--verbose', '--parallelism', '1', '--min-input-files', '1', '--delete-file-threshold', '1',
  ]);
  expect(r.exitCode ?? 0, r.stdout).toBe(0);
  return JSON.parse(r.stdout) as RunReport;
}

function ids(rows: readonly CanonicalRow[]): number[] {
  return rows.map((r) => r.id as number);
}

/** The report of a run that rewrote both data files with every delete applied, and proved it. */
function expectFullRewrite(report: RunReport, liveRows: number): void {
  expect(report.commit?.abortedGroups ?? []).toEqual([]);
  expect(report.plan.groups).toHaveLength(1);
  expect(report.commit?.committedGroups).toEqual([report.plan.groups[0].id]);
  expect(report.results[0].checksums.rowsIn).toBe(String(liveRows));
  expect(report.results[0].checksums.rowsOut).toBe(String(liveRows));
  // Estimates come from the recorded sizes: wrong, but numbers a report can print.
  const e = report.plan.groups[0].estimate;
  for (const n of [e.bytesToRead, e.bytesToWrite, report.plan.summary.bytesBefore, report.plan.summary.bytesAfter, report.results[0].bytesRead]) {
    expect(Number.isSafeInteger(n) && n > 0, String(n)).toBe(true);
  }
}

describe('delete files whose manifest records a wrong size', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  it('v2 position and equality deletes: our scan and compaction give the rows Java gives', async () => {
    let t = await twoFiles(2);
    const at = await whereIs(t);
    t = await positionDeletes(t, at, [2, 12], 'larger');
    t = await positionDeletes(t, at, [5, 15], 'smaller');
    const positionsOnly = t.metadata.currentSnapshotId!;
    t = await equalityDeletes(t, [7], 'larger');
    t = await equalityDeletes(t, [17, 18], 'smaller');
    await expectWrongDeleteSizes(t, 4);
    const live = [1, 3, 4, 6, 8, 9, 10, 11, 13, 14, 16, 19, 20];

    const java = sortRows(await javaRead(t.location));
    expect(ids(java)).toEqual(live);
    expect(await ourScan(t.location)).toEqual(java);
    // PyIceberg 0.12 refuses equality deletes; before them it reads the position deletes.
    const javaBefore = sortRows(await javaRead(t.location, positionsOnly));
    expect(ids(javaBefore)).toEqual(range(1, 20).filter((i) => ![2, 12, 5, 15].includes(i)));
    expect(sortRows(await pyRead(t.metadataLocation, positionsOnly))).toEqual(javaBefore);
    // Relocation rewrites position delete files, read by location as Java's rewrite-table-path reads them.
    const copy = join(tempDir('packice-size-'), 'relocated');
    await relocateTable(t.location, copy);
    expect(sortRows(await javaRead(copy))).toEqual(java);

    const report = await ourCompaction(t.location);
    expectFullRewrite(report, live.length);
    const after = await loadTable(t.location);
    expect((await planFiles(io, after.metadata)).deleteFiles).toEqual([]);
    expect(sortRows(await javaRead(t.location))).toEqual(java);
    expect(await ourScan(t.location)).toEqual(java);
    expect(sortRows(await pyRead(after.metadataLocation))).toEqual(java);
  });

  it('v3 deletion vectors in Puffin files of misrecorded size: read by blob offset and length, as Java does', async () => {
    let t = await twoFiles(3);
    const at = await whereIs(t);
    t = await deletionVector(t, at, [2, 3], 'larger');
    t = await deletionVector(t, at, [15], 'smaller');
    await expectWrongDeleteSizes(t, 2);
    const live = range(1, 20).filter((i) => ![2, 3, 15].includes(i));

    const java = sortRows(await javaRead(t.location));
    expect(ids(java)).toEqual(live);
    expect(await ourScan(t.location)).toEqual(java);
    expect(sortRows(await pyRead(t.metadataLocation))).toEqual(java);

    expectFullRewrite(await ourCompaction(t.location), live.length);
    expect(sortRows(await javaRead(t.location))).toEqual(java);
    expect(await ourScan(t.location)).toEqual(java);
  });
});

describe('a data file whose manifest records a wrong size', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 1_200_000);

  for (const lie of ['larger', 'smaller'] as const) {
    it(`${lie} than real: Java fails to read it, and so does our scan, naming the file and both sizes`, async () => {
      const location = join(tempDir('packice-size-'), `data-${lie}`);
      let t = await createNewTable(io, location, { formatVersion: 2, schema: SCHEMA });
      t = await appendRows(t, range(1, 10).map(row));
      const [bad] = await writeDataFiles(io, t.metadata, range(11, 20).map(row));
      const real = statSync(bad.filePath).size;
      t = await commitChanges(t, { addedDataFiles: [misrecorded(bad, lie)] });

      await expect(javaRead(t.location)).rejects.toThrow(/Java harness 'read/);
      const r = await runMain(['scan', t.location]);
      expect(r.exitCode).toBe(1);
      expect(r.stderr.startsWith(`packice: ${bad.filePath}: `), r.stderr).toBe(true);
      expect(r.stderr).toContain(`file_size_in_bytes ${recorded(BigInt(real), lie)}`);
      expect(r.stderr).toContain(`${real} bytes`);
    });
  }
});
