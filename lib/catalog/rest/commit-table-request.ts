/**
 * A commit as the Iceberg REST spec's `CommitTableRequest` JSON: `{identifier, requirements,
 * updates}`, each update and requirement in the spec's shape (rest-catalog-open-api.yaml,
 * `TableUpdate` and `TableRequirement`), field names in kebab case and longs written exactly.
 */
import { partitionSpecToJson } from '../../iceberg/partition.js';
import { schemaToJson } from '../../iceberg/schema.js';
import { refToJson, snapshotToJson } from '../../iceberg/snapshot.js';
import { sortOrderToJson } from '../../iceberg/sort-order.js';
import type { TableRequirement, TableUpdate } from '../../iceberg/table-update.js';

export interface TableIdentifier {
  readonly namespace: readonly string[];
  readonly name: string;
}

export function tableUpdateToJson(u: TableUpdate, formatVersion: number): Record<string, unknown> {
  const action = u.action;
  switch (u.action) {
    case 'upgrade-format-version':
      return { action, 'format-version': u.formatVersion };
    case 'add-schema':
      return { action, schema: schemaToJson(u.schema) };
    case 'set-current-schema':
      return { action, 'schema-id': u.schemaId };
    case 'add-spec':
      return { action, spec: partitionSpecToJson(u.spec) };
    case 'set-default-spec':
      return { action, 'spec-id': u.specId };
    case 'add-sort-order':
      return { action, 'sort-order': sortOrderToJson(u.sortOrder) };
    case 'set-default-sort-order':
      return { action, 'sort-order-id': u.sortOrderId };
    case 'add-snapshot':
      return { action, snapshot: snapshotToJson(u.snapshot, formatVersion) };
    case 'set-snapshot-ref': {
      const { action: _, refName, ...ref } = u;
      return { action, 'ref-name': refName, ...refToJson(ref) };
    }
    case 'remove-snapshots':
      return { action, 'snapshot-ids': [...u.snapshotIds] };
    case 'remove-snapshot-ref':
      return { action, 'ref-name': u.refName };
    case 'set-location':
      return { action, location: u.location };
    case 'set-properties':
      return { action, updates: { ...u.updates } };
    case 'remove-properties':
      return { action, removals: [...u.removals] };
  }
}

export function tableRequirementToJson(r: TableRequirement): Record<string, unknown> {
  const type = r.type;
  switch (r.type) {
    case 'assert-create':
      return { type };
    case 'assert-table-uuid':
      return { type, uuid: r.uuid };
    case 'assert-ref-snapshot-id':
      return { type, ref: r.ref, 'snapshot-id': r.snapshotId };
    case 'assert-last-assigned-field-id':
      return { type, 'last-assigned-field-id': r.lastAssignedFieldId };
    case 'assert-current-schema-id':
      return { type, 'current-schema-id': r.currentSchemaId };
    case 'assert-last-assigned-partition-id':
      return { type, 'last-assigned-partition-id': r.lastAssignedPartitionId };
    case 'assert-default-spec-id':
      return { type, 'default-spec-id': r.defaultSpecId };
    case 'assert-default-sort-order-id':
      return { type, 'default-sort-order-id': r.defaultSortOrderId };
  }
}

/**
 * The request body; `formatVersion` is the base's, raised by an `upgrade-format-version` among the
 * updates (it decides whether a snapshot carries its sequence number).
 */
export function commitTableRequest(
  identifier: TableIdentifier,
  requirements: readonly TableRequirement[],
  updates: readonly TableUpdate[],
  formatVersion: number,
): Record<string, unknown> {
  const version = Math.max(formatVersion, ...updates.map((u) => (u.action === 'upgrade-format-version' ? u.formatVersion : 0)));
  return {
    identifier: { namespace: [...identifier.namespace], name: identifier.name },
    requirements: requirements.map(tableRequirementToJson),
    updates: updates.map((u) => tableUpdateToJson(u, version)),
  };
}
