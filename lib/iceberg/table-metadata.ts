import { InvalidFileError, UnsupportedError } from '../errors.js';
import { isJsonObject, jsonBigInt, jsonNumber, parseJson, stringifyJson, toPlain, type JsonObject } from './json.js';
import { partitionFieldsFromJson, partitionFieldsToJson, type PartitionSpec } from './partition.js';
import { schemaFromJson, schemaToJson, type Schema } from './schema.js';
import {
  MAIN_BRANCH, refFromJson, refToJson, snapshotFromJson, snapshotToJson, type Snapshot, type SnapshotRef,
} from './snapshot.js';
import { sortOrderFromJson, sortOrderToJson, UNSORTED_ORDER, type SortOrder } from './sort-order.js';

export type FormatVersion = 1 | 2 | 3;
export const SUPPORTED_FORMAT_VERSIONS: readonly FormatVersion[] = [1, 2, 3];

export interface SnapshotLogEntry {
  readonly timestampMs: number;
  readonly snapshotId: bigint;
}

export interface MetadataLogEntry {
  readonly timestampMs: number;
  readonly metadataFile: string;
}

/** Table metadata (spec "Table Metadata Fields"), camelCase; the JSON codec is below. */
export interface TableMetadata {
  readonly formatVersion: FormatVersion;
  readonly tableUuid: string;
  readonly location: string;
  readonly lastSequenceNumber: bigint;
  readonly lastUpdatedMs: number;
  readonly lastColumnId: number;
  readonly schemas: readonly Schema[];
  readonly currentSchemaId: number;
  readonly partitionSpecs: readonly PartitionSpec[];
  readonly defaultSpecId: number;
  readonly lastPartitionId: number;
  readonly properties: Readonly<Record<string, string>>;
  /** null when the table has no current snapshot (Java writes -1 up to v2, null in v3). */
  readonly currentSnapshotId: bigint | null;
  readonly snapshots: readonly Snapshot[];
  readonly snapshotLog: readonly SnapshotLogEntry[];
  readonly metadataLog: readonly MetadataLogEntry[];
  readonly sortOrders: readonly SortOrder[];
  readonly defaultSortOrderId: number;
  readonly refs: Readonly<Record<string, SnapshotRef>>;
  /** Absent when the file had no such field (written back the same way). */
  readonly statistics?: readonly JsonObject[];
  readonly partitionStatistics?: readonly JsonObject[];
  /** v3 row lineage: the next row id to hand out. */
  readonly nextRowId?: bigint;
  /** Top-level fields this project does not know, kept for the round trip. */
  readonly extra?: JsonObject;
}

const KNOWN_KEYS = new Set([
  'format-version', 'table-uuid', 'location', 'last-sequence-number', 'last-updated-ms', 'last-column-id',
  'schema', 'schemas', 'current-schema-id', 'partition-spec', 'partition-specs', 'default-spec-id',
  'last-partition-id', 'properties', 'current-snapshot-id', 'snapshots', 'snapshot-log', 'metadata-log',
  'sort-orders', 'default-sort-order-id', 'refs', 'statistics', 'partition-statistics', 'next-row-id',
]);

const REQUIRED: Record<FormatVersion, readonly string[]> = {
  1: ['format-version', 'location', 'last-updated-ms', 'last-column-id', 'schema', 'partition-spec'],
  2: [
    'format-version', 'table-uuid', 'location', 'last-sequence-number', 'last-updated-ms', 'last-column-id',
    'schemas', 'current-schema-id', 'partition-specs', 'default-spec-id', 'last-partition-id', 'sort-orders',
    'default-sort-order-id',
  ],
  3: [
    'format-version', 'table-uuid', 'location', 'last-sequence-number', 'last-updated-ms', 'last-column-id',
    'schemas', 'current-schema-id', 'partition-specs', 'default-spec-id', 'last-partition-id', 'sort-orders',
    'default-sort-order-id', 'next-row-id',
  ],
};

/** Parses a metadata JSON file; `path` names the file in every error. */
export function parseTableMetadata(text: string, path: string): TableMetadata {
  let json: unknown;
  try {
    json = parseJson(text);
  } catch (e) {
    throw new InvalidFileError(`not valid JSON (${(e as Error).message}); is the metadata file truncated?`, { path, cause: e });
  }
  if (!isJsonObject(json)) throw new InvalidFileError('table metadata must be a JSON object', { path });
  try {
    return tableMetadataFromJson(json, path);
  } catch (e) {
    if (e instanceof InvalidFileError || e instanceof UnsupportedError) throw e;
    throw new InvalidFileError(`invalid table metadata: ${(e as Error).message}`, { path, cause: e });
  }
}

export function tableMetadataFromJson(json: JsonObject, path: string): TableMetadata {
  if (json['format-version'] === undefined) throw new InvalidFileError('missing required field "format-version"', { path });
  const version = jsonNumber(json['format-version'], 'format-version');
  if (!SUPPORTED_FORMAT_VERSIONS.includes(version as FormatVersion)) {
    throw new UnsupportedError(`format-version ${version} is not supported (this build reads 1, 2 and 3)`, { path });
  }
  const formatVersion = version as FormatVersion;
  for (const key of REQUIRED[formatVersion]) {
    // v1 writers may already use the v2 list forms.
    const v1Alt = key === 'schema' ? 'schemas' : key === 'partition-spec' ? 'partition-specs' : undefined;
    if (json[key] === undefined && !(v1Alt && json[v1Alt] !== undefined)) {
      throw new InvalidFileError(`missing required field "${key}" for format version ${formatVersion}`, { path });
    }
  }

  const schemas: Schema[] = Array.isArray(json.schemas)
    ? json.schemas.map((s) => schemaFromJson(s as Record<string, unknown>))
    : [schemaFromJson(json.schema as Record<string, unknown>)];
  const currentSchemaId =
    json['current-schema-id'] !== undefined ? jsonNumber(json['current-schema-id'], 'current-schema-id') : schemas[0].schemaId;
  if (!schemas.some((s) => s.schemaId === currentSchemaId)) {
    throw new InvalidFileError(`current-schema-id ${currentSchemaId} is not among the schemas`, { path });
  }

  const partitionSpecs: PartitionSpec[] = Array.isArray(json['partition-specs'])
    ? json['partition-specs'].map((s) => {
        const o = s as JsonObject;
        return { specId: jsonNumber(o['spec-id'], 'spec-id'), fields: partitionFieldsFromJson(o.fields) };
      })
    : [{ specId: 0, fields: partitionFieldsFromJson(json['partition-spec']) }];
  const defaultSpecId = json['default-spec-id'] !== undefined ? jsonNumber(json['default-spec-id'], 'default-spec-id') : 0;
  if (!partitionSpecs.some((s) => s.specId === defaultSpecId)) {
    throw new InvalidFileError(`default-spec-id ${defaultSpecId} is not among the partition specs`, { path });
  }
  const lastPartitionId =
    json['last-partition-id'] !== undefined
      ? jsonNumber(json['last-partition-id'], 'last-partition-id')
      : Math.max(999, ...partitionSpecs.flatMap((s) => s.fields.map((f) => f.fieldId)));

  const sortOrders = Array.isArray(json['sort-orders'])
    ? json['sort-orders'].map((o) => sortOrderFromJson(o as Record<string, unknown>))
    : [UNSORTED_ORDER];

  const properties: Record<string, string> = {};
  if (isJsonObject(json.properties)) for (const [k, v] of Object.entries(json.properties)) properties[k] = String(v);

  let currentSnapshotId: bigint | null = null;
  if (json['current-snapshot-id'] !== undefined && json['current-snapshot-id'] !== null) {
    const id = jsonBigInt(json['current-snapshot-id'], 'current-snapshot-id');
    currentSnapshotId = id === -1n ? null : id;
  }
  const snapshots = Array.isArray(json.snapshots) ? json.snapshots.map((s) => snapshotFromJson(s as JsonObject)) : [];
  if (currentSnapshotId !== null && !snapshots.some((s) => s.snapshotId === currentSnapshotId)) {
    throw new InvalidFileError(`current-snapshot-id ${currentSnapshotId} is not among the snapshots`, { path });
  }

  const refs: Record<string, SnapshotRef> = {};
  if (isJsonObject(json.refs)) for (const [name, r] of Object.entries(json.refs)) refs[name] = refFromJson(r as JsonObject);
  // Spec: with no refs, main points at the current snapshot.
  if (refs[MAIN_BRANCH] === undefined && currentSnapshotId !== null && json.refs === undefined) {
    refs[MAIN_BRANCH] = { snapshotId: currentSnapshotId, type: 'branch' };
  }

  const extra: JsonObject = {};
  let hasExtra = false;
  for (const [k, v] of Object.entries(json)) if (!KNOWN_KEYS.has(k)) { extra[k] = v; hasExtra = true; }

  return {
    formatVersion,
    tableUuid: json['table-uuid'] === undefined ? '' : String(json['table-uuid']),
    location: String(json.location),
    lastSequenceNumber: json['last-sequence-number'] === undefined ? 0n : jsonBigInt(json['last-sequence-number'], 'last-sequence-number'),
    lastUpdatedMs: jsonNumber(json['last-updated-ms'], 'last-updated-ms'),
    lastColumnId: jsonNumber(json['last-column-id'], 'last-column-id'),
    schemas,
    currentSchemaId,
    partitionSpecs,
    defaultSpecId,
    lastPartitionId,
    properties,
    currentSnapshotId,
    snapshots,
    snapshotLog: Array.isArray(json['snapshot-log'])
      ? json['snapshot-log'].map((e) => {
          const o = e as JsonObject;
          return { timestampMs: jsonNumber(o['timestamp-ms'], 'timestamp-ms'), snapshotId: jsonBigInt(o['snapshot-id'], 'snapshot-id') };
        })
      : [],
    metadataLog: Array.isArray(json['metadata-log'])
      ? json['metadata-log'].map((e) => {
          const o = e as JsonObject;
          return { timestampMs: jsonNumber(o['timestamp-ms'], 'timestamp-ms'), metadataFile: String(o['metadata-file']) };
        })
      : [],
    sortOrders,
    defaultSortOrderId:
      json['default-sort-order-id'] !== undefined ? jsonNumber(json['default-sort-order-id'], 'default-sort-order-id') : 0,
    refs,
    ...(Array.isArray(json.statistics) ? { statistics: json.statistics as JsonObject[] } : {}),
    ...(Array.isArray(json['partition-statistics'])
      ? { partitionStatistics: json['partition-statistics'] as JsonObject[] }
      : {}),
    ...(json['next-row-id'] !== undefined && json['next-row-id'] !== null
      ? { nextRowId: jsonBigInt(json['next-row-id'], 'next-row-id') }
      : {}),
    ...(hasExtra ? { extra } : {}),
  };
}

/** Writes metadata JSON in the field order Java's TableMetadataParser uses. */
export function serializeTableMetadata(m: TableMetadata): string {
  const v = m.formatVersion;
  const current = currentSchema(m);
  const defaultSpec = specById(m, m.defaultSpecId);
  const out: Record<string, unknown> = {
    'format-version': v,
    'table-uuid': m.tableUuid,
    location: m.location,
    ...(v >= 2 ? { 'last-sequence-number': m.lastSequenceNumber } : {}),
    'last-updated-ms': m.lastUpdatedMs,
    'last-column-id': m.lastColumnId,
    ...(v === 1 ? { schema: schemaToJson(current) } : {}),
    'current-schema-id': m.currentSchemaId,
    schemas: m.schemas.map(schemaToJson),
    ...(v === 1 ? { 'partition-spec': partitionFieldsToJson(defaultSpec.fields) } : {}),
    'default-spec-id': m.defaultSpecId,
    'partition-specs': m.partitionSpecs.map((s) => ({ 'spec-id': s.specId, fields: partitionFieldsToJson(s.fields) })),
    'last-partition-id': m.lastPartitionId,
    'default-sort-order-id': m.defaultSortOrderId,
    'sort-orders': m.sortOrders.map(sortOrderToJson),
    properties: m.properties,
    'current-snapshot-id': m.currentSnapshotId ?? (v >= 3 ? null : -1),
    ...(v >= 3 ? { 'next-row-id': m.nextRowId ?? 0n } : {}),
    refs: Object.fromEntries(Object.entries(m.refs).map(([k, r]) => [k, refToJson(r)])),
    snapshots: m.snapshots.map((s) => snapshotToJson(s, v)),
    ...(m.statistics ? { statistics: m.statistics } : {}),
    ...(m.partitionStatistics ? { 'partition-statistics': m.partitionStatistics } : {}),
    'snapshot-log': m.snapshotLog.map((e) => ({ 'timestamp-ms': e.timestampMs, 'snapshot-id': e.snapshotId })),
    'metadata-log': m.metadataLog.map((e) => ({ 'timestamp-ms': e.timestampMs, 'metadata-file': e.metadataFile })),
    ...(m.extra ?? {}),
  };
  return stringifyJson(out);
}

export function currentSchema(m: TableMetadata): Schema {
  return schemaById(m, m.currentSchemaId);
}

export function schemaById(m: TableMetadata, id: number): Schema {
  const s = m.schemas.find((x) => x.schemaId === id);
  if (!s) throw new InvalidFileError(`schema ${id} is not in the table metadata`, { path: m.location });
  return s;
}

export function specById(m: TableMetadata, id: number): PartitionSpec {
  const s = m.partitionSpecs.find((x) => x.specId === id);
  if (!s) throw new InvalidFileError(`partition spec ${id} is not in the table metadata`, { path: m.location });
  return s;
}

export function specsById(m: TableMetadata): Map<number, PartitionSpec> {
  return new Map(m.partitionSpecs.map((s) => [s.specId, s]));
}

export function defaultSortOrder(m: TableMetadata): SortOrder {
  return m.sortOrders.find((o) => o.orderId === m.defaultSortOrderId) ?? UNSORTED_ORDER;
}

export function currentSnapshot(m: TableMetadata): Snapshot | undefined {
  return m.currentSnapshotId === null ? undefined : snapshotById(m, m.currentSnapshotId);
}

export function snapshotById(m: TableMetadata, id: bigint): Snapshot | undefined {
  return m.snapshots.find((s) => s.snapshotId === id);
}

/** The branch or tag's snapshot; `main` falls back to the current snapshot. */
export function snapshotForRef(m: TableMetadata, ref: string): Snapshot | undefined {
  const r = m.refs[ref];
  if (r) return snapshotById(m, r.snapshotId);
  return ref === MAIN_BRANCH ? currentSnapshot(m) : undefined;
}

/** Ancestors of a snapshot, itself first, as far as the metadata still holds them. */
export function* ancestorsOf(m: TableMetadata, snapshotId: bigint | undefined): Generator<Snapshot> {
  let id = snapshotId;
  while (id !== undefined) {
    const s = snapshotById(m, id);
    if (!s) return;
    yield s;
    id = s.parentSnapshotId;
  }
}

export function property(m: TableMetadata, key: string, fallback: string): string;
export function property(m: TableMetadata, key: string): string | undefined;
export function property(m: TableMetadata, key: string, fallback?: string): string | undefined {
  return m.properties[key] ?? fallback;
}

export function intProperty(m: TableMetadata, key: string, fallback: number): number {
  const v = m.properties[key];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new InvalidFileError(`table property ${key}="${v}" is not a number`, { path: m.location });
  return n;
}

/** Plain JS copy of an initial-default or similar lossless value. */
export { toPlain };
