/**
 * The demo table's manifests (issue 11, must-show 3): after `compact`, the current snapshot
 * lists no more manifests than partitions touched plus a handful, and Java Iceberg 1.12 and
 * PyIceberg read exactly the rows they read before.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTable } from '../../lib/catalog/table.js';
import { buildDemoTable } from '../../lib/cli/demo.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { readManifestList } from '../../lib/iceberg/manifest-list.js';
import { currentSnapshot } from '../../lib/iceberg/table-metadata.js';
import { runCompaction } from '../../lib/pipeline/local-runner.js';
import { sortRows, type CanonicalRow } from '../support/canonical-rows.js';
import { tempDir } from '../support/fixtures.js';
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

async function currentManifests(location: string): Promise<{ count: number; summary: Readonly<Record<string, string>> }> {
  const t = await loadTable(location, { io });
  const s = currentSnapshot(t.metadata)!;
  return { count: (await readManifestList(io, s.manifestList!, t.metadata.formatVersion)).length, summary: s.summary };
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
    const report = await runCompaction({ table: { location } }, {});
    expect(report.summary.filesIn).toBeGreaterThan(900);
    const { count, summary } = await currentManifests(location);
    const touched = Number(summary['changed-partition-count']);
    expect(touched).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(touched + 4);
    expect(sortRows(await javaRead(location), KEY)).toEqual(rowsBefore);
    expect(sortRows(await pyRead((await loadTable(location, { io })).metadataLocation), KEY)).toEqual(rowsBefore);
  });
});
