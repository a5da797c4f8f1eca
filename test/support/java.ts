/**
 * Java Iceberg 1.12 as a reference engine: the harness in interop/java, built by
 * scripts/setup-java.sh into .cache/interop. See Harness.java for the CLI contract.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type CanonicalRow, parseJsonLines } from './canonical-rows.js';
import { REPO_ROOT } from './fixtures.js';
import { stringifyJson } from '../../lib/iceberg/json.js';

const run = promisify(execFile);

const OUT = join(REPO_ROOT, '.cache', 'interop');
const CLASSPATH_FILE = join(OUT, 'classpath.txt');
const CDS_ARCHIVE = join(OUT, 'harness.jsa');

/** Must match the flags setup-java.sh recorded the class-data-sharing archive with. */
const JVM_FLAGS = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xlog:disable', '-Xlog:all=error:stderr'];

/** A first setup resolves tens of MB from Maven Central and runs a self-test. */
const SETUP_TIMEOUT_MS = 20 * 60_000;
const RUN_TIMEOUT_MS = 180_000;

/** Tables the harness writes; each scenario's rows are documented in Scenarios.java. */
export const JAVA_SCENARIOS = [
  'v2-position-deletes',
  'v2-equality-deletes',
  'v3-deletion-vectors',
  'v2-mixed',
  'v2-all-types',
] as const;
export type JavaScenario = (typeof JAVA_SCENARIOS)[number];

/** What `Harness info` prints; counts come from Java's `table.newScan().planFiles()`. */
export interface JavaTableInfo {
  readonly formatVersion: number;
  /** Decimal string (snapshot ids exceed 2^53), or null for a table without snapshots. */
  readonly currentSnapshotId: string | null;
  /** Live data files. */
  readonly dataFiles: number;
  /** Distinct delete files (a DV counts once: Puffin path + offset) that apply to live data files. */
  readonly deleteFiles: number;
  readonly positionDeleteFiles: number;
  readonly equalityDeleteFiles: number;
  readonly deletionVectors: number;
}

/** Builds the harness once per process (scripts/setup-java.sh is idempotent and locked). */
export const ensureJavaHarness = setupScriptOnce('setup-java.sh');

/**
 * Runs `scripts/<script>` at most once per process, as the first caller asks; a failure is
 * thrown with the script's output and the next caller tries again.
 */
export function setupScriptOnce(script: string): () => Promise<void> {
  let setup: Promise<void> | undefined;
  return () => {
    setup ??= (async () => {
      try {
        await run('bash', [join(REPO_ROOT, 'scripts', script)], { cwd: REPO_ROOT, timeout: SETUP_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
      } catch (e) {
        setup = undefined;
        throw new Error(`scripts/${script} failed:\n${failure(e)}`, { cause: e });
      }
    })();
    return setup;
  };
}

/**
 * Catalog properties for tables named `rest+http://host:port/<namespace>/<table>` (the harness loads
 * them through Java's RESTCatalog): FileIO settings for S3, say. Passed as PACKICE_REST_CATALOG_PROPERTIES.
 */
export type RestCatalogProperties = Readonly<Record<string, string>>;

async function harness(args: readonly string[], catalogProperties?: RestCatalogProperties): Promise<string> {
  await ensureJavaHarness();
  const classpath = readFileSync(CLASSPATH_FILE, 'utf8').trim();
  const cds = existsSync(CDS_ARCHIVE) ? [`-XX:SharedArchiveFile=${CDS_ARCHIVE}`] : [];
  try {
    const { stdout } = await run('java', [...JVM_FLAGS, ...cds, '-cp', classpath, 'packice.interop.Harness', ...args], {
      cwd: REPO_ROOT,
      timeout: RUN_TIMEOUT_MS,
      maxBuffer: 512 * 1024 * 1024,
      encoding: 'utf8',
      env: catalogProperties ? { ...process.env, PACKICE_REST_CATALOG_PROPERTIES: JSON.stringify(catalogProperties) } : process.env,
    });
    return stdout;
  } catch (e) {
    throw new Error(`Java harness '${args.join(' ')}' failed:\n${failure(e)}`, { cause: e });
  }
}

/** Live rows Java reads (all deletes applied), in the canonical encoding, in Java's scan order. */
export async function javaRead(location: string, snapshotId?: string | bigint, catalogProperties?: RestCatalogProperties): Promise<CanonicalRow[]> {
  const args = ['read', location];
  if (snapshotId !== undefined) args.push('--snapshot', String(snapshotId));
  return parseJsonLines(await harness(args, catalogProperties), `Java read ${location}`);
}

/**
 * Creates a table the way a scenario says: at a local path (which must not hold a table yet), or
 * through a REST catalog for a `rest+http://` name.
 */
export async function javaWrite(scenario: JavaScenario, location: string, catalogProperties?: RestCatalogProperties): Promise<void> {
  await harness(['write', scenario, location], catalogProperties);
}

export async function javaInfo(location: string, catalogProperties?: RestCatalogProperties): Promise<JavaTableInfo> {
  const [info] = parseJsonLines(await harness(['info', location], catalogProperties), `Java info ${location}`);
  return info as unknown as JavaTableInfo;
}

/** Where Java 1.12 puts one live data or delete file of a table (`Harness locations`). */
export interface JavaFileLocation {
  readonly path: string;
  readonly content: 'DATA' | 'POSITION_DELETES' | 'EQUALITY_DELETES';
  readonly format: string;
  readonly specId: number;
  /** `PartitionSpec.partitionToPath` of the file's partition as Java reads it from the manifest. */
  readonly partitionPath: string;
  /** The table's location provider for the file's name (absent when it refused the table). */
  readonly location?: string;
  readonly locationError?: string;
}

export async function javaLocations(location: string): Promise<JavaFileLocation[]> {
  return parseJsonLines(await harness(['locations', location]), `Java locations ${location}`) as unknown as JavaFileLocation[];
}

/** `LocationProviders.locationsFor(tableLocation, properties).newDataLocation(name)` per name, or Java's error. */
export async function javaLocationProvider(
  tableLocation: string,
  properties: Readonly<Record<string, string>>,
  fileNames: readonly string[],
): Promise<{ readonly fileName: string; readonly location?: string; readonly error?: string }[]> {
  const out = await harness(['location-provider', tableLocation, JSON.stringify(properties), ...fileNames]);
  return parseJsonLines(out, `Java location-provider ${tableLocation}`) as unknown as { fileName: string; location?: string; error?: string }[];
}

/** What `Harness delete` prints. */
export interface JavaDeleteResult {
  /** The table's snapshot after the delete (decimal string). */
  readonly snapshotId: string;
  /** Rows deleted (live before, matched by the predicate). */
  readonly deleted: number;
  /** Delete files (v2) or deletion vectors (v3) the RowDelta added. */
  readonly deleteFiles: number;
  /** Deletion vectors the new ones replaced (merged into them). */
  readonly removedDeleteFiles: number;
}

/**
 * Java Iceberg 1.12 deletes the rows where `column` is one of `values` (compared as strings) by
 * position and commits one RowDelta: deletion vectors on v3, position delete files on v2 (one per
 * partition, or per data file with granularity 'file').
 */
export async function javaDelete(
  location: string,
  column: string,
  values: readonly (string | number | bigint)[],
  options: { readonly granularity?: 'partition' | 'file'; readonly catalogProperties?: RestCatalogProperties } = {},
): Promise<JavaDeleteResult> {
  const args = ['delete', location, ...(options.granularity ? ['--granularity', options.granularity] : []), column, ...values.map(String)];
  const [result] = parseJsonLines(await harness(args, options.catalogProperties), `Java delete ${location}`);
  return result as unknown as JavaDeleteResult;
}

/** Exit code or signal plus the tail of stderr of a failed execFile. */
export function failure(e: unknown): string {
  const err = e as { code?: unknown; signal?: unknown; killed?: boolean; stderr?: unknown; message?: string };
  const how = err.killed ? `killed (${String(err.signal)}), timeout?` : `exit ${String(err.code)}`;
  const stderr = typeof err.stderr === 'string' ? err.stderr : '';
  return `${how}\n${(stderr || err.message || '').slice(-8000)}`;
}

/** Rows of one of Iceberg's metadata tables (`snapshots`, `files`, …) as Java 1.12 reads them (`Harness metadata-table`). */
export async function javaMetadataTable(location: string, name: string): Promise<Record<string, unknown>[]> {
  return parseJsonLines(await harness(['metadata-table', location, name]), `Java metadata-table ${name} ${location}`) as unknown as Record<string, unknown>[];
}

/** The data files `table.newScan().filter(expr).planFiles()` selects in Java 1.12 (`Harness plan-files`); `expr` in ExpressionParser JSON. */
export async function javaPlanFiles(location: string, expression: unknown): Promise<string[]> {
  return parseJsonLines(await harness(['plan-files', location, stringifyJson(expression)]), `Java plan-files ${location}`) as unknown as string[];
}
