import { CommitConflictError, ValidationError } from '../errors.js';
import type { PartitionSpec } from './partition.js';
import type { Schema } from './schema.js';
import { maxFieldId } from './schema.js';
import { MAIN_BRANCH, type Snapshot, type SnapshotRef } from './snapshot.js';
import type { SortOrder } from './sort-order.js';
import type { FormatVersion, TableMetadata } from './table-metadata.js';

/** Changes to table metadata, tagged by `action` as the Iceberg REST spec names them. */
export type TableUpdate =
  | { readonly action: 'upgrade-format-version'; readonly formatVersion: FormatVersion }
  | { readonly action: 'add-schema'; readonly schema: Schema }
  | { readonly action: 'set-current-schema'; readonly schemaId: number }
  | { readonly action: 'add-spec'; readonly spec: PartitionSpec }
  | { readonly action: 'set-default-spec'; readonly specId: number }
  | { readonly action: 'add-sort-order'; readonly sortOrder: SortOrder }
  | { readonly action: 'set-default-sort-order'; readonly sortOrderId: number }
  | { readonly action: 'add-snapshot'; readonly snapshot: Snapshot }
  | ({ readonly action: 'set-snapshot-ref'; readonly refName: string } & SnapshotRef)
  | { readonly action: 'remove-snapshots'; readonly snapshotIds: readonly bigint[] }
  | { readonly action: 'remove-snapshot-ref'; readonly refName: string }
  | { readonly action: 'set-location'; readonly location: string }
  | { readonly action: 'set-properties'; readonly updates: Readonly<Record<string, string>> }
  | { readonly action: 'remove-properties'; readonly removals: readonly string[] };

/**
 * Preconditions on the base a change was computed from, tagged by `type` as in the REST spec
 * (`TableRequirement` in rest-catalog-open-api.yaml: every one of its eight kinds).
 */
export type TableRequirement =
  | { readonly type: 'assert-create' }
  | { readonly type: 'assert-table-uuid'; readonly uuid: string }
  /** `snapshotId` null: the ref must not exist. */
  | { readonly type: 'assert-ref-snapshot-id'; readonly ref: string; readonly snapshotId: bigint | null }
  | { readonly type: 'assert-last-assigned-field-id'; readonly lastAssignedFieldId: number }
  | { readonly type: 'assert-current-schema-id'; readonly currentSchemaId: number }
  | { readonly type: 'assert-last-assigned-partition-id'; readonly lastAssignedPartitionId: number }
  | { readonly type: 'assert-default-spec-id'; readonly defaultSpecId: number }
  | { readonly type: 'assert-default-sort-order-id'; readonly defaultSortOrderId: number };

export type TableRequirementType = TableRequirement['type'];

/**
 * Throws CommitConflictError naming the requirement ("expected X, found Y") when `base` does not
 * satisfy it. `base` undefined: the table does not exist (only `assert-create` holds then).
 */
export function checkRequirements(base: TableMetadata | undefined, requirements: readonly TableRequirement[], table?: string): void {
  for (const r of requirements) {
    const fail = (what: string, expected: unknown, found: unknown): never => {
      throw new CommitConflictError(
        `Requirement failed (${r.type}): ${what}: expected ${String(expected)}, found ${String(found)}`,
        { path: table ?? base?.location, requirement: r.type },
      );
    };
    if (r.type === 'assert-create') {
      if (base !== undefined) fail('the table must not exist', 'no table', `table ${base.tableUuid}`);
      continue;
    }
    if (base === undefined) return fail('the table must exist', 'a table', 'none');
    switch (r.type) {
      case 'assert-table-uuid':
        if (base.tableUuid !== r.uuid) fail('table uuid', r.uuid, base.tableUuid);
        break;
      case 'assert-ref-snapshot-id': {
        const found = base.refs[r.ref]?.snapshotId ?? (r.ref === MAIN_BRANCH ? base.currentSnapshotId : null) ?? null;
        if (found !== r.snapshotId) fail(`${base.refs[r.ref]?.type ?? 'branch'} ${r.ref} snapshot`, r.snapshotId ?? 'none', found ?? 'none');
        break;
      }
      case 'assert-last-assigned-field-id':
        if (base.lastColumnId !== r.lastAssignedFieldId) fail('last assigned field id', r.lastAssignedFieldId, base.lastColumnId);
        break;
      case 'assert-current-schema-id':
        if (base.currentSchemaId !== r.currentSchemaId) fail('current schema id', r.currentSchemaId, base.currentSchemaId);
        break;
      case 'assert-last-assigned-partition-id':
        if (base.lastPartitionId !== r.lastAssignedPartitionId)
          fail('last assigned partition id', r.lastAssignedPartitionId, base.lastPartitionId);
        break;
      case 'assert-default-spec-id':
        if (base.defaultSpecId !== r.defaultSpecId) fail('default spec id', r.defaultSpecId, base.defaultSpecId);
        break;
      case 'assert-default-sort-order-id':
        if (base.defaultSortOrderId !== r.defaultSortOrderId) fail('default sort order id', r.defaultSortOrderId, base.defaultSortOrderId);
        break;
    }
  }
}

export interface ApplyContext {
  /** Location of the base metadata file, recorded in the metadata log. */
  readonly baseMetadataLocation?: string;
  readonly nowMs?: number;
}

const PREVIOUS_VERSIONS_MAX = 'write.metadata.previous-versions-max';

/** Applies updates to a base, as a pure function; the result is the next metadata file's content. */
export function applyUpdates(base: TableMetadata, updates: readonly TableUpdate[], ctx: ApplyContext = {}): TableMetadata {
  const now = Math.max(ctx.nowMs ?? Date.now(), base.lastUpdatedMs);
  let m: { -readonly [K in keyof TableMetadata]: TableMetadata[K] } = { ...base };
  const snapshotLog = [...base.snapshotLog];
  for (const u of updates) {
    switch (u.action) {
      case 'upgrade-format-version':
        if (u.formatVersion < m.formatVersion) {
          throw new ValidationError(`Cannot downgrade v${m.formatVersion} table to v${u.formatVersion}`);
        }
        if (m.formatVersion < 3 && u.formatVersion >= 3) m.nextRowId = 0n;
        m.formatVersion = u.formatVersion;
        break;
      case 'add-schema':
        if (m.schemas.some((s) => s.schemaId === u.schema.schemaId)) throw new ValidationError(`schema ${u.schema.schemaId} already exists`);
        m.schemas = [...m.schemas, u.schema];
        m.lastColumnId = Math.max(m.lastColumnId, maxFieldId(u.schema));
        break;
      case 'set-current-schema': {
        const id = u.schemaId === -1 ? m.schemas[m.schemas.length - 1].schemaId : u.schemaId;
        if (!m.schemas.some((s) => s.schemaId === id)) throw new ValidationError(`Cannot set current schema to unknown schema: ${id}`);
        m.currentSchemaId = id;
        break;
      }
      case 'add-spec':
        if (m.partitionSpecs.some((s) => s.specId === u.spec.specId)) throw new ValidationError(`spec ${u.spec.specId} already exists`);
        m.partitionSpecs = [...m.partitionSpecs, u.spec];
        m.lastPartitionId = Math.max(m.lastPartitionId, ...u.spec.fields.map((f) => f.fieldId));
        break;
      case 'set-default-spec': {
        const id = u.specId === -1 ? m.partitionSpecs[m.partitionSpecs.length - 1].specId : u.specId;
        if (!m.partitionSpecs.some((s) => s.specId === id)) throw new ValidationError(`Cannot set default partition spec to unknown spec: ${id}`);
        m.defaultSpecId = id;
        break;
      }
      case 'add-sort-order':
        m.sortOrders = [...m.sortOrders.filter((o) => o.orderId !== u.sortOrder.orderId), u.sortOrder];
        break;
      case 'set-default-sort-order':
        m.defaultSortOrderId = u.sortOrderId === -1 ? m.sortOrders[m.sortOrders.length - 1].orderId : u.sortOrderId;
        break;
      case 'add-snapshot': {
        const s = u.snapshot;
        if (m.snapshots.some((x) => x.snapshotId === s.snapshotId)) throw new ValidationError(`Snapshot already exists for id: ${s.snapshotId}`);
        if (m.formatVersion >= 2 && s.sequenceNumber <= m.lastSequenceNumber && s.parentSnapshotId !== undefined) {
          throw new CommitConflictError(
            `Cannot add snapshot with sequence number ${s.sequenceNumber} older than last sequence number ${m.lastSequenceNumber}`,
          );
        }
        if (m.formatVersion >= 3) {
          if (s.firstRowId === undefined || s.addedRows === undefined) {
            throw new ValidationError(`v3 snapshot ${s.snapshotId} needs first-row-id and added-rows`);
          }
          if (s.firstRowId < (m.nextRowId ?? 0n)) {
            throw new CommitConflictError(
              `Cannot add a snapshot, first-row-id is behind table next-row-id: ${s.firstRowId} < ${m.nextRowId ?? 0n}`,
            );
          }
          m.nextRowId = (m.nextRowId ?? 0n) + s.addedRows;
        }
        m.snapshots = [...m.snapshots, s];
        if (s.sequenceNumber > m.lastSequenceNumber) m.lastSequenceNumber = s.sequenceNumber;
        break;
      }
      case 'set-snapshot-ref': {
        const { action: _a, refName, ...ref } = u;
        if (!m.snapshots.some((s) => s.snapshotId === ref.snapshotId)) {
          throw new ValidationError(`Cannot set ${refName} to unknown snapshot: ${ref.snapshotId}`);
        }
        m.refs = { ...m.refs, [refName]: ref };
        if (refName === MAIN_BRANCH && m.currentSnapshotId !== ref.snapshotId) {
          m.currentSnapshotId = ref.snapshotId;
          const s = m.snapshots.find((x) => x.snapshotId === ref.snapshotId);
          snapshotLog.push({ timestampMs: s?.timestampMs ?? now, snapshotId: ref.snapshotId });
        }
        break;
      }
      case 'remove-snapshots': {
        const gone = new Set(u.snapshotIds);
        m.snapshots = m.snapshots.filter((s) => !gone.has(s.snapshotId));
        m.refs = Object.fromEntries(Object.entries(m.refs).filter(([, r]) => !gone.has(r.snapshotId)));
        const keep = (s: Record<string, unknown>): boolean => !gone.has(BigInt(String(s['snapshot-id'])));
        if (m.statistics) m.statistics = m.statistics.filter(keep);
        if (m.partitionStatistics) m.partitionStatistics = m.partitionStatistics.filter(keep);
        break;
      }
      case 'remove-snapshot-ref': {
        const { [u.refName]: _gone, ...rest } = m.refs;
        m.refs = rest;
        if (u.refName === MAIN_BRANCH) m.currentSnapshotId = null;
        break;
      }
      case 'set-location':
        m.location = u.location;
        break;
      case 'set-properties':
        if ('format-version' in u.updates) throw new ValidationError('format-version is reserved; use upgrade-format-version');
        m.properties = { ...m.properties, ...u.updates };
        break;
      case 'remove-properties': {
        const props = { ...m.properties };
        for (const k of u.removals) delete props[k];
        m.properties = props;
        break;
      }
    }
  }
  // The snapshot log keeps only entries of snapshots that still exist, as Java does after expiry.
  const live = new Set(m.snapshots.map((s) => s.snapshotId));
  m.snapshotLog = snapshotLog.filter((e) => live.has(e.snapshotId));
  if (ctx.baseMetadataLocation !== undefined) {
    const max = Number(m.properties[PREVIOUS_VERSIONS_MAX] ?? 100);
    const log = [...base.metadataLog, { timestampMs: base.lastUpdatedMs, metadataFile: ctx.baseMetadataLocation }];
    m.metadataLog = log.slice(Math.max(0, log.length - max));
  }
  m.lastUpdatedMs = now;
  m = { ...m };
  return m;
}
