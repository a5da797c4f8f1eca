/**
 * The Iceberg REST catalog client against a loopback REST server (test/support/rest-catalog-server.ts):
 * config and prefix, multi-level namespaces, load and commit with the spec's JSON, conflicts,
 * retries, the commits whose outcome is unknown, the server's errors and OAuth2.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { catalogFor } from '../../lib/catalog/catalog-for.js';
import { InMemoryCatalog } from '../../lib/catalog/in-memory-catalog.js';
import { commitTableRequest } from '../../lib/catalog/rest/commit-table-request.js';
import { RestCatalog, type RestCatalogOptions } from '../../lib/catalog/rest-catalog.js';
import { commitTable, loadTable, openTable } from '../../lib/catalog/table.js';
import { CommitConflictError, CommitStateUnknownError, InvalidArgumentError, NotAuthorizedError, NotFoundError } from '../../lib/errors.js';
import { fileIOFor } from '../../lib/io/index.js';
import { parseJson, stringifyJson, type JsonObject } from '../../lib/iceberg/json.js';
import { MAIN_BRANCH } from '../../lib/iceberg/snapshot.js';
import type { TableRequirement, TableUpdate } from '../../lib/iceberg/table-update.js';
import { expireSnapshots } from '../../lib/maintenance/expire-snapshots.js';
import { commitStep, planStep, rewriteStep } from '../../lib/pipeline/steps.js';
import { appendRows } from '../../lib/table/operations.js';
import { scanRows } from '../../lib/table/scan.js';
import { RestCatalogServer, type RestServerOptions } from '../support/rest-catalog-server.js';
import { tableRequirementFromJson, tableUpdateFromJson } from '../support/rest-request-json.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { smallTable } from '../support/small-table.js';

let root: string;
const servers: RestCatalogServer[] = [];
let tables = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'packice-rest-'));
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const SMALL_IDS = Array.from({ length: 40 }, (_, i) => i + 1).filter((i) => i % 5 !== 0);

/** A server holding the small table (on disk) as `namespace.events`; its backing catalog. */
async function serveSmallTable(
  options: RestServerOptions = {},
  namespace: readonly string[] = ['sales'],
): Promise<{ server: RestCatalogServer; backend: InMemoryCatalog; name: string }> {
  const location = join(root, `t${++tables}`);
  const io = fileIOFor(location);
  const written = await smallTable(io, location, 2);
  const server = await RestCatalogServer.start(options);
  servers.push(server);
  const name = server.tableName(namespace, 'events');
  const backend = new InMemoryCatalog(io, name, written, { checks: 'server' });
  server.addTable(namespace, 'events', backend);
  return { server, backend, name };
}

function restCatalog(server: RestCatalogServer, namespace: readonly string[], options: RestCatalogOptions = {}): RestCatalog {
  return new RestCatalog(server.uri, namespace, 'events', { retryBaseMs: 1, ...options });
}

async function ids(name: string): Promise<number[]> {
  const t = await loadTable(name);
  const out: number[] = [];
  for await (const r of scanRows(t.io, t.metadata)) out.push(Number(r.id));
  return out.sort((a, b) => a - b);
}

const setProperty: TableUpdate = { action: 'set-properties', updates: { 'packice.test': 'yes' } };

describe('the commit request JSON', () => {
  it('writes every update and requirement kind with the spec names, and the server reads back the same change', async () => {
    // Prepare: every kind, with the parts of a real table
    const t = await smallTable(fileIOFor(root), join(root, 'json'), 2);
    const m = t.metadata;
    const snapshot = m.snapshots.at(-1)!;
    const updates: TableUpdate[] = [
      { action: 'upgrade-format-version', formatVersion: 2 },
      { action: 'add-schema', schema: m.schemas[0] },
      { action: 'set-current-schema', schemaId: 0 },
      { action: 'add-spec', spec: m.partitionSpecs[0] },
      { action: 'set-default-spec', specId: 0 },
      { action: 'add-sort-order', sortOrder: m.sortOrders[0] },
      { action: 'set-default-sort-order', sortOrderId: 0 },
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', refName: 'audit', snapshotId: snapshot.snapshotId, type: 'tag', maxRefAgeMs: 86_400_000 },
      { action: 'remove-snapshots', snapshotIds: [9_007_199_254_740_993n, m.snapshots[0].snapshotId] },
      { action: 'remove-snapshot-ref', refName: 'audit' },
      { action: 'set-location', location: m.location },
      { action: 'set-properties', updates: { 'commit.retry.num-retries': '7' } },
      { action: 'remove-properties', removals: ['gone'] },
    ];
    const requirements: TableRequirement[] = [
      { type: 'assert-create' },
      { type: 'assert-table-uuid', uuid: m.tableUuid },
      { type: 'assert-ref-snapshot-id', ref: MAIN_BRANCH, snapshotId: snapshot.snapshotId },
      { type: 'assert-ref-snapshot-id', ref: 'new-branch', snapshotId: null },
      { type: 'assert-last-assigned-field-id', lastAssignedFieldId: 3 },
      { type: 'assert-current-schema-id', currentSchemaId: 0 },
      { type: 'assert-last-assigned-partition-id', lastAssignedPartitionId: 1000 },
      { type: 'assert-default-spec-id', defaultSpecId: 0 },
      { type: 'assert-default-sort-order-id', defaultSortOrderId: 0 },
    ];

    // Act
    const text = stringifyJson(commitTableRequest({ namespace: ['a', 'b'], name: 't' }, requirements, updates, 2));
    const json = parseJson(text) as JsonObject;

    // Assess: the exact shapes the spec names, longs written whole, and the round trip
    expect(json.identifier).toEqual({ namespace: ['a', 'b'], name: 't' });
    expect(text).toContain('"snapshot-ids":[9007199254740993,');
    expect(text).toContain('{"action":"set-snapshot-ref","ref-name":"audit","snapshot-id":');
    expect(text).toContain('"type":"tag","max-ref-age-ms":86400000}');
    expect(text).toContain('{"type":"assert-ref-snapshot-id","ref":"new-branch","snapshot-id":null}');
    expect(text).toContain('{"action":"upgrade-format-version","format-version":2}');
    expect(text).toContain(`"sequence-number":${snapshot.sequenceNumber}`);
    const back = (json.updates as JsonObject[]).map(tableUpdateFromJson);
    expect(back).toEqual(updates);
    expect((json.requirements as JsonObject[]).map(tableRequirementFromJson)).toEqual(requirements);
  });
});

describe('a table in a REST catalog', () => {
  it('asks /v1/config with the warehouse, uses its prefix, joins namespace levels with %1F, and compacts through the pipeline', async () => {
    // Prepare: served under /iceberg with a prefix, as Glue's and S3 Tables' endpoints are
    const { server, name } = await serveSmallTable(
      { basePath: '/iceberg', prefix: 'catalogs/wh1', warehouse: 'wh1' },
      ['sales', 'eu'],
    );
    process.env.PACKICE_REST_WAREHOUSE = 'wh1';
    try {
      const before = await loadTable(name);
      expect(before.catalog).toBeInstanceOf(RestCatalog);
      expect(before.metadata.snapshots.length).toBe(5);

      // Act
      const plan = await planStep({ table: { location: name }, policy: { minInputFiles: 2 } });
      const results = await Promise.all(plan.groups.map((g) => rewriteStep({ plan, groupId: g.id })));
      const commit = await commitStep({ plan, results });

      // Assess
      expect(server.of('config')[0].query.get('warehouse')).toBe('wh1');
      expect(server.of('load')[0].path).toBe('/iceberg/v1/catalogs/wh1/namespaces/sales%1Feu/tables/events');
      expect(commit.committedGroups.length).toBe(2);
      const posted = parseJson(server.of('commit')[0].body) as JsonObject;
      expect(posted.identifier).toEqual({ namespace: ['sales', 'eu'], name: 'events' });
      expect((posted.updates as JsonObject[]).map((u) => u.action)).toEqual(['add-snapshot', 'set-snapshot-ref']);
      expect((posted.requirements as JsonObject[]).map((r) => r.type)).toContain('assert-ref-snapshot-id');
      const after = await loadTable(name);
      expect(after.metadata.currentSnapshotId?.toString()).toBe(commit.snapshotId);
      expect(after.metadataLocation).toMatch(/\/metadata\/00000-[0-9a-f-]{36}\.metadata\.json$/);
      expect(await ids(name)).toEqual(SMALL_IDS);
    } finally {
      delete process.env.PACKICE_REST_WAREHOUSE;
    }
  });

  it('expires snapshots with remove-snapshots under assert-table-uuid', async () => {
    // Prepare
    const { server, name } = await serveSmallTable();

    // Act
    const r = await expireSnapshots(await loadTable(name), { retainLast: 1, olderThanMs: 0, nowMs: Date.now() + 1000 });

    // Assess
    expect(r.expiredSnapshots.length).toBe(4);
    const posted = parseJson(server.of('commit')[0].body) as JsonObject;
    expect((posted.updates as JsonObject[]).map((u) => u.action)).toContain('remove-snapshots');
    expect(posted.requirements).toEqual([{ type: 'assert-table-uuid', uuid: (await loadTable(name)).metadata.tableUuid }]);
    expect((await loadTable(name)).metadata.snapshots.length).toBe(1);
    expect(await ids(name)).toEqual(SMALL_IDS);
  });

  it('a writer commits between our load and our commit: the server answers 409, we reload and retry', async () => {
    // Prepare
    const { server, name } = await serveSmallTable();
    const ours = await loadTable(name);
    await appendRows(await loadTable(name), [{ id: 41n, category: 'b', amount: 5125n }]);
    const conflicts: CommitConflictError[] = [];

    // Act: a change that must be made on the current main
    const r = await commitTable(
      ours,
      (base) => ({
        updates: [setProperty],
        requirements: [{ type: 'assert-ref-snapshot-id', ref: MAIN_BRANCH, snapshotId: base.metadata.currentSnapshotId ?? null }],
      }),
      { onRetry: (_, e) => conflicts.push(e) },
    );

    // Assess
    expect(r.attempts).toBe(2);
    expect(conflicts[0]).toBeInstanceOf(CommitConflictError);
    expect(conflicts[0].message).toMatch(/409: CommitFailedException: .*Requirement failed \(assert-ref-snapshot-id\)/);
    expect(server.of('commit').map((q) => q.status)).toEqual([200, 409, 200]);
    expect((await loadTable(name)).metadata.properties['packice.test']).toBe('yes');
    expect(await ids(name)).toEqual([...SMALL_IDS, 41]);
  });

  it('retries a load answered 503, 500 or 429, and a commit answered 429 or 503 with Retry-After', async () => {
    // Prepare
    const { server } = await serveSmallTable();
    const catalog = restCatalog(server, ['sales']);
    server.inject('load', 503);
    server.inject('load', 500);
    server.inject('load', 429);
    const table = await openTable(catalog);
    server.inject('commit', 429);
    server.inject('commit', 503, { headers: { 'Retry-After': '0' } });

    // Act
    const r = await commitTable(table, () => ({ updates: [setProperty], requirements: [] }));

    // Assess
    expect(server.of('load').map((q) => q.status)).toEqual([503, 500, 429, 200]);
    expect(server.of('commit').map((q) => q.status)).toEqual([429, 503, 200]);
    expect(r.attempts).toBe(1);
    expect(r.table.metadata.properties['packice.test']).toBe('yes');
  });

  it('gives up on a load after the bounded retries, naming the table and the endpoint', async () => {
    // Prepare
    const { server } = await serveSmallTable();
    const catalog = restCatalog(server, ['sales'], { properties: { 'rest.client.max-retries': '2' } });
    server.inject('load', 502, { times: 5 });

    // Act
    const err = await catalog.load().catch((e: unknown) => e);

    // Assess
    expect(server.of('load').length).toBe(3);
    expect(err).toMatchObject({ name: 'IoError', retryable: true });
    expect((err as Error).message).toContain(catalog.name);
    expect((err as Error).message).toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/v1\/namespaces\/sales\/tables\/events with 502: ServiceFailureException/);
  });

  it('a commit answered 500, 502 or 504 is not retried: its outcome is unknown, and the files it wrote are kept', async () => {
    for (const status of [500, 502, 504]) {
      // Prepare: the server applies the commit, then fails
      const { server, name } = await serveSmallTable();
      const table = await openTable(restCatalog(server, ['sales']));
      server.inject('commit', status, { afterApply: true });

      // Act: an append, whose data file and manifests the applied commit references
      const err = await appendRows(table, [{ id: 41n, category: 'b', amount: 5125n }]).catch((e: unknown) => e);

      // Assess
      expect(err).toBeInstanceOf(CommitStateUnknownError);
      expect((err as Error).message).toMatch(new RegExp(`with ${status}: ServiceFailureException.*may or may not have been applied`));
      expect(server.of('commit').length).toBe(1);
      expect(await ids(name)).toEqual([...SMALL_IDS, 41]);
    }
  });

  it('with an advertised idempotency-key-lifetime, a commit answered 500 is retried with the same Idempotency-Key', async () => {
    // Prepare
    const { server } = await serveSmallTable({ idempotencyKeyLifetime: 'PT30M' });
    const table = await openTable(restCatalog(server, ['sales']));
    server.inject('commit', 500, { afterApply: true });

    // Act
    const r = await commitTable(table, () => ({ updates: [setProperty], requirements: [] }));

    // Assess: applied once, replayed once
    const commits = server.of('commit');
    expect(commits.map((q) => q.status)).toEqual([500, 200]);
    expect(commits[0].headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(commits[1].headers['idempotency-key']).toBe(commits[0].headers['idempotency-key']);
    expect(r.table.metadata.properties['packice.test']).toBe('yes');
    expect(r.table.metadata.metadataLog.length).toBe(table.metadata.metadataLog.length + 1);
  });

  it('a commit whose connection breaks after it was sent has an unknown outcome; a refused connection is no table', async () => {
    // Prepare
    const { server } = await serveSmallTable();
    const table = await openTable(restCatalog(server, ['sales']));
    await server.close();
    servers.splice(servers.indexOf(server), 1);

    // Act
    const err = await commitTable(table, () => ({ updates: [setProperty], requirements: [] })).catch((e: unknown) => e);

    // Assess: nothing listens, so nothing was sent; retried, then an error that is no conflict
    expect(err).not.toBeInstanceOf(CommitConflictError);
    expect(err).not.toBeInstanceOf(CommitStateUnknownError);
    expect((err as Error).message).toMatch(/got no answer.*after 6 attempts/);
  });

  it("the server's errors name the table and the call: 404 is no such table, 400 an invalid request", async () => {
    // Prepare
    const { server } = await serveSmallTable();
    const missing = new RestCatalog(server.uri, ['sales'], 'nope', { retryBaseMs: 1 });

    // Act
    const notFound = await missing.load().catch((e: unknown) => e);
    server.inject('commit', 400);
    const table = await openTable(restCatalog(server, ['sales']));
    const bad = await commitTable(table, () => ({ updates: [setProperty], requirements: [] })).catch((e: unknown) => e);

    // Assess
    expect(notFound).toBeInstanceOf(NotFoundError);
    expect((notFound as Error).message).toMatch(/nope: no such table: .*GET http:.*\/tables\/nope with 404: NoSuchTableException: Table does not exist: sales.nope/);
    expect(bad).toBeInstanceOf(InvalidArgumentError);
    expect((bad as Error).message).toContain('POST http://');
  });

  it('catalogFor takes the rest+http name', async () => {
    // Prepare
    const { name } = await serveSmallTable();

    // Act
    const catalog = await catalogFor(name);

    // Assess
    expect(catalog).toBeInstanceOf(RestCatalog);
    expect(catalog.name).toBe(name);
  });
});

describe('OAuth2 client credentials', () => {
  const oauth = { kind: 'oauth2', clientId: 'packice', clientSecret: 's3cret', scope: 'catalog' } as const;

  it('exchanges the credential for a token at /v1/oauth/tokens and sends it as a bearer token', async () => {
    // Prepare
    const { server } = await serveSmallTable({ auth: oauth });
    const catalog = restCatalog(server, ['sales'], { properties: { credential: 'packice:s3cret' } });

    // Act
    const table = await openTable(catalog);
    await commitTable(table, () => ({ updates: [setProperty], requirements: [] }));

    // Assess
    expect(server.tokensIssued).toBe(1);
    const form = new URLSearchParams(server.of('token')[0].body);
    expect(Object.fromEntries(form)).toEqual({ grant_type: 'client_credentials', client_id: 'packice', client_secret: 's3cret', scope: 'catalog' });
    expect(server.of('commit')[0].headers.authorization).toBe('Bearer token-1');
  });

  it('asks for a new token when the old one is about to expire, or when the server answers 401', async () => {
    // Prepare: tokens that expire as they are issued
    const { server } = await serveSmallTable({ auth: { ...oauth, expiresIn: 0 } });
    const catalog = restCatalog(server, ['sales'], { properties: { credential: 'packice:s3cret' } });
    await catalog.load();
    const afterFirst = server.tokensIssued;

    // Act
    await catalog.load();
    const afterRenewal = server.tokensIssued;
    server.revokeTokens();
    const { server: other } = await serveSmallTable({ auth: oauth });
    const longLived = restCatalog(other, ['sales'], { properties: { credential: 'packice:s3cret' } });
    await longLived.load();
    other.revokeTokens();
    await longLived.load();

    // Assess
    expect(afterFirst).toBe(2); // config and load
    expect(afterRenewal).toBe(3);
    expect(other.of('load').map((q) => q.status)).toEqual([200, 401, 200]);
    expect(other.tokensIssued).toBe(2);
  });

  it('a wrong secret is refused at the token endpoint: NotAuthorizedError naming the endpoint', async () => {
    // Prepare
    const { server } = await serveSmallTable({ auth: oauth });
    const catalog = restCatalog(server, ['sales'], { properties: { credential: 'packice:wrong' } });

    // Act
    const err = await catalog.load().catch((e: unknown) => e);

    // Assess
    expect(err).toBeInstanceOf(NotAuthorizedError);
    expect((err as Error).message).toMatch(/OAuth2 token request to http:.*\/v1\/oauth\/tokens failed: 401: invalid_client: wrong client id or secret/);
  });

  it('a fixed bearer token is sent as it is; without it the server answers 401', async () => {
    // Prepare
    const { server } = await serveSmallTable({ auth: { kind: 'bearer', token: 'abc' } });

    // Act
    const ok = await restCatalog(server, ['sales'], { properties: { token: 'abc' } }).load();
    const err = await restCatalog(server, ['sales']).load().catch((e: unknown) => e);

    // Assess
    expect(ok.metadata.snapshots.length).toBe(5);
    expect(err).toBeInstanceOf(NotAuthorizedError);
  });
});

describe('the table config of a load', () => {
  it('uses a table token the server hands with the table for that table', async () => {
    // Prepare: the config endpoint is open; the table's requests need the vended token
    const { server } = await serveSmallTable({ tableConfig: { token: 'table-token' } });
    const catalog = restCatalog(server, ['sales']);
    const table = await openTable(catalog);

    // Act
    await commitTable(table, () => ({ updates: [setProperty], requirements: [] }));

    // Assess
    expect(server.of('load')[0].headers.authorization).toBeUndefined();
    expect(server.of('commit')[0].headers.authorization).toBe('Bearer table-token');
  });

  it('sends header.* properties, e.g. to ask for vended credentials', async () => {
    // Prepare
    const { server } = await serveSmallTable();
    const catalog = restCatalog(server, ['sales'], { properties: { 'header.X-Iceberg-Access-Delegation': 'vended-credentials' } });

    // Act
    await catalog.load();

    // Assess
    expect(server.of('config')[0].headers['x-iceberg-access-delegation']).toBe('vended-credentials');
    expect(server.of('load')[0].headers['x-iceberg-access-delegation']).toBe('vended-credentials');
  });
});

describe('vended credentials (moto S3 on loopback)', () => {
  it('reads and writes the table on S3 with the credentials and endpoint the load vends, storage-credentials first', async () => {
    // Prepare: the table on S3; the client is told no S3 endpoint, only the catalog vends one
    const moto = testS3Endpoint();
    const location = `s3://${await freshBucket()}/warehouse/events`;
    const written = await smallTable(fileIOFor(location, { s3Endpoint: moto }), location, 2);
    const vended = { 's3.access-key-id': 'vended-key', 's3.secret-access-key': 'vended-secret', 's3.session-token': 'vended-token', 's3.region': 'us-east-1', 's3.path-style-access': 'true' };
    const server = await RestCatalogServer.start({
      tableConfig: { ...vended, 's3.endpoint': 'http://127.0.0.1:9' },
      storageCredentials: [
        { prefix: 's3://', config: { ...vended, 's3.endpoint': 'http://127.0.0.1:9' } },
        { prefix: location, config: { ...vended, 's3.endpoint': moto } },
      ],
    });
    servers.push(server);
    const name = server.tableName(['sales'], 'events');
    server.addTable(['sales'], 'events', new InMemoryCatalog(fileIOFor(location, { s3Endpoint: moto }), name, written, { checks: 'server' }));

    // Act
    const table = await loadTable(name);
    const appended = await appendRows(table, [{ id: 41n, category: 'b', amount: 5125n }]);

    // Assess
    expect(table.catalog).toBeInstanceOf(RestCatalog);
    expect((table.catalog as RestCatalog).io.vended).toBe(true);
    expect(appended.metadata.snapshots.length).toBe(6);
    expect(await ids(name)).toEqual([...SMALL_IDS, 41]);
  });
});
