/**
 * The server side of the REST spec's CommitTableRequest JSON, written from the spec
 * (rest-catalog-open-api.yaml) independently of lib/catalog/rest/commit-table-request.ts, so a
 * round trip through both checks the client's field names.
 */
import { InvalidArgumentError } from '../../lib/errors.js';
import { isJsonObject, jsonBigInt, jsonNumber, type JsonObject, type JsonValue } from '../../lib/iceberg/json.js';
import { partitionSpecFromJson } from '../../lib/iceberg/partition.js';
import { schemaFromJson } from '../../lib/iceberg/schema.js';
import { refFromJson, snapshotFromJson } from '../../lib/iceberg/snapshot.js';
import { sortOrderFromJson } from '../../lib/iceberg/sort-order.js';
import type { FormatVersion } from '../../lib/iceberg/table-metadata.js';
import type { TableRequirement, TableUpdate } from '../../lib/iceberg/table-update.js';

function field(json: JsonObject, key: string): JsonValue {
  const v = json[key];
  if (v === undefined) throw new InvalidArgumentError(`missing "${key}" in ${String(json.action ?? json.type)}`);
  return v;
}

function obj(v: JsonValue): JsonObject {
  if (!isJsonObject(v)) throw new InvalidArgumentError('expected a JSON object');
  return v;
}

const num = (json: JsonObject, key: string): number => jsonNumber(field(json, key), key);
const str = (json: JsonObject, key: string): string => String(field(json, key));
const strings = (v: JsonValue): string[] => (Array.isArray(v) ? v.map(String) : []);

export function tableUpdateFromJson(json: JsonObject): TableUpdate {
  const action = String(json.action);
  switch (action) {
    case 'upgrade-format-version':
      return { action, formatVersion: num(json, 'format-version') as FormatVersion };
    case 'add-schema':
      return { action, schema: schemaFromJson(obj(field(json, 'schema'))) };
    case 'set-current-schema':
      return { action, schemaId: num(json, 'schema-id') };
    case 'add-spec':
      return { action, spec: partitionSpecFromJson(obj(field(json, 'spec'))) };
    case 'set-default-spec':
      return { action, specId: num(json, 'spec-id') };
    case 'add-sort-order':
      return { action, sortOrder: sortOrderFromJson(obj(field(json, 'sort-order'))) };
    case 'set-default-sort-order':
      return { action, sortOrderId: num(json, 'sort-order-id') };
    case 'add-snapshot':
      return { action, snapshot: snapshotFromJson(obj(field(json, 'snapshot'))) };
    case 'set-snapshot-ref': {
      const { action: _a, 'ref-name': refName, ...ref } = json;
      return { action, refName: String(refName), ...refFromJson(ref) };
    }
    case 'remove-snapshots':
      return { action, snapshotIds: (field(json, 'snapshot-ids') as JsonValue[]).map((v) => jsonBigInt(v, 'snapshot-ids')) };
    case 'remove-snapshot-ref':
      return { action, refName: str(json, 'ref-name') };
    case 'set-location':
      return { action, location: str(json, 'location') };
    case 'set-properties': {
      const updates: Record<string, string> = {};
      for (const [k, v] of Object.entries(obj(field(json, 'updates')))) updates[k] = String(v);
      return { action, updates };
    }
    case 'remove-properties':
      return { action, removals: strings(field(json, 'removals')) };
    default:
      throw new InvalidArgumentError(`unknown update action "${action}"`);
  }
}

export function tableRequirementFromJson(json: JsonObject): TableRequirement {
  const type = String(json.type);
  switch (type) {
    case 'assert-create':
      return { type };
    case 'assert-table-uuid':
      return { type, uuid: str(json, 'uuid') };
    case 'assert-ref-snapshot-id': {
      const id = json['snapshot-id'];
      return { type, ref: str(json, 'ref'), snapshotId: id === null || id === undefined ? null : jsonBigInt(id, 'snapshot-id') };
    }
    case 'assert-last-assigned-field-id':
      return { type, lastAssignedFieldId: num(json, 'last-assigned-field-id') };
    case 'assert-current-schema-id':
      return { type, currentSchemaId: num(json, 'current-schema-id') };
    case 'assert-last-assigned-partition-id':
      return { type, lastAssignedPartitionId: num(json, 'last-assigned-partition-id') };
    case 'assert-default-spec-id':
      return { type, defaultSpecId: num(json, 'default-spec-id') };
    case 'assert-default-sort-order-id':
      return { type, defaultSortOrderId: num(json, 'default-sort-order-id') };
    default:
      throw new InvalidArgumentError(`unknown requirement type "${type}"`);
  }
}
