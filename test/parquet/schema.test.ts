import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import type { StructType } from '../../lib/iceberg/types.js';
import { footerFromBytes, PhysicalType, schemaTree, type SchemaElement, type SchemaNode } from '../../lib/parquet/footer.js';
import { arrowSchema, FIELD_ID_KEY, fieldIdsOf, sameArrowType } from '../../lib/parquet/schema.js';
import { ParquetWriter } from '../../lib/parquet/writer.js';
import { ALL_TYPES, io, tempPath } from './helpers.js';

async function writtenSchema(schema: StructType): Promise<SchemaNode> {
  const path = tempPath('schema.parquet');
  await ParquetWriter.open(io, path, schema).close();
  return schemaTree(footerFromBytes(path, await io.read(path)));
}

/** name → element, for the children of a node. */
const kids = (n: SchemaNode): Record<string, SchemaElement> => Object.fromEntries(n.children.map((c) => [c.element.name, c.element]));
const child = (n: SchemaNode, name: string): SchemaNode => n.children.find((c) => c.element.name === name) as SchemaNode;

describe('Iceberg → Parquet types (spec Appendix A) as parquet-wasm writes them', () => {
  it('primitives: physical type, logical type, repetition and field id', async () => {
    const root = await writtenSchema(ALL_TYPES);
    const e = kids(root);
    const { INT32, INT64, BOOLEAN, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY } = PhysicalType;
    expect(e.id).toMatchObject({ type: INT64, repetition: 'required', fieldId: 1 });
    expect(e.b).toMatchObject({ type: BOOLEAN, repetition: 'optional', fieldId: 2 });
    expect(e.i).toMatchObject({ type: INT32, fieldId: 3 });
    expect(e.f).toMatchObject({ type: FLOAT, fieldId: 4 });
    expect(e.d).toMatchObject({ type: DOUBLE, fieldId: 5 });
    // Decimals: INT32 for P <= 9, INT64 for P <= 18, else the minimal fixed length (as Java writes).
    expect(e.dec9).toMatchObject({ type: INT32, logicalType: { type: 'decimal', precision: 9, scale: 2 }, fieldId: 6 });
    expect(e.dec18).toMatchObject({ type: INT64, logicalType: { type: 'decimal', precision: 18, scale: 6 }, fieldId: 7 });
    expect(e.dec38).toMatchObject({ type: FIXED_LEN_BYTE_ARRAY, typeLength: 16, logicalType: { type: 'decimal', precision: 38, scale: 10 } });
    expect(e.date).toMatchObject({ type: INT32, logicalType: { type: 'date' } });
    expect(e.time).toMatchObject({ type: INT64, logicalType: { type: 'time', unit: 'micros', isAdjustedToUTC: false } });
    expect(e.ts).toMatchObject({ type: INT64, logicalType: { type: 'timestamp', unit: 'micros', isAdjustedToUTC: false } });
    expect(e.tstz).toMatchObject({ type: INT64, logicalType: { type: 'timestamp', unit: 'micros', isAdjustedToUTC: true } });
    expect(e.ts_ns).toMatchObject({ type: INT64, logicalType: { type: 'timestamp', unit: 'nanos', isAdjustedToUTC: false } });
    expect(e.tstz_ns).toMatchObject({ type: INT64, logicalType: { type: 'timestamp', unit: 'nanos', isAdjustedToUTC: true } });
    expect(e.s).toMatchObject({ type: BYTE_ARRAY, logicalType: { type: 'string' } });
    // parquet-wasm writes a bare FIXED_LEN_BYTE_ARRAY(16); the writer adds the UUID annotation to the footer.
    expect(e.u).toMatchObject({ type: FIXED_LEN_BYTE_ARRAY, typeLength: 16, logicalType: { type: 'uuid' }, fieldId: 16 });
    expect(e.fx).toMatchObject({ type: FIXED_LEN_BYTE_ARRAY, typeLength: 3, fieldId: 17 });
    expect(e.fx.logicalType).toBeUndefined();
    expect(e.bin).toMatchObject({ type: BYTE_ARRAY, fieldId: 18 });
    expect(e.bin.logicalType).toBeUndefined();
  });

  it('decimal storage widths at the boundaries', async () => {
    const dec = (id: number, precision: number): StructType['fields'][number] => ({
      id, name: `p${precision}`, required: false, type: { type: 'decimal', precision, scale: 0 },
    });
    const e = kids(await writtenSchema({ type: 'struct', fields: [dec(1, 1), dec(2, 2), dec(6, 9), dec(7, 10), dec(8, 18), dec(3, 19), dec(4, 20), dec(5, 28)] }));
    expect([e.p2.type, e.p9.type, e.p10.type, e.p18.type]).toEqual([PhysicalType.INT32, PhysicalType.INT32, PhysicalType.INT64, PhysicalType.INT64]);
    // arrow-rs quirk: precision 1 goes to INT64, not INT32 (valid Parquet; Java writes INT32).
    expect(e.p1.type).toBe(PhysicalType.INT64);
    expect([e.p19.typeLength, e.p20.typeLength, e.p28.typeLength]).toEqual([9, 9, 12]);
  });

  it('structs, 3-level lists (list/element) and maps (key_value/key/value), ids on every Iceberg field', async () => {
    const root = await writtenSchema(ALL_TYPES);
    const st = child(root, 'st');
    expect(st.element).toMatchObject({ repetition: 'optional', fieldId: 19 });
    expect(kids(st).a).toMatchObject({ repetition: 'required', fieldId: 20 });
    expect(kids(child(st, 'inner')).z).toMatchObject({ fieldId: 22 });

    const l = child(root, 'l');
    expect(l.element).toMatchObject({ fieldId: 23, logicalType: { type: 'list' } });
    expect(l.children.map((c) => c.element)).toEqual([expect.objectContaining({ name: 'list', repetition: 'repeated' })]);
    expect(l.children[0].element.fieldId).toBeUndefined();
    expect(l.children[0].children[0].element).toMatchObject({ name: 'element', repetition: 'optional', fieldId: 24, type: PhysicalType.INT64 });

    const m = child(root, 'm');
    expect(m.element).toMatchObject({ fieldId: 25, logicalType: { type: 'map' } });
    const kv = m.children[0];
    expect(kv.element).toMatchObject({ name: 'key_value', repetition: 'repeated' });
    expect(kv.element.fieldId).toBeUndefined();
    expect(kv.children.map((c) => [c.element.name, c.element.repetition, c.element.fieldId])).toEqual([
      ['key', 'required', 26],
      ['value', 'optional', 27],
    ]);

    const ll = child(root, 'll');
    const inner = ll.children[0].children[0];
    expect(inner.element).toMatchObject({ name: 'element', repetition: 'required', fieldId: 30 });
    expect(inner.children[0].children[0].element).toMatchObject({ name: 'element', repetition: 'required', fieldId: 31 });
  });

  it('omits unknown columns', async () => {
    const root = await writtenSchema({
      type: 'struct',
      fields: [
        { id: 1, name: 'a', required: false, type: { type: 'unknown' } },
        { id: 2, name: 'b', required: false, type: { type: 'int' } },
      ],
    });
    expect(root.children.map((c) => c.element.name)).toEqual(['b']);
  });
});

describe('Arrow schema ↔ field ids', () => {
  it('puts PARQUET:field_id on every field, nested ones included', () => {
    const s = arrowSchema(ALL_TYPES);
    const m = s.fields.find((f) => f.name === 'm') as arrow.Field;
    const entries = (m.type as arrow.Map_).children[0];
    expect(entries.name).toBe('key_value');
    expect(entries.type.children.map((c: arrow.Field) => [c.name, c.metadata.get(FIELD_ID_KEY), c.nullable])).toEqual([
      ['key', '26', false],
      ['value', '27', true],
    ]);
    expect(s.fields.find((f) => f.name === 'id')?.nullable).toBe(false);
  });

  it('reports fields without ids by path', () => {
    const md = (id: number): Map<string, string> => new Map([[FIELD_ID_KEY, String(id)]]);
    const s = new arrow.Schema([
      new arrow.Field('a', new arrow.Int32(), true, md(1)),
      new arrow.Field('b', new arrow.Struct([new arrow.Field('c', new arrow.Utf8(), true), new arrow.Field('d', new arrow.Utf8(), true, md(4))]), true),
      new arrow.Field('l', new arrow.List(new arrow.Field('item', new arrow.Int64(), true)), true, md(5)),
    ]);
    const ids = fieldIdsOf(s);
    expect(Object.fromEntries(ids.byPath)).toEqual({ a: 1, 'b.d': 4, l: 5 });
    expect(ids.missing).toEqual(['b', 'b.c', 'l.element']);
  });

  it('compares Arrow types by storage, ignoring child names', () => {
    const listA = new arrow.List(new arrow.Field('element', new arrow.Int32(), true));
    const listB = new arrow.List(new arrow.Field('item', new arrow.Int32(), true));
    expect(sameArrowType(listA, listB)).toBe(true);
    expect(sameArrowType(new arrow.TimestampMicrosecond('UTC'), new arrow.TimestampMicrosecond('+00:00'))).toBe(true);
    expect(sameArrowType(new arrow.TimestampMicrosecond('UTC'), new arrow.TimestampMicrosecond())).toBe(false);
    expect(sameArrowType(new arrow.TimestampMicrosecond(), new arrow.TimestampMillisecond())).toBe(false);
    expect(sameArrowType(new arrow.Decimal(2, 9, 128), new arrow.Decimal(2, 10, 128))).toBe(false);
    expect(sameArrowType(new arrow.Int32(), new arrow.Int64())).toBe(false);
  });
});
