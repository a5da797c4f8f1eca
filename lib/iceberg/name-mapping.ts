import { InvalidArgumentError, InvalidFileError } from '../errors.js';
import { parseJson, toPlain } from './json.js';
import type { IcebergType, StructType } from './types.js';

/**
 * Name mapping (spec "Column Projection"): how files written without field ids
 * resolve their columns. Names are matched literally (dots are not separators);
 * nested names are element/key/value.
 */
export interface MappedField {
  readonly fieldId?: number;
  readonly names: readonly string[];
  readonly fields?: readonly MappedField[];
}

export type NameMapping = readonly MappedField[];

export const NAME_MAPPING_PROPERTY = 'schema.name-mapping.default';

export function parseNameMapping(text: string, where: string): NameMapping {
  try {
    const json = toPlain(parseJson(text));
    if (!Array.isArray(json)) throw new InvalidArgumentError('a name mapping is a JSON array');
    return json.map(mappedFieldFromJson);
  } catch (e) {
    throw new InvalidFileError(`invalid ${NAME_MAPPING_PROPERTY}: ${(e as Error).message}`, { path: where, cause: e });
  }
}

function mappedFieldFromJson(j: unknown): MappedField {
  const o = j as Record<string, unknown>;
  return {
    ...(o['field-id'] !== undefined && o['field-id'] !== null ? { fieldId: Number(o['field-id']) } : {}),
    names: Array.isArray(o.names) ? o.names.map(String) : [],
    ...(Array.isArray(o.fields) ? { fields: o.fields.map(mappedFieldFromJson) } : {}),
  };
}

/** A mapping that names every field of a schema by its current name, as Java's MappingUtil.create does. */
export function nameMappingFromSchema(struct: StructType): NameMapping {
  const nested = (t: IcebergType): MappedField[] | undefined => {
    if (t.type === 'struct') return t.fields.map((f) => withFields({ fieldId: f.id, names: [f.name] }, nested(f.type)));
    if (t.type === 'list') return [withFields({ fieldId: t.elementId, names: ['element'] }, nested(t.element))];
    if (t.type === 'map') {
      return [
        withFields({ fieldId: t.keyId, names: ['key'] }, nested(t.key)),
        withFields({ fieldId: t.valueId, names: ['value'] }, nested(t.value)),
      ];
    }
    return undefined;
  };
  return nested(struct) ?? [];
}

function withFields(f: MappedField, fields: MappedField[] | undefined): MappedField {
  return fields ? { ...f, fields } : f;
}

export function nameMappingToJson(mapping: NameMapping): unknown {
  const conv = (f: MappedField): unknown => ({
    ...(f.fieldId !== undefined ? { 'field-id': f.fieldId } : {}),
    names: f.names,
    ...(f.fields ? { fields: f.fields.map(conv) } : {}),
  });
  return mapping.map(conv);
}

/**
 * The mapping of field `id`'s children (a struct's fields, a list's element, a map's key and value)
 * among `fields`; undefined when the mapping does not describe them.
 */
export function mappedChildren(fields: readonly MappedField[] | undefined, id: number): readonly MappedField[] | undefined {
  return fields?.find((f) => f.fieldId === id)?.fields;
}

/** Finds the mapped field for a column name among siblings. */
export function findMapped(fields: readonly MappedField[] | undefined, name: string): MappedField | undefined {
  return fields?.find((f) => f.names.includes(name));
}
