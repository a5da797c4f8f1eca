/**
 * Arrow record batches across a worker thread boundary. Structured clone keeps neither Arrow's
 * classes nor shared buffers, so a batch travels as three parts: its schema as an Arrow IPC
 * schema message (types rebuilt on the other side), the shape of its Data tree (offsets,
 * lengths, null counts) as plain numbers, and every buffer packed into one ArrayBuffer that the
 * message transfers (detached here, no copy on the receiving thread). Packing copies each buffer
 * once on the sending side: a batch's buffers may be views of memory it does not own (a slice of
 * a larger batch, Node's Buffer pool), which must not be detached.
 */
import * as arrow from 'apache-arrow';
import { IllegalStateError } from '../errors.js';
import { schemaByBytes } from './schema.js';

type AnyData = arrow.Data<arrow.DataType>;

const TYPED = {
  Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array,
} as const;
type TypedName = keyof typeof TYPED;
/** Any of TYPED's arrays, over any buffer. */
type Typed =
  | Int8Array<ArrayBufferLike> | Uint8Array<ArrayBufferLike> | Int16Array<ArrayBufferLike> | Uint16Array<ArrayBufferLike>
  | Int32Array<ArrayBufferLike> | Uint32Array<ArrayBufferLike> | Float32Array<ArrayBufferLike> | Float64Array<ArrayBufferLike>
  | BigInt64Array<ArrayBufferLike> | BigUint64Array<ArrayBufferLike>;

/** A buffer inside the packed ArrayBuffer: its typed array's kind, byte offset and element count. */
interface BufferRef {
  readonly kind: TypedName;
  readonly at: number;
  readonly length: number;
}

/** The shape of one Data node; buffers by Arrow's BufferType (offsets, values, validity, type ids). */
interface DataShape {
  readonly offset: number;
  readonly length: number;
  readonly nullCount: number;
  readonly buffers: readonly (BufferRef | null)[];
  readonly children: readonly DataShape[];
  readonly dictionary?: readonly DataShape[];
  readonly variadic?: readonly BufferRef[];
}

/** A batch as it crosses: post it with `[message.buffer]` as the transfer list. */
export interface TransferredBatch {
  readonly schema: Uint8Array;
  readonly data: DataShape;
  /** Every buffer of the batch, and any extra arrays packed beside them (`extras`). */
  readonly buffer: ArrayBuffer;
  readonly extras: readonly BufferRef[];
}

/** Packs `batch` (and `extras`, arrays that travel with it) for postMessage. */
export function packBatch(batch: arrow.RecordBatch, extras: readonly Typed[] = []): TransferredBatch {
  const arrays: Typed[] = [];
  let size = 0;
  const ref = (a: Typed | undefined): BufferRef | null => {
    if (a === undefined || a === null) return null;
    const name = a.constructor.name as TypedName;
    if (!(name in TYPED)) throw new IllegalStateError(`cannot transfer an Arrow buffer of ${a.constructor.name}`);
    size = align8(size);
    const r = { kind: name, at: size, length: a.length };
    size += a.byteLength;
    arrays.push(a);
    return r;
  };
  const shape = (d: AnyData): DataShape => {
    const [offsets, values, validity, typeIds] = d.buffers as unknown as (Typed | undefined)[];
    const dictionary = d.dictionary?.data.map(shape);
    const variadic = d.variadicBuffers.length > 0 ? d.variadicBuffers.map((b) => ref(b)!) : undefined;
    return {
      offset: d.offset,
      length: d.length,
      nullCount: d.nullCount,
      buffers: [ref(offsets), ref(values), ref(validity), ref(typeIds)],
      children: d.children.map(shape),
      ...(dictionary ? { dictionary } : {}),
      ...(variadic ? { variadic } : {}),
    };
  };
  const data = shape(batch.data);
  const extraRefs = extras.map((a) => ref(a)!);
  const buffer = new ArrayBuffer(size);
  const bytes = new Uint8Array(buffer);
  let k = 0;
  const place = (r: BufferRef | null): void => {
    if (r === null) return;
    const a = arrays[k++];
    bytes.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), r.at);
  };
  // The same walk, in the same order, places each array where `ref` put it.
  const walk = (s: DataShape): void => {
    s.buffers.forEach(place);
    s.children.forEach(walk);
    s.dictionary?.forEach(walk);
    s.variadic?.forEach(place);
  };
  walk(data);
  extraRefs.forEach(place);
  // The batch's schema with each column's type as its data has it (they normally agree).
  const fields = batch.schema.fields.map((f, i) => {
    const type = batch.data.children[i]?.type ?? f.type;
    return type === f.type ? f : new arrow.Field(f.name, type, f.nullable, f.metadata);
  });
  const schema = arrow.tableToIPC(new arrow.Table(new arrow.Schema(fields, batch.schema.metadata)), 'stream');
  return { schema, data, buffer, extras: extraRefs };
}

/** Schemas of transferred batches, remembered by their IPC bytes. */
const schemaOf = schemaByBytes((bytes) => arrow.tableFromIPC(bytes).schema);

/** The batch `packBatch` sent, over the transferred buffer (its arrays are views of it), and the extras. */
export function unpackBatch(message: TransferredBatch): { batch: arrow.RecordBatch; extras: Typed[] } {
  const schema = schemaOf(message.schema);
  const view = (r: BufferRef | null): Typed | undefined => (r === null ? undefined : new TYPED[r.kind](message.buffer, r.at, r.length));
  const build = (type: arrow.DataType, s: DataShape): AnyData => {
    const children = s.children.map((c, i) => build(type.children[i].type as arrow.DataType, c));
    const dictionary = s.dictionary && arrow.DataType.isDictionary(type) ? new arrow.Vector(s.dictionary.map((d) => build(type.dictionary, d))) : undefined;
    const buffers = s.buffers.map(view) as unknown as arrow.Data['buffers'];
    const variadic = s.variadic?.map((r) => view(r) as Uint8Array);
    return new arrow.Data(type, s.offset, s.length, s.nullCount, buffers, children, dictionary, variadic);
  };
  const data = build(new arrow.Struct(schema.fields), message.data) as arrow.Data<arrow.Struct>;
  return { batch: new arrow.RecordBatch(schema, data), extras: message.extras.map((r) => view(r)!) };
}

function align8(n: number): number {
  return (n + 7) & ~7;
}
