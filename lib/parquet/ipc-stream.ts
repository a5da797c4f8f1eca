/**
 * The Arrow IPC streaming format (schema message, one record batch message, end-of-stream
 * marker) of the rows of several batches, written straight from their buffers.
 *
 * The Parquet writer hands wasm the rows of many small batches at a time. Joining them first
 * (concat.ts) and then encoding the joined batch (`arrow.tableToIPC`) copies every byte twice
 * and allocates twice the rows' size; here each part's buffers are copied once, into their
 * place in the one stream buffer, as concat.ts would have joined them (the same bytes reach
 * wasm). The schema message is encoded once per writer.
 */
import * as arrow from 'apache-arrow';
import { BufferRegion, FieldNode, Message, RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import { copyBits, setBits } from './concat.js';
import type { ScratchBuffer } from './scratch-buffer.js';

type AnyData = arrow.Data<arrow.DataType>;

/** Copies one buffer's bytes into the stream at `at`. */
type Fill = (dst: Uint8Array, at: number) => void;

/** The body of the record batch being laid out: field nodes, buffer regions, and how to fill each. */
class Body {
  readonly nodes: FieldNode[] = [];
  readonly regions: BufferRegion[] = [];
  readonly fills: Array<Fill | undefined> = [];
  /** Where, in each region, the bytes `fill` leaves for zeros start. */
  readonly zeroFrom: number[] = [];
  length = 0;

  /** A buffer of `bytes` (padded to 8): `fill` writes them, into zeroed bytes when `zeroed` (bitmaps set bit by bit). */
  buffer(bytes: number, fill?: Fill, zeroed = false): void {
    // Regions span the padding too, as Arrow JS writes them.
    const padded = (bytes + 7) & ~7;
    this.regions.push(new BufferRegion(this.length, padded));
    this.fills.push(fill);
    this.zeroFrom.push(zeroed ? 0 : bytes);
    this.length += padded;
  }
}

/** Whether the stream can be written here for `type` (the types schema.ts maps Iceberg to). */
function supported(type: arrow.DataType): boolean {
  switch (type.typeId) {
    case arrow.Type.Null:
    case arrow.Type.Bool:
    case arrow.Type.Int:
    case arrow.Type.Float:
    case arrow.Type.Decimal:
    case arrow.Type.Date:
    case arrow.Type.Time:
    case arrow.Type.Timestamp:
    case arrow.Type.FixedSizeBinary:
    case arrow.Type.Utf8:
    case arrow.Type.Binary:
      return true;
    case arrow.Type.Struct:
    case arrow.Type.List:
    case arrow.Type.Map:
    case arrow.Type.FixedSizeList:
      return type.children.every((c) => supported(c.type));
    default:
      return false;
  }
}

/** A bitmap of `n` bits from each part's bits (from its offset on). */
function bits(parts: readonly AnyData[], n: number, of: (p: AnyData) => Uint8Array | undefined): [number, Fill, boolean] {
  return [
    (n + 7) >> 3,
    (dst, at) => {
      const out = dst.subarray(at, at + ((n + 7) >> 3));
      let row = 0;
      for (const p of parts) {
        const src = of(p);
        if (src) copyBits(src, p.offset, out, row, p.length);
        else setBits(out, row, p.length);
        row += p.length;
      }
    },
    true,
  ];
}

/** Lays out the column made of the rows of `parts` (one type): its field nodes and buffers, in IPC order. */
function layout(body: Body, parts: readonly AnyData[]): void {
  const type = parts[0].type;
  let n = 0;
  let nullCount = 0;
  for (const p of parts) {
    n += p.length;
    nullCount += p.nullCount;
  }
  if (type.typeId === arrow.Type.Null) {
    body.nodes.push(new FieldNode(n, n));
    return;
  }
  body.nodes.push(new FieldNode(n, nullCount));
  if (nullCount === 0) body.buffer(0);
  else body.buffer(...bits(parts, n, (p) => (p.nullCount > 0 && p.nullBitmap && p.nullBitmap.length > 0 ? p.nullBitmap : undefined)));
  if (arrow.DataType.isBool(type)) {
    body.buffer(...bits(parts, n, (p) => p.values as Uint8Array));
    return;
  }
  if (arrow.DataType.isStruct(type)) {
    type.children.forEach((_, k) => layout(body, parts.map((p) => p.children[k])));
    return;
  }
  if (parts[0].valueOffsets) {
    // Offsets rebased to run on from part to part.
    let total = 0;
    for (const p of parts) {
      const offsets = p.valueOffsets as Int32Array;
      total += offsets[p.length] - offsets[0];
    }
    body.buffer(4 * (n + 1), (dst, at) => {
      const out = new Int32Array(dst.buffer, dst.byteOffset + at, n + 1);
      out[0] = 0;
      let row = 0;
      let end = 0;
      for (const p of parts) {
        const offsets = p.valueOffsets as Int32Array;
        const shift = end - offsets[0];
        for (let i = 1; i <= p.length; i++) out[row + i] = offsets[i] + shift;
        row += p.length;
        end += offsets[p.length] - offsets[0];
      }
    });
    if (arrow.DataType.isUtf8(type) || arrow.DataType.isBinary(type)) {
      body.buffer(total, (dst, at) => {
        for (const p of parts) {
          const offsets = p.valueOffsets as Int32Array;
          const len = offsets[p.length] - offsets[0];
          dst.set((p.values as Uint8Array).subarray(offsets[0], offsets[0] + len), at);
          at += len;
        }
      });
      return;
    }
    // Lists and maps: each part's child rows in its offsets' range.
    layout(
      body,
      parts.map((p) => {
        const offsets = p.valueOffsets as Int32Array;
        return p.children[0].slice(offsets[0], offsets[p.length] - offsets[0]);
      }),
    );
    return;
  }
  if (arrow.DataType.isFixedSizeList(type)) {
    const size = type.listSize;
    layout(body, parts.map((p) => p.children[0].slice(0, p.length * size)));
    return;
  }
  // Fixed width: `stride` elements of the values array per row (Arrow JS slices `values` to the rows).
  const first = parts[0].values as Int32Array;
  const rowBytes = parts[0].stride * first.BYTES_PER_ELEMENT;
  body.buffer(n * rowBytes, (dst, at) => {
    for (const p of parts) {
      const v = p.values as Int32Array;
      const len = p.length * rowBytes;
      dst.set(new Uint8Array(v.buffer, v.byteOffset, len), at);
      at += len;
    }
  });
}

/** An encapsulated message (continuation marker, padded metadata length, metadata, zero padding), at `at` of `dst`. */
function writeMessage(dst: Uint8Array, at: number, metadata: Uint8Array): void {
  const view = new DataView(dst.buffer, dst.byteOffset, dst.byteLength);
  const padded = messageLength(metadata) - 8;
  view.setInt32(at, -1, true);
  view.setInt32(at + 4, padded, true);
  dst.set(metadata, at + 8);
  dst.fill(0, at + 8 + metadata.length, at + 8 + padded);
}

function messageLength(metadata: Uint8Array): number {
  return (metadata.length + 8 + 7) & ~7;
}

/** Writes IPC streams of one schema. */
export class IpcStreamEncoder {
  private readonly schemaMetadata: Uint8Array;
  /** Whether every column's type is laid out here (else `encode` gives undefined). */
  readonly supported: boolean;

  constructor(readonly schema: arrow.Schema) {
    this.schemaMetadata = Message.encode(Message.from(schema));
    this.supported = schema.fields.every((f) => supported(f.type));
  }

  /**
   * The stream of the rows of `parts` (batches of this schema, in order) as one record batch;
   * undefined when a column's type is not laid out here.
   */
  encode(parts: readonly arrow.RecordBatch[], scratch?: ScratchBuffer): Uint8Array | undefined {
    if (!this.supported || parts.length === 0) return undefined;
    const body = new Body();
    for (let k = 0; k < this.schema.fields.length; k++) layout(body, parts.map((p) => p.data.children[k]));
    let rows = 0;
    for (const p of parts) rows += p.numRows;
    const header = Message.encode(Message.from(new RecordBatchHeader(rows, body.nodes, body.regions, null), body.length));
    const schemaEnd = messageLength(this.schemaMetadata);
    const bodyStart = schemaEnd + messageLength(header);
    const size = bodyStart + body.length + 8;
    // Every byte is written: the buffers, their padding and the bitmaps' zeros, the messages.
    const out = scratch ? scratch.take(size) : new Uint8Array(size);
    writeMessage(out, 0, this.schemaMetadata);
    writeMessage(out, schemaEnd, header);
    for (let i = 0; i < body.regions.length; i++) {
      const { offset, length } = body.regions[i];
      const at = bodyStart + offset;
      out.fill(0, at + body.zeroFrom[i], at + length);
      body.fills[i]?.(out, at);
    }
    // End of stream: continuation marker and a zero length.
    const view = new DataView(out.buffer, out.byteOffset, size);
    view.setInt32(bodyStart + body.length, -1, true);
    view.setInt32(bodyStart + body.length + 4, 0, true);
    return out;
  }
}
