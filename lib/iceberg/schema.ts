import { type IcebergType, type NestedField, type StructType, structFromJson, structToJson } from './types.js';

/** A table schema: a struct with an id and optional identifier fields. */
export interface Schema extends StructType {
  readonly schemaId: number;
  readonly identifierFieldIds: readonly number[];
}

export function schemaFromJson(json: Record<string, unknown>): Schema {
  const struct = structFromJson(json);
  return {
    ...struct,
    schemaId: json['schema-id'] === undefined ? 0 : Number(json['schema-id']),
    identifierFieldIds: Array.isArray(json['identifier-field-ids']) ? json['identifier-field-ids'].map(Number) : [],
  };
}

export function schemaToJson(schema: Schema): Record<string, unknown> {
  return {
    type: 'struct',
    'schema-id': schema.schemaId,
    ...(schema.identifierFieldIds.length > 0 ? { 'identifier-field-ids': [...schema.identifierFieldIds] } : {}),
    fields: structToJson(schema).fields,
  };
}

/** Every field of the schema, nested ones included, by id; `path` is the dotted name. */
export interface IndexedField {
  readonly field: NestedField;
  readonly path: string;
  /** Id of the enclosing field, or undefined at top level. */
  readonly parentId: number | undefined;
}

export function indexById(struct: StructType): Map<number, IndexedField> {
  const out = new Map<number, IndexedField>();
  const visit = (t: IcebergType, prefix: string, parentId: number | undefined): void => {
    if (t.type === 'struct') {
      for (const f of t.fields) {
        const path = prefix ? `${prefix}.${f.name}` : f.name;
        out.set(f.id, { field: f, path, parentId });
        visit(f.type, path, f.id);
      }
    } else if (t.type === 'list') {
      const path = `${prefix}.element`;
      out.set(t.elementId, {
        field: { id: t.elementId, name: 'element', required: t.elementRequired, type: t.element },
        path,
        parentId,
      });
      visit(t.element, path, t.elementId);
    } else if (t.type === 'map') {
      out.set(t.keyId, { field: { id: t.keyId, name: 'key', required: true, type: t.key }, path: `${prefix}.key`, parentId });
      out.set(t.valueId, {
        field: { id: t.valueId, name: 'value', required: t.valueRequired, type: t.value },
        path: `${prefix}.value`,
        parentId,
      });
      visit(t.key, `${prefix}.key`, t.keyId);
      visit(t.value, `${prefix}.value`, t.valueId);
    }
  };
  visit(struct, '', undefined);
  return out;
}

export function findField(struct: StructType, id: number): NestedField | undefined {
  return indexById(struct).get(id)?.field;
}

export function findFieldByName(struct: StructType, dottedName: string): NestedField | undefined {
  for (const { field, path } of indexById(struct).values()) if (path === dottedName) return field;
  return undefined;
}

/** Highest field id used anywhere in the type. */
export function maxFieldId(t: IcebergType): number {
  let max = 0;
  const visit = (x: IcebergType): void => {
    if (x.type === 'struct') for (const f of x.fields) { max = Math.max(max, f.id); visit(f.type); }
    else if (x.type === 'list') { max = Math.max(max, x.elementId); visit(x.element); }
    else if (x.type === 'map') { max = Math.max(max, x.keyId, x.valueId); visit(x.key); visit(x.value); }
  };
  visit(t);
  return max;
}

/** Reserved metadata columns (spec "Reserved Field IDs"). */
export const MetadataColumns = {
  FILE_PATH: 2147483546,
  POS: 2147483545,
  ROW: 2147483544,
  ROW_ID: 2147483540,
  LAST_UPDATED_SEQUENCE_NUMBER: 2147483539,
} as const;
