/**
 * The tables a deployment maintains, as the CDK construct hands them to the functions (one JSON
 * environment variable): each location with its compaction policy and retention settings.
 * The trigger finds the table an S3 event is about here; the schedules list them all.
 */
import type { CompactionPolicy, TableRef } from '../compaction/messages.js';
import { InvalidArgumentError } from '../errors.js';

/** The functions' environment variable holding the JSON array of MaintainedTable. */
export const MAINTAINED_TABLES_ENV = 'PACKICE_TABLES';

/** Expiry and orphan-removal settings of one table; unset fields follow the table's properties (lib/maintenance). */
export interface TableRetention {
  /** Snapshots older than this may expire (else `history.expire.max-snapshot-age-ms`, 5 days). */
  readonly olderThanMs?: number;
  /** Snapshots kept per branch whatever their age (else `history.expire.min-snapshots-to-keep`, 1). */
  readonly retainLast?: number;
  /** Snapshot ids or ref names that never expire. */
  readonly pins?: readonly string[];
  /** Audit or replay horizons: nothing younger than the longest expires. */
  readonly horizonsMs?: readonly number[];
  /** Orphan removal deletes only unreferenced files older than this (3 days unless told). */
  readonly orphanOlderThanMs?: number;
}

export interface MaintainedTable extends TableRef {
  /** Where the files of a table named in a catalog (`glue://…`) are: its notifications come from there. */
  readonly storageLocation?: string;
  readonly policy?: CompactionPolicy;
  readonly retention?: TableRetention;
}

/** The MaintainedTable list from the environment variable's JSON text. */
export function parseMaintainedTables(text: string | undefined): MaintainedTable[] {
  if (text === undefined || text === '') throw new InvalidArgumentError(`${MAINTAINED_TABLES_ENV} is not set: the construct sets it to the tables to maintain`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new InvalidArgumentError(`${MAINTAINED_TABLES_ENV} is not JSON: ${(e as Error).message}`, { cause: e });
  }
  if (!Array.isArray(value)) throw new InvalidArgumentError(`${MAINTAINED_TABLES_ENV} must be a JSON array of tables`);
  return value.map((t: unknown, i) => {
    if (typeof t !== 'object' || t === null || typeof (t as { location?: unknown }).location !== 'string') {
      throw new InvalidArgumentError(`${MAINTAINED_TABLES_ENV}[${i}] has no "location" string`);
    }
    return t as MaintainedTable;
  });
}

/** `s3a://b/p/` and `s3://b/p` are the same table: compare bucket and key prefix. */
export function locationKey(location: string): string {
  return location.replace(/^s3[an]?:\/\//i, 's3://').replace(/\/+$/, '');
}

/**
 * The configured table whose `metadata/` folder holds the object `key` of `bucket`, if the key
 * names a metadata file (`<table>/metadata/<name>.metadata.json`): a table at that location, or
 * one named in a catalog whose files are there.
 */
export function tableOfMetadataObject(tables: readonly MaintainedTable[], bucket: string, key: string): MaintainedTable | undefined {
  const m = /^(.*)\/metadata\/[^/]+\.metadata\.json$/.exec(key);
  if (!m) return undefined;
  const location = locationKey(`s3://${bucket}/${m[1]}`);
  return tables.find((t) => locationKey(t.storageLocation ?? t.location) === location);
}

/** The table reference a step opens: location and endpoint, without the settings. */
export function tableRefOf(table: MaintainedTable): TableRef {
  return { location: table.location, ...(table.s3Endpoint !== undefined ? { s3Endpoint: table.s3Endpoint } : {}) };
}
