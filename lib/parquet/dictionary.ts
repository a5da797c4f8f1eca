/**
 * Whether dictionary encoding pays for a column, decided as parquet-mr decides it after a
 * column's first page (DictionaryValuesWriter.isCompressionSatisfying): keep the dictionary when
 * the indices plus the dictionary come out smaller than the plain values. parquet-rs (inside
 * parquet-wasm) only falls back once a dictionary passes its size limit, so unique ids, times and
 * amounts are dictionary-encoded up to 1 MiB per row group: slower to write and larger after ZSTD.
 * Here the writer asks once per file, from its first rows.
 */
import * as arrow from 'apache-arrow';

/** Rows looked at: about a first page's worth of a typical column. */
export const DICTIONARY_SAMPLE_ROWS = 65_536;

type AnyData = arrow.Data<arrow.DataType>;

// Arrow JS slices `values` and `valueOffsets` to a Data's rows; only the validity bitmap is indexed from `offset`.

function isValid(data: AnyData, i: number): boolean {
  const bitmap = data.nullBitmap;
  if (data.nullCount === 0 || !bitmap || bitmap.length === 0) return true;
  const bit = data.offset + i;
  return (bitmap[bit >> 3] & (1 << (bit & 7))) !== 0;
}

interface Sample {
  values: number;
  raw: number;
  dictionary: number;
  readonly seen: Set<unknown>;
}

/** Adds up to `limit` rows of one column chunk to a sample; false for columns left to the writer's default. */
function addSample(data: AnyData, limit: number, s: Sample): boolean {
  const n = Math.min(data.length, limit);
  const type = data.type;
  if (arrow.DataType.isUtf8(type) || arrow.DataType.isBinary(type)) {
    const offsets = data.valueOffsets as Int32Array;
    const src = data.values as Uint8Array;
    const bytes = Buffer.from(src.buffer, src.byteOffset, src.byteLength);
    for (let i = 0; i < n; i++) {
      if (!isValid(data, i)) continue;
      const start = offsets[i];
      const end = offsets[i + 1];
      const key = bytes.toString('latin1', start, end);
      s.values++;
      s.raw += 4 + end - start;
      if (!s.seen.has(key)) {
        s.seen.add(key);
        s.dictionary += 4 + end - start;
      }
    }
    return true;
  }
  if (arrow.DataType.isBool(type) || type.children?.length || data.values === undefined) return false;
  const v = data.values as ArrayLike<number | bigint> & { BYTES_PER_ELEMENT: number };
  const stride = data.stride;
  const width = stride * v.BYTES_PER_ELEMENT;
  for (let i = 0; i < n; i++) {
    if (!isValid(data, i)) continue;
    const at = i * stride;
    let key: unknown = v[at];
    for (let k = 1; k < stride; k++) key = `${String(key)},${String(v[at + k])}`;
    s.values++;
    s.raw += width;
    if (!s.seen.has(key)) {
      s.seen.add(key);
      s.dictionary += width;
    }
  }
  return true;
}

/**
 * Dictionary on or off for each top-level primitive column (by field name), judged on the first
 * DICTIONARY_SAMPLE_ROWS rows of `batches` (all of one schema); nested and boolean columns are
 * left out (the writer's default applies).
 */
export function dictionaryChoices(batches: readonly arrow.RecordBatch[]): Map<string, boolean> {
  const out = new Map<string, boolean>();
  if (batches.length === 0) return out;
  batches[0].schema.fields.forEach((f, k) => {
    const s: Sample = { values: 0, raw: 0, dictionary: 0, seen: new Set() };
    let left = DICTIONARY_SAMPLE_ROWS;
    for (const b of batches) {
      if (left <= 0) break;
      if (!addSample(b.data.children[k], left, s)) return;
      left -= b.numRows;
    }
    if (s.values === 0) return;
    // RLE/bit-packed indices: bit width of the largest index.
    const bits = Math.max(1, Math.ceil(Math.log2(s.seen.size + 1)));
    const encoded = Math.ceil((s.values * bits) / 8);
    out.set(f.name, encoded + s.dictionary < s.raw);
  });
  return out;
}
