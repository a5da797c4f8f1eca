/**
 * Batches of one schema joined into one, column by column, into fresh buffers. The Parquet writer
 * coalesces the small batches a compaction reads (one per input file) before they cross into
 * wasm: each crossing (Arrow IPC encode, copy into wasm memory, decode, one writer call) has a
 * fixed cost that dominates at a few thousand rows.
 */
import * as arrow from 'apache-arrow';

type AnyData = arrow.Data<arrow.DataType>;

/** Sets `n` bits of `dst` from `to` on from the bits of `src` from `from` on (`dst` starts zeroed). */
export function copyBits(src: Uint8Array, from: number, dst: Uint8Array, to: number, n: number): void {
  if ((from & 7) === 0 && (to & 7) === 0) {
    const whole = n >> 3;
    dst.set(src.subarray(from >> 3, (from >> 3) + whole), to >> 3);
    for (let i = whole << 3; i < n; i++) {
      const s = from + i;
      if ((src[s >> 3] & (1 << (s & 7))) !== 0) dst[(to + i) >> 3] |= 1 << ((to + i) & 7);
    }
    return;
  }
  for (let i = 0; i < n; i++) {
    const s = from + i;
    if ((src[s >> 3] & (1 << (s & 7))) !== 0) {
      const d = to + i;
      dst[d >> 3] |= 1 << (d & 7);
    }
  }
}

/** Sets `n` bits from `to` on (an all-valid stretch). */
export function setBits(dst: Uint8Array, to: number, n: number): void {
  let i = 0;
  for (; i < n && ((to + i) & 7) !== 0; i++) dst[(to + i) >> 3] |= 1 << ((to + i) & 7);
  const whole = (n - i) >> 3;
  if (whole > 0) {
    dst.fill(0xff, (to + i) >> 3, ((to + i) >> 3) + whole);
    i += whole << 3;
  }
  for (; i < n; i++) dst[(to + i) >> 3] |= 1 << ((to + i) & 7);
}

/** The joined validity bitmap, or none when no part holds a null. */
function joinValidity(parts: readonly AnyData[], n: number): { nullCount: number; nullBitmap?: Uint8Array } {
  let nullCount = 0;
  for (const p of parts) nullCount += p.nullCount;
  if (nullCount === 0) return { nullCount: 0 };
  const bitmap = new Uint8Array((n + 7) >> 3);
  let at = 0;
  for (const p of parts) {
    if (p.nullCount > 0 && p.nullBitmap && p.nullBitmap.length > 0) copyBits(p.nullBitmap, p.offset, bitmap, at, p.length);
    else setBits(bitmap, at, p.length);
    at += p.length;
  }
  return { nullCount, nullBitmap: bitmap };
}

/**
 * The rows of every part, in order, as one Data of the first part's type. Arrow JS slices
 * `values` and `valueOffsets` to a Data's rows; only the validity bitmap (and boolean values)
 * are indexed from `offset`.
 */
export function concatData(parts: readonly AnyData[]): AnyData {
  const type = parts[0].type;
  let n = 0;
  for (const p of parts) n += p.length;
  if (type.typeId === arrow.Type.Null) return arrow.makeData({ type: type as arrow.Null, length: n, nullCount: n });
  const valid = joinValidity(parts, n);
  if (arrow.DataType.isBool(type)) {
    const bits = new Uint8Array((n + 7) >> 3);
    let at = 0;
    for (const p of parts) {
      copyBits(p.values as Uint8Array, p.offset, bits, at, p.length);
      at += p.length;
    }
    return arrow.makeData({ type, length: n, ...valid, data: bits });
  }
  if (arrow.DataType.isStruct(type)) {
    const children = type.children.map((_, k) => concatData(parts.map((p) => p.children[k])));
    return arrow.makeData({ type, length: n, ...valid, children });
  }
  if (parts[0].valueOffsets) {
    const out = new Int32Array(n + 1);
    let at = 0;
    let total = 0;
    for (const p of parts) {
      const offsets = p.valueOffsets as Int32Array;
      const first = offsets[0];
      const shift = total - first;
      for (let i = 1; i <= p.length; i++) out[at + i] = offsets[i] + shift;
      at += p.length;
      total += offsets[p.length] - first;
    }
    if (arrow.DataType.isUtf8(type) || arrow.DataType.isBinary(type)) {
      const bytes = new Uint8Array(total);
      let to = 0;
      for (const p of parts) {
        const offsets = p.valueOffsets as Int32Array;
        const len = offsets[p.length] - offsets[0];
        bytes.set((p.values as Uint8Array).subarray(offsets[0], offsets[0] + len), to);
        to += len;
      }
      return arrow.makeData({ type, length: n, ...valid, valueOffsets: out, data: bytes } as never);
    }
    // Lists and maps: each part's child rows in its offsets' range.
    const child = concatData(
      parts.map((p) => {
        const offsets = p.valueOffsets as Int32Array;
        return p.children[0].slice(offsets[0], offsets[p.length] - offsets[0]);
      }),
    );
    return arrow.makeData({ type, length: n, ...valid, valueOffsets: out, child } as never);
  }
  if (arrow.DataType.isFixedSizeList(type)) {
    const size = type.listSize;
    const child = concatData(parts.map((p) => p.children[0].slice(0, p.length * size)));
    return arrow.makeData({ type, length: n, ...valid, child });
  }
  // Fixed width: `stride` elements of the values array per row.
  const first = parts[0].values as Int32Array;
  const stride = parts[0].stride;
  const values = new (first.constructor as Int32ArrayConstructor)(n * stride);
  let at = 0;
  for (const p of parts) {
    values.set((p.values as Int32Array).subarray(0, p.length * stride), at * stride);
    at += p.length;
  }
  return arrow.makeData({ type, length: n, ...valid, data: values } as never);
}

/**
 * Bytes of the rows of `data` in Arrow's layout: values, offsets and validity of its rows only
 * (Data.byteLength counts whole buffers, which slices share).
 */
export function dataBytes(data: AnyData): number {
  const n = data.length;
  let bytes = data.nullCount > 0 ? (n + 7) >> 3 : 0;
  const type = data.type;
  if (type.typeId === arrow.Type.Null) return 0;
  if (arrow.DataType.isBool(type)) return bytes + ((n + 7) >> 3);
  if (arrow.DataType.isStruct(type)) {
    for (const c of data.children) bytes += dataBytes(c);
    return bytes;
  }
  if (data.valueOffsets) {
    const offsets = data.valueOffsets as Int32Array;
    bytes += 4 * (n + 1);
    if (arrow.DataType.isUtf8(type) || arrow.DataType.isBinary(type)) return bytes + offsets[n] - offsets[0];
    return bytes + dataBytes(data.children[0].slice(offsets[0], offsets[n] - offsets[0]));
  }
  if (arrow.DataType.isFixedSizeList(type)) return bytes + dataBytes(data.children[0].slice(0, n * type.listSize));
  const values = data.values as Int32Array | undefined;
  return bytes + (values ? n * data.stride * values.BYTES_PER_ELEMENT : 0);
}

/** The rows of `batches` (one schema, the first's) as one batch; a single batch is returned as it is. */
export function concatBatches(batches: readonly arrow.RecordBatch[]): arrow.RecordBatch {
  if (batches.length === 1) return batches[0];
  const schema = batches[0].schema;
  const children = schema.fields.map((_, k) => concatData(batches.map((b) => b.data.children[k])));
  const length = batches.reduce((n, b) => n + b.numRows, 0);
  return new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(schema.fields), length, nullCount: 0, children }));
}
