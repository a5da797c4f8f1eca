/**
 * The object-store catalog: the table's `metadata/` folder is the catalog, in the layout Java's
 * HadoopTables reads (HadoopTableOperations.java): `metadata/v<N>.metadata.json` plus
 * `metadata/version-hint.text` holding N. A commit creates `v<N+1>.metadata.json` with a
 * create-if-absent write, so exactly one of several racing commits on the same base wins. The
 * hint is only a hint: it is written after the commit and may lag, so loading probes forward.
 *
 * The functions work on the metadata JSON as text; `ObjectStoreCatalog` puts them behind the
 * Catalog interface (requirements checked and updates applied here, then `v<N+1>` created).
 */
import { AlreadyExistsError, CommitConflictError, InvalidArgumentError, InvalidFileError, NotFoundError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { joinPath } from '../io/path.js';
import { catalogMetadataFolder } from '../iceberg/locations.js';
import { parseTableMetadata, serializeTableMetadata, type TableMetadata } from '../iceberg/table-metadata.js';
import type { TableRequirement, TableUpdate } from '../iceberg/table-update.js';
import { applyChange, type Catalog, type LoadedMetadata } from './catalog.js';

export const VERSION_HINT_FILE = 'version-hint.text';
/** Written by some engines (Impala's test tables) instead of the Java name; read, never written. */
export const LEGACY_VERSION_HINT_FILE = 'version-hint.txt';

const METADATA_FILE = /^v([0-9]+)\.metadata\.json$/;

export interface CurrentMetadata {
  /** N of `v<N>.metadata.json`; the base version for the next commit. */
  readonly version: number;
  readonly metadataLocation: string;
  readonly text: string;
}

export interface CommittedMetadata {
  readonly version: number;
  readonly metadataLocation: string;
}

export function metadataFolder(tableLocation: string): string {
  return catalogMetadataFolder(tableLocation);
}

export function metadataFileLocation(tableLocation: string, version: number): string {
  return joinPath(metadataFolder(tableLocation), `v${version}.metadata.json`);
}

export function versionHintLocation(tableLocation: string): string {
  return joinPath(metadataFolder(tableLocation), VERSION_HINT_FILE);
}

/** N for a file named `v<N>.metadata.json`, else undefined. */
export function metadataVersionOf(fileName: string): number | undefined {
  return versionMatched(METADATA_FILE, fileName);
}

/** The version a metadata file's name carries in `pattern`'s first group, when it is a safe integer. */
export function versionMatched(pattern: RegExp, fileName: string): number | undefined {
  const m = pattern.exec(fileName);
  if (!m) return undefined;
  const version = Number(m[1]);
  return Number.isSafeInteger(version) ? version : undefined;
}

/** The current metadata: the hint's version (or the highest listed), then every later version that exists. */
export async function loadCurrent(io: FileIO, tableLocation: string): Promise<CurrentMetadata> {
  let version = await readHint(io, tableLocation);
  if (version === undefined || !(await io.exists(metadataFileLocation(tableLocation, version)))) {
    // No usable hint, or one naming a missing file (Java throws there; a listing recovers).
    version = await highestListedVersion(io, tableLocation);
  }
  if (version === undefined) {
    throw new NotFoundError(
      `no Iceberg table here: ${metadataFolder(tableLocation)} holds no v<N>.metadata.json`,
      { path: tableLocation },
    );
  }
  while (await io.exists(metadataFileLocation(tableLocation, version + 1))) version += 1;

  const metadataLocation = metadataFileLocation(tableLocation, version);
  const bytes = await io.read(metadataLocation);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    throw new InvalidFileError('table metadata is not valid UTF-8', { path: metadataLocation, cause: err });
  }
  return { version, metadataLocation, text };
}

/**
 * Commits `text` as version `baseVersion + 1`. If another writer already created that version,
 * throws CommitConflictError and leaves nothing behind. The hint is then updated on a best-effort
 * basis: a failed hint write does not fail the commit, because loading probes past the hint.
 */
export async function commitNext(
  io: FileIO,
  tableLocation: string,
  baseVersion: number,
  text: string,
): Promise<CommittedMetadata> {
  if (!Number.isSafeInteger(baseVersion) || baseVersion < 0) {
    throw new InvalidArgumentError(`base version must be a non-negative integer, got ${baseVersion}`);
  }
  const version = baseVersion + 1;
  const metadataLocation = metadataFileLocation(tableLocation, version);
  // A vanished base means old versions were cleaned up since it was read, so v<base+1> may be
  // gone too and creating it would succeed behind the real current version.
  if (baseVersion > 0 && !(await io.exists(metadataFileLocation(tableLocation, baseVersion)))) {
    throw new CommitConflictError(
      `cannot commit v${version}: base v${baseVersion} no longer exists at ${metadataFolder(tableLocation)}; refresh and retry`,
      { path: tableLocation },
    );
  }
  try {
    await io.createIfAbsent(metadataLocation, new TextEncoder().encode(text));
  } catch (err) {
    if (err instanceof AlreadyExistsError) {
      throw new CommitConflictError(
        `v${version}.metadata.json was committed by another writer; refresh and retry`,
        { path: metadataLocation, cause: err },
      );
    }
    throw err;
  }
  await writeHint(io, tableLocation, version);
  return { version, metadataLocation };
}

/**
 * Commits the first version of a table: `text` as `v1.metadata.json`, and the hint.
 * AlreadyExistsError if any version is already there.
 */
export async function commitFirstVersion(io: FileIO, tableLocation: string, text: string): Promise<CommittedMetadata> {
  const existing = await highestListedVersion(io, tableLocation);
  if (existing !== undefined) {
    throw new AlreadyExistsError(`a table already exists here (v${existing}.metadata.json)`, { path: tableLocation });
  }
  try {
    return await commitNext(io, tableLocation, 0, text);
  } catch (err) {
    if (err instanceof CommitConflictError) {
      throw new AlreadyExistsError('a table was created here by another writer', { path: tableLocation, cause: err });
    }
    throw err;
  }
}

/** The hint's version, or undefined when both hint names are missing, empty or not a number. */
async function readHint(io: FileIO, tableLocation: string): Promise<number | undefined> {
  for (const name of [VERSION_HINT_FILE, LEGACY_VERSION_HINT_FILE]) {
    let bytes: Uint8Array;
    try {
      bytes = await io.read(joinPath(metadataFolder(tableLocation), name));
    } catch (err) {
      if (err instanceof NotFoundError) continue;
      // As in Java, an unreadable hint is no hint: the listing decides (and fails loudly if it must).
      return undefined;
    }
    const hint = new TextDecoder().decode(bytes).trim();
    return /^[0-9]+$/.test(hint) && Number(hint) > 0 ? Number(hint) : undefined;
  }
  return undefined;
}

async function highestListedVersion(io: FileIO, tableLocation: string): Promise<number | undefined> {
  const folder = metadataFolder(tableLocation);
  let highest: number | undefined;
  for await (const file of io.list(folder)) {
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    // Only direct children of metadata/ count.
    if (file.path.length - name.length - 1 !== folder.length) continue;
    const version = metadataVersionOf(name);
    if (version !== undefined && (highest === undefined || version > highest)) highest = version;
  }
  return highest;
}

async function writeHint(io: FileIO, tableLocation: string, version: number): Promise<void> {
  try {
    await io.write(versionHintLocation(tableLocation), new TextEncoder().encode(String(version)));
  } catch {
    // Best effort, as in Java: loaders probe past a stale hint.
  }
}

/** The object-store layout as a Catalog: the version token is N of `v<N>.metadata.json`. */
export class ObjectStoreCatalog implements Catalog {
  constructor(
    readonly io: FileIO,
    /** The folder or S3 prefix holding `metadata/`. */
    readonly location: string,
  ) {}

  get name(): string {
    return this.location;
  }

  async load(): Promise<LoadedMetadata> {
    const current = await loadCurrent(this.io, this.location);
    return {
      metadata: parseTableMetadata(current.text, current.metadataLocation),
      metadataLocation: current.metadataLocation,
      versionToken: String(current.version),
    };
  }

  async commit(requirements: readonly TableRequirement[], updates: readonly TableUpdate[], base: LoadedMetadata): Promise<LoadedMetadata> {
    const next = applyChange(this, base, requirements, updates);
    const written = await commitNext(this.io, this.location, versionOf(base), serializeTableMetadata(next));
    return { metadata: next, metadataLocation: written.metadataLocation, versionToken: String(written.version) };
  }

  /** Writes v1 of a new table; AlreadyExistsError if any version is there. */
  async create(metadata: TableMetadata): Promise<LoadedMetadata> {
    const created = await commitFirstVersion(this.io, this.location, serializeTableMetadata(metadata));
    return { metadata, metadataLocation: created.metadataLocation, versionToken: String(created.version) };
  }
}

/** N of the object-store version token. */
export function versionOf(loaded: LoadedMetadata): number {
  const version = /^[0-9]+$/.test(loaded.versionToken) ? Number(loaded.versionToken) : NaN;
  if (!Number.isSafeInteger(version)) {
    throw new InvalidArgumentError(`not an object-store version token: "${loaded.versionToken}"`, { path: loaded.metadataLocation });
  }
  return version;
}
