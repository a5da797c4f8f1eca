import * as arrow from 'apache-arrow';
import fc from 'fast-check';
import * as pw from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { concatBatches } from '../../lib/parquet/concat.js';
import { IpcStreamEncoder } from '../../lib/parquet/ipc-stream.js';
import { ScratchBuffer } from '../../lib/parquet/scratch-buffer.js';
import { arrowSchema } from '../../lib/parquet/schema.js';
import { conformBatch } from '../../lib/parquet/writer.js';
import { batchFromRows, rowsFromBatch } from '../../lib/parquet/values.js';
import { ALL_TYPES, chunksArbitrary, slicedParts } from './helpers.js';

const target = arrowSchema(ALL_TYPES);

describe('IpcStreamEncoder', () => {
  it('writes the stream arrow writes of the joined parts, byte for byte, for every type (property)', () => {
    const encoder = new IpcStreamEncoder(target);
    expect(encoder.supported).toBe(true);
    const scratch = new ScratchBuffer(1 << 20);
    fc.assert(
      fc.property(chunksArbitrary(ALL_TYPES), ([chunks, cut]) => {
        const parts = slicedParts(chunks.map((rows) => conformBatch(batchFromRows(ALL_TYPES, rows), target, 'x')), cut);
        const ours = encoder.encode(parts)!;
        // In a reused buffer holding other bytes: the same stream (padding and bitmaps zeroed).
        scratch.take(1 << 20).fill(0xa5);
        expect(encoder.encode(parts, scratch)).toEqual(ours);
        if (parts.length > 1) {
          expect(ours).toEqual(arrow.tableToIPC(new arrow.Table([concatBatches(parts)]), 'stream'));
        }
        const back = arrow.tableFromIPC(ours);
        expect(back.batches).toHaveLength(1);
        expect(rowsFromBatch(back.batches[0], ALL_TYPES)).toEqual(chunks.flat());
        // parquet-wasm (arrow-rs) reads it as the same rows.
        const t = pw.Table.fromIPCStream(ours);
        const again = arrow.tableFromIPC(t.intoIPCStream());
        expect(rowsFromBatch(again.batches[0], ALL_TYPES)).toEqual(chunks.flat());
      }),
      { numRuns: 40 },
    );
  });

  it('leaves types it does not lay out to the caller', () => {
    const schema = new arrow.Schema([new arrow.Field('v', new arrow.LargeUtf8(), true)]);
    const encoder = new IpcStreamEncoder(schema);
    expect(encoder.supported).toBe(false);
    const data = arrow.vectorFromArray(['a', null], new arrow.LargeUtf8()).data[0];
    const batch = new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(schema.fields), length: 2, nullCount: 0, children: [data] }));
    expect(encoder.encode([batch])).toBeUndefined();
  });
});
