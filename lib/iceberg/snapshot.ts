import { jsonBigInt, jsonNumber, type JsonObject } from './json.js';

export const Operation = {
  Append: 'append',
  Replace: 'replace',
  Overwrite: 'overwrite',
  Delete: 'delete',
} as const;
export type Operation = (typeof Operation)[keyof typeof Operation];

export interface Snapshot {
  readonly snapshotId: bigint;
  readonly parentSnapshotId?: bigint;
  readonly sequenceNumber: bigint;
  readonly timestampMs: number;
  /** Absent only in v1 tables that list manifests inline. */
  readonly manifestList?: string;
  /** v1 only: manifest paths listed inline. */
  readonly manifests?: readonly string[];
  /** Always holds `operation`. */
  readonly summary: Readonly<Record<string, string>>;
  readonly schemaId?: number;
  /** v3 row lineage. */
  readonly firstRowId?: bigint;
  readonly addedRows?: bigint;
  /** Fields this project does not know, kept for the round trip. */
  readonly extra?: JsonObject;
}

export interface SnapshotRef {
  readonly snapshotId: bigint;
  readonly type: 'branch' | 'tag';
  readonly minSnapshotsToKeep?: number;
  readonly maxSnapshotAgeMs?: number;
  readonly maxRefAgeMs?: number;
  readonly extra?: JsonObject;
}

export const MAIN_BRANCH = 'main';

const SNAPSHOT_KEYS = new Set([
  'snapshot-id', 'parent-snapshot-id', 'sequence-number', 'timestamp-ms', 'manifest-list', 'manifests',
  'summary', 'schema-id', 'first-row-id', 'added-rows',
]);
const REF_KEYS = new Set(['snapshot-id', 'type', 'min-snapshots-to-keep', 'max-snapshot-age-ms', 'max-ref-age-ms']);

function extraOf(json: JsonObject, known: Set<string>): JsonObject | undefined {
  const extra: JsonObject = {};
  let any = false;
  for (const [k, v] of Object.entries(json)) if (!known.has(k)) { extra[k] = v; any = true; }
  return any ? extra : undefined;
}

export function snapshotFromJson(json: JsonObject): Snapshot {
  const summary: Record<string, string> = {};
  if (json.summary && typeof json.summary === 'object' && !Array.isArray(json.summary)) {
    for (const [k, v] of Object.entries(json.summary as JsonObject)) summary[k] = String(v);
  }
  // v1 snapshots may lack a summary; the spec treats the operation as append then.
  if (summary.operation === undefined) summary.operation = Operation.Append;
  const optBig = (k: string): bigint | undefined =>
    json[k] === undefined || json[k] === null ? undefined : jsonBigInt(json[k], k);
  return {
    snapshotId: jsonBigInt(json['snapshot-id'], 'snapshot-id'),
    ...(optBig('parent-snapshot-id') !== undefined ? { parentSnapshotId: optBig('parent-snapshot-id') } : {}),
    sequenceNumber: optBig('sequence-number') ?? 0n,
    timestampMs: jsonNumber(json['timestamp-ms'], 'timestamp-ms'),
    ...(typeof json['manifest-list'] === 'string' ? { manifestList: json['manifest-list'] } : {}),
    ...(Array.isArray(json.manifests) ? { manifests: json.manifests.map(String) } : {}),
    summary,
    ...(json['schema-id'] !== undefined ? { schemaId: jsonNumber(json['schema-id'], 'schema-id') } : {}),
    ...(optBig('first-row-id') !== undefined ? { firstRowId: optBig('first-row-id') } : {}),
    ...(optBig('added-rows') !== undefined ? { addedRows: optBig('added-rows') } : {}),
    ...(extraOf(json, SNAPSHOT_KEYS) ? { extra: extraOf(json, SNAPSHOT_KEYS) } : {}),
  };
}

export function snapshotToJson(s: Snapshot, formatVersion: number): Record<string, unknown> {
  return {
    ...(formatVersion >= 2 ? { 'sequence-number': s.sequenceNumber } : {}),
    'snapshot-id': s.snapshotId,
    ...(s.parentSnapshotId !== undefined ? { 'parent-snapshot-id': s.parentSnapshotId } : {}),
    'timestamp-ms': s.timestampMs,
    summary: s.summary,
    ...(s.manifestList !== undefined ? { 'manifest-list': s.manifestList } : {}),
    ...(s.manifests !== undefined ? { manifests: s.manifests } : {}),
    ...(s.schemaId !== undefined ? { 'schema-id': s.schemaId } : {}),
    ...(s.firstRowId !== undefined ? { 'first-row-id': s.firstRowId } : {}),
    ...(s.addedRows !== undefined ? { 'added-rows': s.addedRows } : {}),
    ...(s.extra ?? {}),
  };
}

export function refFromJson(json: JsonObject): SnapshotRef {
  const opt = (k: string): number | undefined => (json[k] === undefined || json[k] === null ? undefined : jsonNumber(json[k], k));
  const minKeep = opt('min-snapshots-to-keep');
  const maxAge = opt('max-snapshot-age-ms');
  const maxRefAge = opt('max-ref-age-ms');
  const extra = extraOf(json, REF_KEYS);
  return {
    snapshotId: jsonBigInt(json['snapshot-id'], 'snapshot-id'),
    type: json.type === 'tag' ? 'tag' : 'branch',
    ...(minKeep !== undefined ? { minSnapshotsToKeep: minKeep } : {}),
    ...(maxAge !== undefined ? { maxSnapshotAgeMs: maxAge } : {}),
    ...(maxRefAge !== undefined ? { maxRefAgeMs: maxRefAge } : {}),
    ...(extra ? { extra } : {}),
  };
}

export function refToJson(r: SnapshotRef): Record<string, unknown> {
  return {
    'snapshot-id': r.snapshotId,
    type: r.type,
    ...(r.minSnapshotsToKeep !== undefined ? { 'min-snapshots-to-keep': r.minSnapshotsToKeep } : {}),
    ...(r.maxSnapshotAgeMs !== undefined ? { 'max-snapshot-age-ms': r.maxSnapshotAgeMs } : {}),
    ...(r.maxRefAgeMs !== undefined ? { 'max-ref-age-ms': r.maxRefAgeMs } : {}),
    ...(r.extra ?? {}),
  };
}
