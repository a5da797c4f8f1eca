import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import type { StructType } from '../../lib/iceberg/types.js';
import { recordBatch } from '../../lib/parquet/batches.js';
import { arrowSchema } from '../../lib/parquet/schema.js';
import { batchFromRows } from '../../lib/parquet/values.js';

const SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 's', required: false, type: { type: 'string' } },
    { id: 3, name: 'st', required: false, type: { type: 'struct', fields: [{ id: 4, name: 'd', required: false, type: { type: 'double' } }] } },
  ],
};

describe('recordBatch', () => {
  it('makes the batch apache-arrow’s constructor makes, without its schema copy', () => {
    const rows = [
      { id: 1n, s: 'a', st: { d: 1.5 } },
      { id: 2n, s: null, st: null },
      { id: 3n, s: 'c', st: { d: null } },
    ];
    const data = batchFromRows(SCHEMA, rows).data;
    const schema = arrowSchema(SCHEMA);
    const ours = recordBatch(schema, data);
    const theirs = new arrow.RecordBatch(schema, data);
    expect(ours).toBeInstanceOf(arrow.RecordBatch);
    expect(arrow.RecordBatch.isRecordBatch(ours)).toBe(true);
    expect(ours.schema).toBe(schema);
    expect(ours.numRows).toBe(3);
    expect(ours.metadata).toEqual(theirs.metadata);
    expect(ours.schema.fields.map((f) => [f.name, String(f.type), f.nullable, [...f.metadata]])).toEqual(
      theirs.schema.fields.map((f) => [f.name, String(f.type), f.nullable, [...f.metadata]]),
    );
    expect(ours.toArray().map((r) => r.toJSON())).toEqual(theirs.toArray().map((r) => r.toJSON()));
    expect(ours.slice(1, 3).toArray().map((r) => r.toJSON())).toEqual(theirs.slice(1, 3).toArray().map((r) => r.toJSON()));
    expect(arrow.tableToIPC(new arrow.Table([ours]))).toEqual(arrow.tableToIPC(new arrow.Table([theirs])));
  });

  it('leaves a struct whose columns are shorter than it to the constructor, which makes them nullable', () => {
    const schema = new arrow.Schema([new arrow.Field('x', new arrow.Int32(), false)]);
    const child = arrow.makeData({ type: new arrow.Int32(), length: 1, nullCount: 0, data: Int32Array.of(7) });
    const data = arrow.makeData({ type: new arrow.Struct(schema.fields), length: 2, nullCount: 0, children: [child] });
    const batch = recordBatch(schema, data);
    expect(batch.schema.fields[0].nullable).toBe(true);
    expect([batch.getChild('x')?.get(0), batch.getChild('x')?.get(1)]).toEqual([7, null]);
  });
});
