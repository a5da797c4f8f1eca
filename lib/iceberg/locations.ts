/**
 * Where a table's files go, as Java's LocationProviders (1.12) and PyIceberg's
 * `pyiceberg/table/locations.py` decide it. Every writer asks here:
 * - data and delete files: below `write.data.path` (default `<table>/data`), in the partition's
 *   folder `name=value/...` exactly as Java's `PartitionSpec.partitionToPath` writes it, or, with
 *   `write.object-storage.enabled`, below a 20-bit hash folder (ObjectStoreLocationProvider);
 * - manifests, manifest lists and other metadata: `write.metadata.path` (default
 *   `<table>/metadata`), as BaseMetastoreTableOperations and PyIceberg do;
 * - the object-store catalog's own `v<N>.metadata.json` and hint: always `<table>/metadata`,
 *   as Java's HadoopTableOperations keeps them whatever `write.metadata.path` says.
 *
 * `write.location-provider.impl` names a Java class, which cannot run here; like PyIceberg
 * (which reads its own `write.py-location-provider.impl`) packice then uses the built-in providers.
 */
import { ValidationError } from '../errors.js';
import { joinPath } from '../io/path.js';
import { partitionType, type PartitionSpec } from './partition.js';
import type { TableMetadata } from './table-metadata.js';
import { murmur3_x86_32, toHumanString, utf8JavaBytes } from './transform.js';
import { isPrimitive, type PrimitiveType, type StructType } from './types.js';
import type { Row } from './values.js';

export const WRITE_DATA_PATH = 'write.data.path';
export const WRITE_METADATA_PATH = 'write.metadata.path';
export const OBJECT_STORE_ENABLED = 'write.object-storage.enabled';
export const OBJECT_STORE_PARTITIONED_PATHS = 'write.object-storage.partitioned-paths';
/** Deprecated in Java: 1.12 refuses to write when one of them is what would place data files. */
export const OBJECT_STORE_PATH = 'write.object-storage.path';
export const WRITE_FOLDER_STORAGE_PATH = 'write.folder-storage.path';
/** Every property that holds a location, for tools that move a table (relocate). */
export const LOCATION_PROPERTIES = [WRITE_DATA_PATH, WRITE_METADATA_PATH, OBJECT_STORE_PATH, WRITE_FOLDER_STORAGE_PATH] as const;

export const DATA_FOLDER = 'data';
export const METADATA_FOLDER = 'metadata';

type Properties = Readonly<Record<string, string>>;

/** Where the data and delete files of one table go (Java's LocationProvider). */
export interface LocationProvider {
  /** The folder data files go below (`write.data.path`, else `<table>/data`). */
  readonly dataLocation: string;
  /**
   * A new data or delete file. `partitionPath` is the partition's folder from `partitionToPath`;
   * empty or absent for unpartitioned files and for files that span partitions (Puffin DVs).
   */
  newDataLocation(fileName: string, partitionPath?: string): string;
}

/** The provider Java 1.12 would use for a table at `tableLocation` with these properties. */
export function locationProvider(tableLocation: string, properties: Properties): LocationProvider {
  const table = stripTrailingSlash(tableLocation);
  return javaBoolean(properties[OBJECT_STORE_ENABLED], false)
    ? objectStoreProvider(table, properties)
    : simpleProvider(table, properties);
}

export function tableLocationProvider(metadata: TableMetadata): LocationProvider {
  return locationProvider(metadata.location, metadata.properties);
}

/** A metadata file (manifest, manifest list, compaction map): below `write.metadata.path`, else `<table>/metadata`. */
export function newMetadataLocation(metadata: TableMetadata, fileName: string): string {
  const folder = nonEmpty(metadata.properties[WRITE_METADATA_PATH]) ?? joinPath(metadata.location, METADATA_FOLDER);
  return joinPath(folder, fileName);
}

/** The object-store catalog's folder (`v<N>.metadata.json`, version hint); HadoopTableOperations' `metadataRoot()`. */
export function catalogMetadataFolder(tableLocation: string): string {
  return joinPath(tableLocation, METADATA_FOLDER);
}

/**
 * Java's `PartitionSpec.partitionToPath`: `name=value` per field joined by `/`, the value the
 * transform's human string (`ts_hour=2026-01-01-10`, `null` for null), name and value escaped
 * as `URLEncoder.encode(s, UTF_8)` does. `type` is the spec's partition type (`partitionType`).
 */
export function partitionToPath(spec: PartitionSpec, partition: Row, type: StructType): string {
  return spec.fields
    .map((pf, i) => {
      const t = type.fields[i]?.type;
      const resultType: PrimitiveType = t && isPrimitive(t) ? t : { type: 'unknown' };
      return `${urlEncode(pf.name)}=${urlEncode(toHumanString(pf.transform, resultType, partition[pf.name]))}`;
    })
    .join('/');
}

/** `partitionToPath` of a partition of `spec` over the table schema `schema`. */
export function partitionFolder(spec: PartitionSpec, partition: Row, schema: StructType): string {
  return partitionToPath(spec, partition, partitionType(spec, schema));
}

const URL_SAFE = /^[A-Za-z0-9.*_-]$/;
const HEX = '0123456789ABCDEF';

/** Java's URLEncoder.encode(s, UTF_8): letters, digits and `.-*_` stay, space is `+`, the rest `%XX` of UTF-8. */
export function urlEncode(s: string): string {
  let out = '';
  for (const ch of s) {
    if (URL_SAFE.test(ch)) out += ch;
    else if (ch === ' ') out += '+';
    else for (const b of utf8JavaBytes(ch)) out += `%${HEX[b >> 4]}${HEX[b & 15]}`;
  }
  return out;
}

// ---- providers ----

function simpleProvider(table: string, properties: Properties): LocationProvider {
  const data = stripTrailingSlash(
    nonEmpty(properties[WRITE_DATA_PATH]) ?? legacy(properties, WRITE_FOLDER_STORAGE_PATH, table) ?? `${table}/${DATA_FOLDER}`,
  );
  return {
    dataLocation: data,
    newDataLocation: (fileName, partitionPath) => (partitionPath ? `${data}/${partitionPath}/${fileName}` : `${data}/${fileName}`),
  };
}

/**
 * Java's ObjectStoreLocationProvider: a 20-bit Murmur3 hash of the file name (with its partition
 * folder when `write.object-storage.partitioned-paths`, default true) as folders `1001/1001/1001/10011001`
 * spreads files over object-store prefixes; a data path outside the table adds `<parent>/<table>`.
 */
function objectStoreProvider(table: string, properties: Properties): LocationProvider {
  const storage = stripTrailingSlash(
    nonEmpty(properties[WRITE_DATA_PATH]) ??
      legacy(properties, OBJECT_STORE_PATH, table) ??
      legacy(properties, WRITE_FOLDER_STORAGE_PATH, table) ??
      `${table}/${DATA_FOLDER}`,
  );
  const context = storage.startsWith(table) ? undefined : pathContext(table);
  const partitioned = javaBoolean(properties[OBJECT_STORE_PARTITIONED_PATHS], true);
  const place = (fileName: string): string => {
    const hash = hashFolders(fileName);
    if (context !== undefined) return `${storage}/${hash}/${context}/${fileName}`;
    return partitioned ? `${storage}/${hash}/${fileName}` : `${storage}/${hash}-${fileName}`;
  };
  return {
    dataLocation: storage,
    newDataLocation: (fileName, partitionPath) => place(partitioned && partitionPath ? `${partitionPath}/${fileName}` : fileName),
  };
}

const HASH_BITS = 20;
const ENTROPY_DIR_LENGTH = 4;
const ENTROPY_DIR_DEPTH = 3;

/** The low 20 bits of Murmur3 (UTF-8) as binary, cut into 3 folders of 4 and the rest. */
export function hashFolders(fileName: string): string {
  const bits = ((murmur3_x86_32(utf8JavaBytes(fileName)) | 0x80000000) >>> 0).toString(2).slice(-HASH_BITS);
  const dirs: string[] = [];
  for (let i = 0; i < ENTROPY_DIR_DEPTH * ENTROPY_DIR_LENGTH; i += ENTROPY_DIR_LENGTH) dirs.push(bits.slice(i, i + ENTROPY_DIR_LENGTH));
  dirs.push(bits.slice(ENTROPY_DIR_DEPTH * ENTROPY_DIR_LENGTH));
  return dirs.join('/');
}

/** Hadoop `Path` parent and name of the table location: `s3://b/db/tbl` gives `db/tbl`. */
function pathContext(table: string): string {
  const path = table.replace(/^[a-zA-Z][a-zA-Z0-9+.-]*:(\/\/[^/]*)?/, '');
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.length === 0) return '';
  return `${parts.length > 1 ? parts[parts.length - 2] : ''}/${parts[parts.length - 1]}`;
}

/** A deprecated property, read only when `write.data.path` is unset; Java 1.12 then refuses it. */
function legacy(properties: Properties, key: string, table: string): string | undefined {
  if (nonEmpty(properties[key]) === undefined) return undefined;
  throw new ValidationError(
    `table property '${key}' has been deprecated and will be removed in 2.0.0, use '${WRITE_DATA_PATH}' instead ` +
      '(Java Iceberg 1.12 refuses to write data files with it)',
    { path: table },
  );
}

/** Java's Boolean.parseBoolean with a default for an absent property. */
function javaBoolean(v: string | undefined, fallback: boolean): boolean {
  return v === undefined ? fallback : v.toLowerCase() === 'true';
}

/** An empty property counts as unset, as in PyIceberg (Java 1.12 refuses it: stripTrailingSlash rejects an empty path). */
function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** LocationUtil.stripTrailingSlash: keeps the `//` of a bare `scheme://`. */
function stripTrailingSlash(s: string): string {
  let out = s;
  while (out.endsWith('/') && !out.endsWith('://')) out = out.slice(0, -1);
  return out;
}
