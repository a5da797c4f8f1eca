/**
 * The Apache Iceberg REST catalog fixture server (`RESTCatalogServer` from iceberg-open-api 1.11.0's
 * test fixtures, resolved by scripts/setup-rest-server.sh) on a free loopback port: a JdbcCatalog on
 * SQLite in a temp folder, its warehouse on the local disk or on the run's moto S3. One per test file.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setupScriptOnce } from './java.js';
import { answersGet, startLoopbackServer } from './loopback-server.js';
import { REPO_ROOT, TEST_AWS_ENV } from './moto.js';

const OUT = join(REPO_ROOT, '.cache', 'rest-server');
const CLASSPATH_FILE = join(OUT, 'classpath.txt');
const CDS_ARCHIVE = join(OUT, 'server.jsa');

/** Must match the flags setup-rest-server.sh recorded the class-data-sharing archive with. */
const JVM_FLAGS = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xlog:disable', '-Xlog:all=error:stderr'];

const START_TIMEOUT_MS = 120_000;

export interface RestCatalogServer {
  /** `http://127.0.0.1:<port>` — the catalog's base URI (routes under `/v1/`). */
  readonly uri: string;
  readonly port: number;
  /** The catalog's warehouse: `file:/…` or `s3://<bucket>/<prefix>`. */
  readonly warehouse: string;
  /** Catalog properties a client needs to read and write the warehouse's files (S3 endpoint, keys). */
  readonly clientProperties: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

export type RestWarehouse =
  | { readonly kind: 'local' }
  /** S3FileIO against the run's moto server; the bucket must exist. */
  | { readonly kind: 's3'; readonly endpoint: string; readonly bucket: string; readonly prefix?: string };

/** Resolves the server once per process (scripts/setup-rest-server.sh is idempotent and locked). */
export const ensureRestServer = setupScriptOnce('setup-rest-server.sh');

/** S3FileIO settings for moto: path-style, fixed keys, the URL-connection HTTP client on the classpath. */
export function s3FileIoProperties(endpoint: string): Record<string, string> {
  return {
    'io-impl': 'org.apache.iceberg.aws.s3.S3FileIO',
    's3.endpoint': endpoint,
    's3.path-style-access': 'true',
    's3.access-key-id': TEST_AWS_ENV.AWS_ACCESS_KEY_ID,
    's3.secret-access-key': TEST_AWS_ENV.AWS_SECRET_ACCESS_KEY,
    'client.region': TEST_AWS_ENV.AWS_REGION,
    'http-client.type': 'urlconnection',
  };
}

/** `CATALOG_*` environment variables RESTCatalogServer turns into catalog properties (`__` → `-`, `_` → `.`). */
function catalogEnv(properties: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(properties)) {
    env[`CATALOG_${key.toUpperCase().replaceAll('-', '__').replaceAll('.', '_')}`] = value;
  }
  return env;
}

/**
 * Starts RESTCatalogServer and waits until `GET /v1/config` answers. The catalog's SQLite file and
 * (for `local`) its warehouse live in a temp folder that `stop()` removes.
 */
export async function startRestServer(warehouse: RestWarehouse = { kind: 'local' }): Promise<RestCatalogServer> {
  await ensureRestServer();
  const classpath = readFileSync(CLASSPATH_FILE, 'utf8').trim();
  const cds = existsSync(CDS_ARCHIVE) ? [`-XX:SharedArchiveFile=${CDS_ARCHIVE}`] : [];
  const dir = mkdtempSync(join(tmpdir(), 'packice-rest-'));

  const location =
    warehouse.kind === 'local'
      ? `file:${join(dir, 'warehouse')}`
      : `s3://${warehouse.bucket}/${warehouse.prefix ?? 'warehouse'}`;
  const clientProperties = warehouse.kind === 's3' ? s3FileIoProperties(warehouse.endpoint) : {};

  try {
    const server = await startLoopbackServer({
      name: 'RESTCatalogServer',
      command: 'java',
      args: () => [...JVM_FLAGS, ...cds, '-cp', classpath, 'org.apache.iceberg.rest.RESTCatalogServer'],
      env: (port, attempt) => ({
        ...process.env,
        ...TEST_AWS_ENV,
        ...catalogEnv({
          uri: `jdbc:sqlite:${join(dir, `catalog-${attempt}.db`)}`,
          warehouse: location,
          'rest.port': String(port),
          ...clientProperties,
        }),
      }),
      ready: (endpoint) => answersGet(`${endpoint}/v1/config`),
      timeoutMs: START_TIMEOUT_MS,
      pollMs: 50,
    });
    return {
      uri: server.endpoint,
      port: server.port,
      warehouse: location,
      clientProperties,
      async stop() {
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
