/**
 * SigV4 for REST catalogs (Glue's and S3 Tables' Iceberg endpoints): the client signs with the
 * AWS SDK's signer, credentials from the SDK's default chain (here the environment, fixed for the
 * test); a loopback server verifies every request with the same signer and the fixed secret.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { catalogFor } from '../../lib/catalog/catalog-for.js';
import { InMemoryCatalog } from '../../lib/catalog/in-memory-catalog.js';
import { RestCatalog } from '../../lib/catalog/rest-catalog.js';
import { commitTable, openTable } from '../../lib/catalog/table.js';
import { NotAuthorizedError } from '../../lib/errors.js';
import { fileIOFor } from '../../lib/io/index.js';
import { savedEnv } from '../support/saved-env.js';
import { RestCatalogServer } from '../support/rest-catalog-server.js';
import { smallTable } from '../support/small-table.js';

const KEY_ID = 'AKIDPACKICETEST00001';
const SECRET = 'packice/test/secret/key/0123456789abcdefgh';
const REGION = 'eu-west-1';
const ENV = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'PACKICE_REST_SIGNING_NAME', 'PACKICE_REST_SIGNING_REGION'];
const env = savedEnv(ENV);
let root: string;
const servers: RestCatalogServer[] = [];
let tables = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'packice-sigv4-'));
});

afterEach(async () => {
  env.restore();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function useCredentials(secret: string): void {
  process.env.AWS_ACCESS_KEY_ID = KEY_ID;
  process.env.AWS_SECRET_ACCESS_KEY = secret;
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
}

async function signingServer(service: string, auth: 'sigv4' | 'none' = 'sigv4'): Promise<RestCatalogServer> {
  const location = join(root, `${service}-${++tables}`);
  const io = fileIOFor(location);
  const written = await smallTable(io, location, 2);
  const server = await RestCatalogServer.start({
    basePath: '/iceberg',
    prefix: 'catalogs/123456789012',
    auth: auth === 'sigv4' ? { kind: 'sigv4', service, region: REGION, accessKeyId: KEY_ID, secretAccessKey: SECRET } : { kind: 'none' },
  });
  servers.push(server);
  server.addTable(['sales'], 'events', new InMemoryCatalog(io, server.tableName(['sales'], 'events'), written, { checks: 'server' }));
  return server;
}

function signedCatalog(server: RestCatalogServer, signingName: string, extra: Record<string, string> = {}): RestCatalog {
  return new RestCatalog(server.uri, ['sales'], 'events', {
    retryBaseMs: 1,
    properties: { 'rest.sigv4-enabled': 'true', 'rest.signing-name': signingName, 'rest.signing-region': REGION, ...extra },
  });
}

describe('SigV4-signed REST requests', () => {
  it.each(['glue', 's3tables'])('for service %s: config, load and a commit are signed with the SDK signer and accepted', async (service) => {
    // Prepare
    useCredentials(SECRET);
    const server = await signingServer(service);
    const table = await openTable(signedCatalog(server, service));

    // Act
    const r = await commitTable(table, () => ({ updates: [{ action: 'set-properties', updates: { signed: 'yes' } }], requirements: [] }));

    // Assess: every request verified; the scope names the service and region; the body hash is signed
    expect(server.requests.map((q) => `${q.endpoint} ${q.status}`)).toEqual(['config 200', 'load 200', 'commit 200']);
    const commit = server.of('commit')[0];
    expect(commit.headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${KEY_ID}/\\d{8}/${REGION}/${service}/aws4_request, SignedHeaders=[^,]*x-amz-content-sha256[^,]*, Signature=[0-9a-f]{64}$`));
    expect(commit.headers['x-amz-content-sha256']).toBe(createHash('sha256').update(commit.body).digest('hex'));
    expect(server.of('load')[0].headers['x-amz-content-sha256']).toBe(createHash('sha256').update('').digest('hex'));
    expect(r.table.metadata.properties.signed).toBe('yes');
  });

  it.each(['glue', 's3tables'])('for service %s: a request signed with a wrong secret is refused: NotAuthorizedError', async (service) => {
    // Prepare
    useCredentials(`${SECRET}-wrong`);
    const server = await signingServer(service);

    // Act
    const err = await signedCatalog(server, service).load().catch((e: unknown) => e);

    // Assess
    expect(err).toBeInstanceOf(NotAuthorizedError);
    expect((err as Error).message).toMatch(/403: NotAuthorizedException: SigV4 check failed: the signature does not match/);
    expect(server.requests.map((q) => q.status)).toEqual([403]);
  });

  it('a signature for another service or region is refused', async () => {
    // Prepare
    useCredentials(SECRET);
    const server = await signingServer('s3tables');

    // Act
    const otherService = await signedCatalog(server, 'glue').load().catch((e: unknown) => e);
    const otherRegion = await signedCatalog(server, 's3tables', { 'rest.signing-region': 'us-east-1' }).load().catch((e: unknown) => e);

    // Assess
    expect((otherService as Error).message).toMatch(/signed for service glue, not s3tables/);
    expect((otherRegion as Error).message).toMatch(/signed for region us-east-1, not eu-west-1/);
  });

  it('a bearer token under SigV4 is kept as Original-Authorization, as Java relocates it', async () => {
    // Prepare
    useCredentials(SECRET);
    const server = await signingServer('glue');

    // Act
    await signedCatalog(server, 'glue', { token: 'abc' }).load();

    // Assess
    expect(server.of('load')[0].headers['original-authorization']).toBe('Bearer abc');
    expect(server.of('load')[0].status).toBe(200);
  });

  it('catalogFor turns SigV4 on from PACKICE_REST_SIGNING_NAME and PACKICE_REST_SIGNING_REGION', async () => {
    // Prepare
    useCredentials(SECRET);
    process.env.PACKICE_REST_SIGNING_NAME = 'glue';
    process.env.PACKICE_REST_SIGNING_REGION = REGION;
    const server = await signingServer('glue');

    // Act
    const table = await openTable(await catalogFor(server.tableName(['sales'], 'events')));

    // Assess
    expect(table.metadata.snapshots.length).toBe(5);
    expect(server.requests.map((q) => q.status)).toEqual([200, 200]);
  });
});
