/**
 * Record batches out of parquet-wasm's memory through the Arrow C data interface
 * (https://arrow.apache.org/docs/format/CDataInterface.html): each buffer is copied once
 * from wasm memory into a JavaScript array, where the Arrow IPC path encodes the batch in
 * wasm, copies the stream out and decodes its messages again for every batch.
 *
 * The caller says which Arrow schema the batch has (the file's, read once per schema); the
 * exported ArrowSchema's format strings are checked against it, and `importBatches` returns
 * undefined for anything this module does not import (the reader then falls back to IPC).
 * Layout of the structs on wasm32 (pointers are 4 bytes, int64 aligned to 8):
 *   ArrowSchema: format 0, name 4, metadata 8, flags 16, n_children 24, children 32, dictionary 36
 *   ArrowArray: length 0, null_count 8, offset 16, n_buffers 24, n_children 32, buffers 40, children 44, dictionary 48
 */
import * as arrow from 'apache-arrow';
import { recordBatch } from './batches.js';
import type { ScratchBuffer } from './scratch-buffer.js';

type AnyData = arrow.Data<arrow.DataType>;

/** A WebAssembly memory: its buffer is replaced whenever the memory grows. */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}

/** The C data interface format string of an Arrow type, or undefined for types not imported here. */
function formatOf(type: arrow.DataType): string | undefined {
  switch (type.typeId) {
    case arrow.Type.Null:
      return 'n';
    case arrow.Type.Bool:
      return 'b';
    case arrow.Type.Int: {
      const t = type as arrow.Int;
      const code = { 8: 'c', 16: 's', 32: 'i', 64: 'l' }[t.bitWidth];
      return code === undefined ? undefined : t.isSigned ? code : code.toUpperCase();
    }
    case arrow.Type.Float:
      return ['e', 'f', 'g'][(type as arrow.Float).precision];
    case arrow.Type.Utf8:
      return 'u';
    case arrow.Type.Binary:
      return 'z';
    case arrow.Type.FixedSizeBinary:
      return `w:${(type as arrow.FixedSizeBinary).byteWidth}`;
    case arrow.Type.Decimal: {
      const t = type as arrow.Decimal;
      return t.bitWidth === 128 ? `d:${t.precision},${t.scale}` : t.bitWidth === 256 ? `d:${t.precision},${t.scale},256` : undefined;
    }
    case arrow.Type.Date:
      return (type as arrow.Date_).unit === arrow.DateUnit.DAY ? 'tdD' : 'tdm';
    case arrow.Type.Time: {
      const t = type as arrow.Time;
      return `tt${'smun'[t.unit]}`;
    }
    case arrow.Type.Timestamp: {
      const t = type as arrow.Timestamp;
      return `ts${'smun'[t.unit]}:${t.timezone ?? ''}`;
    }
    case arrow.Type.List:
      return '+l';
    case arrow.Type.FixedSizeList:
      return `+w:${(type as arrow.FixedSizeList).listSize}`;
    case arrow.Type.Struct:
      return '+s';
    case arrow.Type.Map:
      return '+m';
    default:
      return undefined;
  }
}

/** Bytes per value of a fixed-width type (0: not fixed width). */
function byteWidth(type: arrow.DataType): number {
  switch (type.typeId) {
    case arrow.Type.Int:
      return (type as arrow.Int).bitWidth / 8;
    case arrow.Type.Float:
      return [2, 4, 8][(type as arrow.Float).precision];
    case arrow.Type.Decimal:
      return (type as arrow.Decimal).bitWidth / 8;
    case arrow.Type.Date:
      return (type as arrow.Date_).unit === arrow.DateUnit.DAY ? 4 : 8;
    case arrow.Type.Time:
      return (type as arrow.Time).bitWidth / 8;
    case arrow.Type.Timestamp:
      return 8;
    case arrow.Type.FixedSizeBinary:
      return (type as arrow.FixedSizeBinary).byteWidth;
    default:
      return 0;
  }
}

class WasmView {
  readonly view: DataView;
  readonly bytes: Uint8Array;
  /** Where copies go: one JavaScript buffer per batch (an allocation per buffer made the GC a tenth of the read). */
  private arena = new Uint8Array(0);
  private used = 0;

  constructor(buffer: ArrayBuffer) {
    this.view = new DataView(buffer);
    this.bytes = new Uint8Array(buffer);
  }

  /** Makes room for copies of `bytes` in all, each buffer 8-byte aligned (see `copy`). */
  reserve(bytes: number, scratch?: ScratchBuffer): void {
    // Not zeroed: every byte a copy's view covers is written; only the alignment gaps are not, and no view reads them.
    this.arena = scratch ? scratch.take(bytes) : new Uint8Array(Buffer.allocUnsafeSlow(bytes).buffer, 0, bytes);
    this.used = 0;
  }

  u32(at: number): number {
    return this.view.getUint32(at, true);
  }

  /** An int64 field that fits a double (lengths, counts, offsets). */
  i64(at: number): number {
    return this.view.getUint32(at, true) + this.view.getInt32(at + 4, true) * 4294967296;
  }

  cString(at: number): string {
    let end = at;
    while (this.bytes[end] !== 0) end++;
    return String.fromCharCode(...this.bytes.subarray(at, end));
  }

  /** A copy of `n` bytes at `ptr`, 8-byte aligned (typed views of it need that). */
  copy(ptr: number, n: number): Uint8Array {
    const at = this.used;
    if (at + n > this.arena.length) return this.bytes.slice(ptr, ptr + n);
    this.used = (at + n + 7) & ~7;
    const out = this.arena.subarray(at, at + n);
    out.set(this.bytes.subarray(ptr, ptr + n));
    return out;
  }
}

/** Whether the ArrowSchema at `ptr` describes `type` (children compared in order). */
function sameSchema(m: WasmView, ptr: number, type: arrow.DataType): boolean {
  const format = formatOf(type);
  if (format === undefined || m.cString(m.u32(ptr)) !== format) return false;
  if (m.u32(ptr + 36) !== 0) return false;
  const children = type.children ?? [];
  if (m.i64(ptr + 24) !== children.length) return false;
  const list = m.u32(ptr + 32);
  return children.every((c, i) => sameSchema(m, m.u32(list + 4 * i), c.type));
}

/** One exported array's own buffers as [pointer, bytes] (0 bytes: absent), counted from its start. */
interface Layout {
  readonly length: number;
  readonly nullCount: number;
  readonly offset: number;
  /** offset + length: buffers are copied from the array's start, then the data is sliced to its offset. */
  readonly whole: number;
  readonly validity: readonly [number, number];
  readonly offsets: readonly [number, number];
  readonly values: readonly [number, number];
  readonly children: readonly Layout[];
  /** Bytes the copies of this array and its children take, each aligned. */
  readonly bytes: number;
}

const NONE: readonly [number, number] = [0, 0];

function layoutOf(m: WasmView, ptr: number, type: arrow.DataType): Layout {
  const length = m.i64(ptr);
  const nullCount = m.i64(ptr + 8);
  const offset = m.i64(ptr + 16);
  const nBuffers = m.i64(ptr + 24);
  const buffers = m.u32(ptr + 40);
  const childList = m.u32(ptr + 44);
  const buffer = (i: number): number => (i < nBuffers ? m.u32(buffers + 4 * i) : 0);
  const whole = offset + length;
  const bitmapBytes = (whole + 7) >> 3;
  const children = (type.children ?? []).map((c, i) => layoutOf(m, m.u32(childList + 4 * i), c.type));
  const validityPtr = type.typeId === arrow.Type.Null ? 0 : buffer(0);
  const validity: readonly [number, number] = nullCount !== 0 && validityPtr !== 0 ? [validityPtr, bitmapBytes] : NONE;
  let offsets = NONE;
  let values = NONE;
  switch (type.typeId) {
    case arrow.Type.Null:
    case arrow.Type.FixedSizeList:
    case arrow.Type.Struct:
      break;
    case arrow.Type.Bool:
      values = [buffer(1), bitmapBytes];
      break;
    case arrow.Type.Utf8:
    case arrow.Type.Binary:
      offsets = [buffer(1), 4 * (whole + 1)];
      values = [buffer(2), m.view.getInt32(buffer(1) + 4 * whole, true)];
      break;
    case arrow.Type.List:
    case arrow.Type.Map:
      offsets = [buffer(1), 4 * (whole + 1)];
      break;
    default:
      values = [buffer(1), byteWidth(type) * whole];
  }
  let bytes = aligned(validity[1]) + aligned(offsets[1]) + aligned(values[1]);
  for (const c of children) bytes += c.bytes;
  return { length, nullCount, offset, whole, validity, offsets, values, children, bytes };
}

const aligned = (n: number): number => (n + 7) & ~7;

/** Copies an exported array (laid out in `l`, of `type`) into Arrow JS data. */
function importArray(m: WasmView, l: Layout, type: arrow.DataType): AnyData {
  const { whole } = l;
  const nullBitmap = l.validity[1] > 0 ? m.copy(...l.validity) : undefined;
  const nulls = nullBitmap ? (l.offset === 0 ? l.nullCount : -1) : 0;
  const offsetBytes = l.offsets[1] > 0 ? m.copy(...l.offsets) : undefined;
  const valueOffsets = offsetBytes ? new Int32Array(offsetBytes.buffer, offsetBytes.byteOffset, whole + 1) : undefined;
  const children = l.children.map((c, i) => importArray(m, c, type.children[i].type));
  const props = { type, length: whole, nullCount: nulls, nullBitmap };
  let data: AnyData;
  switch (type.typeId) {
    case arrow.Type.Null:
      data = arrow.makeData({ type: type as arrow.Null, length: whole, nullCount: whole });
      break;
    case arrow.Type.Utf8:
    case arrow.Type.Binary:
      data = arrow.makeData({ ...props, valueOffsets, data: m.copy(...l.values) } as never);
      break;
    case arrow.Type.List:
    case arrow.Type.Map:
      data = arrow.makeData({ ...props, valueOffsets, child: children[0] } as never);
      break;
    case arrow.Type.FixedSizeList:
      data = arrow.makeData({ ...props, child: children[0] } as never);
      break;
    case arrow.Type.Struct:
      // A struct's offset applies to its children: slicing it below slices them.
      data = arrow.makeData({ ...props, children } as never);
      break;
    default:
      data = arrow.makeData({ ...props, data: m.copy(...l.values) } as never);
  }
  return l.offset === 0 ? data : data.slice(l.offset, l.length);
}

/** Whether the exported ArrowSchema at `schemaPtr` is a batch of `schema` whose types are all imported here. */
export function canImport(memory: WasmMemory, schemaPtr: number, schema: arrow.Schema): boolean {
  return sameSchema(new WasmView(memory.buffer), schemaPtr, new arrow.Struct(schema.fields));
}

/**
 * Copies one exported record batch (the ArrowArray at `arrayPtr`, checked with `canImport`)
 * out of wasm memory. The memory's buffer is taken afresh: any wasm call may have grown it.
 * Copied into `scratch` when given: the batch is then valid until its next use.
 */
export function importBatch(memory: WasmMemory, arrayPtr: number, schema: arrow.Schema, scratch?: ScratchBuffer): arrow.RecordBatch {
  const m = new WasmView(memory.buffer);
  const type = new arrow.Struct(schema.fields);
  const layout = layoutOf(m, arrayPtr, type);
  m.reserve(layout.bytes, scratch);
  const data = importArray(m, layout, type) as arrow.Data<arrow.Struct>;
  return recordBatch(schema, data);
}
