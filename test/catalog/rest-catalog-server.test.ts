/**
 * packice against a real Iceberg REST catalog: the Apache fixture server (RESTCatalogServer from
 * iceberg-open-api's test fixtures, a JdbcCatalog on SQLite, warehouse on local disk or moto S3) on
 * loopback.
 * PyIceberg creates the table through the catalog; `packice info`, `scan`, `compact`, `expire` and
 * `orphans` run on its `rest+http://` name; after each step Java and PyIceberg, loading the table
 * through the same catalog, read the rows packice reads. Two packice commits racing from the same
 * base (two appends; a compaction and a delete): one wins, the other gets the server's 409,
 * refreshes and succeeds on its second attempt.
 */
import { writeFileSync } from 'node:fs';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitTable, loadTable, type Table } from '../../lib/catalog/table.js';
import type { CommitConflictError } from '../../lib/errors.js';
import { localPathOf } from '../../lib/io/local.js';
import { parseS3Location } from '../../lib/io/s3-location.js';
import { produceSnapshot } from '../../lib/iceberg/snapshot-producer.js';
import { commitCompaction } from '../../lib/compaction/commit.js';
import type { GroupResult } from '../../lib/compaction/messages.js';
import { planStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { deleteRows } from '../../lib/table/operations.js';
import { writeDataFiles } from '../../lib/table/data-writer.js';
import { type CanonicalRow, parseJsonLines, sortRows } from '../support/canonical-rows.js';
import { runBin } from '../support/cli.js';
import { ensureJavaHarness, javaInfo, javaRead } from '../support/java.js';
import { pyRestRead, pyRestWrite } from '../support/pyiceberg.js';
import { testS3Client } from '../support/moto.js';
import { type RestCatalogServer, startRestServer } from '../support/rest-server.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';

/**
 * rest_table.py's scenario: ids 1-16, value id * 1000000007, category a/b alternating, 9-12 c,
 * 13-16 a; the race test's rows (ids over 100) in category d.
 */
function pyRow(id: number): CanonicalRow {
  const category = id > 100 ? 'd' : id >= 13 ? 'a' : id >= 9 ? 'c' : id % 2 ? 'a' : 'b';
  return { id, category, value: id * 1_000_000_007 };
}
const PY_LIVE = [1, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 15, 16];

interface Catalog {
  readonly server: RestCatalogServer;
  /** The moto endpoint when the warehouse is on S3. */
  readonly s3Endpoint?: string;
}

const WAREHOUSES: { readonly kind: 'local' | 's3'; start(): Promise<Catalog> }[] = [
  { kind: 'local', start: async () => ({ server: await startRestServer() }) },
  {
    kind: 's3',
    start: async () => {
      const s3Endpoint = testS3Endpoint();
      return { server: await startRestServer({ kind: 's3', endpoint: s3Endpoint, bucket: await freshBucket() }), s3Endpoint };
    },
  },
];

let tables = 0;

// Every step runs packice, Java and PyIceberg as processes; the flow takes ~1 min on a busy machine.

/** A new table name in the server's catalog. */
function tableName(c: Catalog): string {
  return `rest+${c.server.uri}/e2e/t${++tables}`;
}

/** `packice <args>` as a person runs it; fails the test with its stderr on a non-zero exit. */
async function packice(c: Catalog, ...args: string[]): Promise<string> {
  const r = await runBin([...(c.s3Endpoint ? ['--s3-endpoint', c.s3Endpoint] : []), ...args]);
  expect(r.status, `packice ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** packice, Java and PyIceberg each read the table through the catalog; all three must agree. */
async function readEverywhere(c: Catalog, name: string): Promise<CanonicalRow[]> {
  const props = c.server.clientProperties;
  const [ours, java, py] = await Promise.all([
    packice(c, 'scan', name).then((out) => parseJsonLines(out, `packice scan ${name}`)),
    javaRead(name, undefined, props),
    pyRestRead(name, props),
  ]);
  expect(sortRows(java)).toEqual(sortRows(ours));
  expect(sortRows(py)).toEqual(sortRows(ours));
  return sortRows(ours);
}

/** The table as the catalog serves it (`GET …/tables/{table}`). */
async function served(c: Catalog, name: string): Promise<{ metadataLocation: string; snapshots: number; currentSnapshotId: string }> {
  const [namespace, table] = name.split('/').slice(-2);
  const res = await fetch(`${c.server.uri}/v1/namespaces/${namespace}/tables/${table}`);
  expect(res.status).toBe(200);
  const text = await res.text();
  const body = JSON.parse(text) as { 'metadata-location': string; metadata: { snapshots?: unknown[] } };
  // Snapshot ids exceed 2^53: read the current one from the text.
  const current = /"current-snapshot-id"\s*:\s*(-?\d+)/.exec(text)?.[1] ?? '';
  return { metadataLocation: body['metadata-location'], snapshots: body.metadata.snapshots?.length ?? 0, currentSnapshotId: current };
}

/** Writes a file nobody references under the table's data folder; its location. */
async function strayFile(c: Catalog, tableLocation: string): Promise<string> {
  const stray = `${tableLocation}/data/stray.parquet`;
  if (c.s3Endpoint === undefined) {
    writeFileSync(localPathOf(stray), 'not referenced');
    return localPathOf(stray);
  }
  const { bucket, key } = parseS3Location(stray);
  const s3 = testS3Client(c.s3Endpoint);
  try {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'not referenced' }));
  } finally {
    s3.destroy();
  }
  return stray;
}

describe.each(WAREHOUSES)('packice on a table behind the Iceberg REST fixture server, warehouse on $kind', ({ kind, start }) => {
  let c: Catalog;

  beforeAll(async () => {
    [c] = await Promise.all([start(), ensureJavaHarness()]);
  });
  afterAll(async () => {
    await c?.server.stop();
  });

  it('info, scan, compact, expire and orphans on rest+http://; Java and PyIceberg read the same rows after each', async () => {
    // Prepare: PyIceberg creates the table through the catalog (3 appends, 2 copy-on-write deletes)
    const name = tableName(c);
    const written = await pyRestWrite(name, c.server.clientProperties);
    const expected = PY_LIVE.map(pyRow);
    expect(await readEverywhere(c, name)).toEqual(expected);

    // info
    const info = JSON.parse(await packice(c, 'info', '--json', name)) as { currentSnapshotId: string; snapshots: number; dataFiles: number; formatVersion: number };
    expect(info.currentSnapshotId).toBe(written.currentSnapshotId);
    expect(info.snapshots).toBe(5);
    expect(info.formatVersion).toBe(2);
    expect(info.dataFiles).toBe((await javaInfo(name, c.server.clientProperties)).dataFiles);

    // compact: partition a holds two small files
    const beforeCompact = await served(c, name);
    const compact = JSON.parse(await packice(c, 'compact', '--json', '--min-input-files', '2', '--parallelism', '0', name)) as {
      commit: { snapshotId?: string } | null;
      summary: { filesIn: number; filesOut: number };
    };
    expect(compact.commit).not.toBeNull();
    expect(compact.summary.filesIn).toBeGreaterThan(compact.summary.filesOut);
    const afterCompact = await served(c, name);
    expect(afterCompact.metadataLocation).not.toBe(beforeCompact.metadataLocation);
    expect(afterCompact.snapshots).toBe(6);
    expect((await javaInfo(name, c.server.clientProperties)).dataFiles).toBe(info.dataFiles - compact.summary.filesIn + compact.summary.filesOut);
    expect(await readEverywhere(c, name)).toEqual(expected);

    // expire: everything but the current snapshot, and the files only they reached
    const expire = JSON.parse(await packice(c, 'expire', '--json', '--older-than', '0s', name)) as { expiredSnapshots: string[] };
    expect(expire.expiredSnapshots.length).toBe(5);
    const afterExpire = await served(c, name);
    expect(afterExpire.snapshots).toBe(1);
    expect(afterExpire.currentSnapshotId).toBe(afterCompact.currentSnapshotId);
    expect(await readEverywhere(c, name)).toEqual(expected);

    // orphans: a file nobody references under the table's data folder goes, nothing else does
    const location = (await loadTable(name, { s3Endpoint: c.s3Endpoint })).metadata.location;
    const stray = await strayFile(c, location);
    const orphans = JSON.parse(await packice(c, 'orphans', '--json', '--older-than', '0s', '--force', name)) as {
      files: { path: string }[];
      deleted: number;
    };
    expect(orphans.files.map((f) => (kind === 'local' ? localPathOf(f.path) : f.path))).toEqual([stray]);
    expect(orphans.deleted).toBe(1);
    expect(await readEverywhere(c, name)).toEqual(expected);
  }, 300_000);
});

describe('packice commits racing through the Iceberg REST fixture server', () => {
  let c: Catalog;

  beforeAll(async () => {
    [c] = await Promise.all([WAREHOUSES[0].start(), ensureJavaHarness()]);
  });
  afterAll(async () => {
    await c?.server.stop();
  });

  it('two appends from the same base: one wins, the other gets the server\'s 409, refreshes and succeeds on its second attempt', async () => {
    // Prepare: two Table objects loaded at the same snapshot, each with its own new rows
    const name = tableName(c);
    await pyRestWrite(name, c.server.clientProperties);
    const [a, b] = await Promise.all([loadTable(name, { s3Endpoint: c.s3Endpoint }), loadTable(name, { s3Endpoint: c.s3Endpoint })]);
    expect(a.metadata.currentSnapshotId).toBe(b.metadata.currentSnapshotId);
    const append = async (table: Table, id: number): Promise<{ attempts: number; conflicts: CommitConflictError[] }> => {
      const files = await writeDataFiles(table.io, table.metadata, [{ id, category: 'd', value: BigInt(id) * 1_000_000_007n }]);
      const conflicts: CommitConflictError[] = [];
      const result = await commitTable(table, (base) => produceSnapshot(base.io, base.metadata, { addedDataFiles: files }), {
        onRetry: (_, e) => conflicts.push(e),
      });
      return { attempts: result.attempts, conflicts };
    };

    // Act
    const results = await Promise.all([append(a, 101), append(b, 102)]);

    // Assess: the server took exactly one first attempt; the other was refused once, then went through
    expect(results.map((r) => r.attempts).sort()).toEqual([1, 2]);
    const loser = results.find((r) => r.attempts === 2)!;
    expect(loser.conflicts.length).toBe(1);
    expect(loser.conflicts[0].message).toMatch(/answered POST .* with 409: CommitFailedException/);
    expect((await served(c, name)).snapshots).toBe(7);
    expect(await readEverywhere(c, name)).toEqual(sortRows([...PY_LIVE, 101, 102].map(pyRow)));
  });

  it('a compaction loaded before a library delete commits second: 409, refresh, the delete rebased onto its output', async () => {
    // Prepare: plan and rewrite partition a's two files; load the table the commit starts from
    const name = tableName(c);
    await pyRestWrite(name, c.server.clientProperties);
    const plan = await planStep({ table: { location: name }, policy: { minInputFiles: 2 } });
    expect(plan.groups.length).toBe(1);
    const results = (await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })))) as GroupResult[];
    const ours = await loadTable(name);

    // Act: the delete (id 13, in one of the group's inputs) wins; then the compaction commits
    const { deleted } = await deleteRows(await loadTable(name), (r) => r.id === 13);
    const commit = await commitCompaction(ours, plan, results);

    // Assess
    expect(deleted).toBe(1);
    expect(commit.attempts).toBe(2);
    expect(commit.committedGroups.length).toBe(1);
    expect(commit.abortedGroups).toEqual([]);
    expect(commit.deletesRebased).toBe(1);
    expect((await served(c, name)).snapshots).toBe(7);
    expect(await readEverywhere(c, name)).toEqual(PY_LIVE.filter((id) => id !== 13).map(pyRow));
  });
});
