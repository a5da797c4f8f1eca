/**
 * The reference engines through a real Iceberg REST catalog: the Apache fixture server
 * (RESTCatalogServer, JDBC catalog on SQLite, warehouse on local disk or moto S3) on loopback. A table one engine
 * creates and changes through the catalog reads the same in the other, loaded through the same catalog.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CanonicalRow, sortRows } from '../support/canonical-rows.js';
import { ensureJavaHarness, javaDelete, javaInfo, javaRead, javaWrite } from '../support/java.js';
import { pyRestRead, pyRestWrite } from '../support/pyiceberg.js';
import { type RestCatalogServer, startRestServer } from '../support/rest-server.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';

/** rest_table.py's scenario: ids 1-16, value id * 1000000007, category a/b alternating, 9-12 c, 13-16 a. */
function pyRow(id: number): CanonicalRow {
  const category = id >= 13 ? 'a' : id >= 9 ? 'c' : id % 2 ? 'a' : 'b';
  return { id, category, value: id * 1_000_000_007 };
}
const PY_LIVE = [1, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 15, 16];

const WAREHOUSES: { readonly kind: 'local' | 's3'; start(): Promise<RestCatalogServer> }[] = [
  { kind: 'local', start: () => startRestServer() },
  { kind: 's3', start: async () => startRestServer({ kind: 's3', endpoint: testS3Endpoint(), bucket: await freshBucket() }) },
];

describe.each(WAREHOUSES)('Iceberg REST catalog fixture server, warehouse on $kind', ({ start }) => {
  let server: RestCatalogServer;

  beforeAll(async () => {
    [server] = await Promise.all([start(), ensureJavaHarness()]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('PyIceberg writes a partitioned table with appends and deletes; Java reads the same rows through the catalog', async () => {
    const name = `rest+${server.uri}/harness/py_writes`;
    const props = server.clientProperties;
    const written = await pyRestWrite(name, props);
    expect(written.snapshots).toBe(5);

    const expected = PY_LIVE.map(pyRow);
    const [java, py, info] = await Promise.all([javaRead(name, undefined, props), pyRestRead(name, props), javaInfo(name, props)]);
    expect(sortRows(java)).toEqual(expected);
    expect(sortRows(py)).toEqual(expected);
    expect(info.currentSnapshotId).toBe(written.currentSnapshotId);
    // Copy-on-write deletes: no delete files, one or more data files per category.
    expect(info.deleteFiles).toBe(0);
    expect(info.dataFiles).toBeGreaterThanOrEqual(3);
  });

  it('Java writes a table with position deletes through the catalog; PyIceberg reads the same rows', async () => {
    const name = `rest+${server.uri}/harness/java_writes`;
    const props = server.clientProperties;
    await javaWrite('v2-position-deletes', name, props);
    const deleted = await javaDelete(name, 'id', [1, 15], { catalogProperties: props });
    expect(deleted.deleted).toBe(2);

    const [java, py] = await Promise.all([javaRead(name, undefined, props), pyRestRead(name, props)]);
    expect(sortRows(java).map((r) => r.id)).toEqual([3, 4, 5, 6, 7, 10, 12, 14]);
    expect(sortRows(py)).toEqual(sortRows(java));
  });

  it('puts the table under the warehouse the server was started with', async () => {
    const res = await fetch(`${server.uri}/v1/namespaces/harness/tables/java_writes`);
    const body = (await res.json()) as { metadata: { location: string }; 'metadata-location': string };
    expect(body.metadata.location).toBe(`${server.warehouse}/harness/java_writes`);
    expect(body['metadata-location'].startsWith(`${server.warehouse}/harness/java_writes/metadata/`)).toBe(true);
  });
});
