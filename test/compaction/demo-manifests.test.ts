/**
 * The demo table's manifests (issue 11, must-show 3): after `compact` (whose --json stays under
 * 10 KB for the demo, issue 12), the current snapshot
 * lists no more manifests than partitions touched plus a handful, and Java Iceberg 1.12 and
 * PyIceberg read exactly the rows they read before; `rewrite-manifests` on the uncompacted demo
 * leaves one manifest per partition group (each partition in exactly one manifest), read alike.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable } from '../../lib/catalog/table.js';
import { buildDemoTable } from '../../lib/table/demo-table.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { readManifest } from '../../lib/iceberg/manifest.js';
import { readManifestList, type ManifestFile } from '../../lib/iceberg/manifest-list.js';
import { partitionKey } from '../../lib/iceberg/partition.js';
import { rewriteManifests } from '../../lib/maintenance/rewrite-manifests.js';
import { currentSchema, currentSnapshot, specsById } from '../../lib/iceberg/table-metadata.js';
import { sortRows, type CanonicalRow } from '../support/canonical-rows.js';
import { tempDir } from '../support/fixtures.js';
import { runMain } from '../support/cli.js';
import { javaRead } from '../support/java.js';
import { pyRead } from '../support/pyiceberg.js';

const io = new LocalFileIO();
const KEY = 'event_id';

let demo: string;
let rowsBefore: CanonicalRow[];

/** A fresh copy of the uncompacted demo table. */
function copyDemo(): string {
  const to = join(tempDir('packice-demo-copy-'), 'demo');
  cpSync(demo, to, { recursive: true });
  return to;
}

async function currentManifests(location: string): Promise<{ count: number; summary: Readonly<Record<string, string>>; manifests: ManifestFile[] }> {
  const t = await loadTable(location, { io });
  const s = currentSnapshot(t.metadata)!;
  const manifests = await readManifestList(io, s.manifestList!, t.metadata.formatVersion);
  return { count: manifests.length, summary: s.summary, manifests };
}

/** For each content, how many manifests hold each partition's live entries. */
async function manifestsPerPartition(location: string): Promise<Map<string, number>> {
  const t = await loadTable(location, { io });
  const { manifests } = await currentManifests(location);
  const seen = new Map<string, Set<string>>();
  for (const m of manifests) {
    for await (const e of readManifest(io, m, specsById(t.metadata), currentSchema(t.metadata))) {
      if (e.status === 2) continue;
      const k = `${m.content}:${partitionKey(m.partitionSpecId, e.dataFile.partition)}`;
      (seen.get(k) ?? seen.set(k, new Set()).get(k)!).add(m.manifestPath);
    }
  }
  return new Map([...seen].map(([k, v]) => [k, v.size]));
}

async function expectSameRows(location: string): Promise<void> {
  expect(sortRows(await javaRead(location), KEY)).toEqual(rowsBefore);
  expect(sortRows(await pyRead((await loadTable(location, { io })).metadataLocation), KEY)).toEqual(rowsBefore);
}

beforeAll(async () => {
  // The demo as `packice demo` builds it: 240 commits of 300 rows, 24 deletes.
  demo = join(tempDir('packice-demo-'), 'demo');
  await buildDemoTable(demo);
  rowsBefore = sortRows(await javaRead(demo), KEY);
  expect(rowsBefore.length).toBeGreaterThan(60_000);
}, 600_000);

describe('the demo table’s manifests', () => {
  it('after compact: at most the partitions touched plus a handful; Java and PyIceberg read the same rows', { timeout: 900_000 }, async () => {
    const location = copyDemo();
    const r = await runMain(['compact', location, '--json']);
    expect(r.exitCode ?? 0, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { groups: { status: string }[]; summary: { filesIn: number } };
    expect(report.summary.filesIn).toBeGreaterThan(900);
    expect(report.groups.length).toBeGreaterThan(8);
    expect(report.groups.every((g) => g.status === 'committed')).toBe(true);
    // compact --json is what automation reads (issue 12): the outcome of every group, under 10 KB
    // for the whole demo, not every input file's statistics (that is --verbose).
    expect(Buffer.byteLength(r.stdout)).toBeLessThan(10 * 1024);
    const { count, summary } = await currentManifests(location);
    const touched = Number(summary['changed-partition-count']);
    expect(touched).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(touched + 4);
    await expectSameRows(location);
  });

  it('rewrite-manifests on the uncompacted demo: one manifest per partition group, the same rows', { timeout: 900_000 }, async () => {
    const location = copyDemo();
    const before = await currentManifests(location);
    const dry = await runMain(['rewrite-manifests', location, '--dry-run', '--json']);
    expect(dry.exitCode ?? 0).toBe(0);
    expect((await currentManifests(location)).manifests).toEqual(before.manifests);
    const planned = JSON.parse(dry.stdout) as { manifestsAfter: number; manifestsReplaced: number };
    expect(planned.manifestsReplaced).toBe(before.count);

    const r = await runMain(['rewrite-manifests', location, '--json']);
    expect(r.exitCode ?? 0).toBe(0);
    const after = await currentManifests(location);
    expect(after.summary).toMatchObject({ operation: 'replace', 'manifests-replaced': String(before.count) });
    expect(after.summary['total-data-files']).toBe(before.summary['total-data-files']);
    // The demo's manifests fit the 8 MiB target: one data and one delete manifest.
    expect(after.count).toBe(planned.manifestsAfter);
    expect(after.count).toBe(2);
    expect([...(await manifestsPerPartition(location)).values()].every((n) => n === 1)).toBe(true);
    await expectSameRows(location);

    // A smaller target: several manifests, each partition still in exactly one.
    const t = await loadTable(location, { io });
    const bytes = after.manifests.reduce((s, m) => s + Number(m.manifestLength), 0);
    const small = await rewriteManifests(t, { targetSizeBytes: Math.ceil(bytes / 6) });
    expect(small.manifestsAfter).toBeGreaterThan(4);
    expect((await currentManifests(location)).count).toBe(small.manifestsAfter);
    expect([...(await manifestsPerPartition(location)).values()].every((n) => n === 1)).toBe(true);
    await expectSameRows(location);
  });
});
