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

/** The validity test of a column chunk, or undefined when it holds no null. */
function validity(data: AnyData): ((i: number) => boolean) | undefined {
  const bitmap = data.nullBitmap;
  if (data.nullCount === 0 || !bitmap || bitmap.length === 0) return undefined;
  const offset = data.offset;
  return (i) => (bitmap[(offset + i) >> 3] & (1 << ((offset + i) & 7))) !== 0;
}

/** MurmurHash3's finalizer: every input bit reaches the low bits the table indexes by. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * Distinct keys, each `words` 32-bit words (fixed-width values) or a byte string, in an
 * open-addressing table: no string or BigInt made per value.
 */
class KeySet {
  size = 0;
  private slots: Int32Array;
  private mask: number;
  /** Fixed width: the keys' words, `words` per key. */
  private keyWords: Int32Array;
  /** Byte strings: where each key lies. */
  private readonly keyBytes: Uint8Array[] = [];
  private readonly keyStarts: number[] = [];
  private readonly keyEnds: number[] = [];
  private hashes: Int32Array;

  constructor(
    private readonly words: number,
    capacity: number,
  ) {
    let slots = 16;
    while (slots < capacity * 2) slots *= 2;
    this.slots = new Int32Array(slots);
    this.mask = slots - 1;
    this.keyWords = new Int32Array(words > 0 ? capacity * words : 0);
    this.hashes = new Int32Array(capacity);
  }

  /** Adds the key at word `at` of `v`; true when it is new. */
  addWords(v: Int32Array, at: number): boolean {
    const w = this.words;
    let h = 0x811c9dc5;
    for (let k = 0; k < w; k++) h = Math.imul(h ^ v[at + k], 0x01000193);
    h = mix(h);
    for (let i = h & this.mask; ; i = (i + 1) & this.mask) {
      const e = this.slots[i];
      if (e === 0) {
        this.insert(i, h);
        const base = (this.size - 1) * w;
        for (let k = 0; k < w; k++) this.keyWords[base + k] = v[at + k];
        return true;
      }
      if (this.hashes[e - 1] !== h) continue;
      const base = (e - 1) * w;
      let same = true;
      for (let k = 0; k < w && same; k++) same = this.keyWords[base + k] === v[at + k];
      if (same) return false;
    }
  }

  /** Adds the bytes [start, end) of `bytes`; true when they are new. */
  addBytes(bytes: Uint8Array, start: number, end: number): boolean {
    let h = 0x811c9dc5 ^ (end - start);
    for (let k = start; k < end; k++) h = Math.imul(h ^ bytes[k], 0x01000193);
    h = mix(h);
    for (let i = h & this.mask; ; i = (i + 1) & this.mask) {
      const e = this.slots[i];
      if (e === 0) {
        this.insert(i, h);
        this.keyBytes.push(bytes);
        this.keyStarts.push(start);
        this.keyEnds.push(end);
        return true;
      }
      if (this.hashes[e - 1] !== h) continue;
      const kb = this.keyBytes[e - 1];
      const ks = this.keyStarts[e - 1];
      if (this.keyEnds[e - 1] - ks !== end - start) continue;
      let same = true;
      for (let k = 0; k < end - start && same; k++) same = kb[ks + k] === bytes[start + k];
      if (same) return false;
    }
  }

  private insert(slot: number, hash: number): void {
    if (this.size === this.hashes.length) this.grow();
    this.hashes[this.size] = hash;
    this.size++;
    this.slots[slot] = this.size;
    if (this.size * 2 > this.slots.length) this.rehash();
  }

  private grow(): void {
    const hashes = new Int32Array(this.hashes.length * 2);
    hashes.set(this.hashes);
    this.hashes = hashes;
    if (this.words > 0) {
      const keys = new Int32Array(hashes.length * this.words);
      keys.set(this.keyWords);
      this.keyWords = keys;
    }
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let e = 1; e <= this.size; e++) {
      let i = this.hashes[e - 1] & mask;
      while (slots[i] !== 0) i = (i + 1) & mask;
      slots[i] = e;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

interface Sample {
  values: number;
  raw: number;
  dictionary: number;
  seen: KeySet | undefined;
}

/** Adds up to `limit` rows of one column chunk to a sample; false for columns left to the writer's default. */
function addSample(data: AnyData, limit: number, s: Sample): boolean {
  const n = Math.min(data.length, limit);
  const type = data.type;
  const isValid = validity(data);
  if (arrow.DataType.isUtf8(type) || arrow.DataType.isBinary(type)) {
    const offsets = data.valueOffsets as Int32Array;
    const bytes = data.values as Uint8Array;
    const seen = (s.seen ??= new KeySet(0, limit));
    for (let i = 0; i < n; i++) {
      if (isValid && !isValid(i)) continue;
      const start = offsets[i];
      const end = offsets[i + 1];
      s.values++;
      s.raw += 4 + end - start;
      if (seen.addBytes(bytes, start, end)) s.dictionary += 4 + end - start;
    }
    return true;
  }
  if (arrow.DataType.isBool(type) || type.children?.length || data.values === undefined) return false;
  const v = data.values as ArrayLike<number | bigint> & ArrayBufferView & { BYTES_PER_ELEMENT: number };
  const width = data.stride * v.BYTES_PER_ELEMENT;
  if (width % 4 === 0 && v.byteOffset % 4 === 0) {
    const words = width / 4;
    const view = new Int32Array(v.buffer, v.byteOffset, n * words);
    const seen = (s.seen ??= new KeySet(words, limit));
    for (let i = 0; i < n; i++) {
      if (isValid && !isValid(i)) continue;
      s.values++;
      s.raw += width;
      if (seen.addWords(view, i * words)) s.dictionary += width;
    }
    return true;
  }
  // Fixed-width bytes of another width or alignment (fixed[n], uuid): keys as byte strings.
  const bytes = new Uint8Array(v.buffer, v.byteOffset, n * width);
  const seen = (s.seen ??= new KeySet(0, limit));
  for (let i = 0; i < n; i++) {
    if (isValid && !isValid(i)) continue;
    s.values++;
    s.raw += width;
    if (seen.addBytes(bytes, i * width, i * width + width)) s.dictionary += width;
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
    const s: Sample = { values: 0, raw: 0, dictionary: 0, seen: undefined };
    let left = DICTIONARY_SAMPLE_ROWS;
    for (const b of batches) {
      if (left <= 0) break;
      if (!addSample(b.data.children[k], left, s)) return;
      left -= b.numRows;
    }
    if (s.values === 0) return;
    // RLE/bit-packed indices: bit width of the largest index.
    const bits = Math.max(1, Math.ceil(Math.log2((s.seen?.size ?? 0) + 1)));
    const encoded = Math.ceil((s.values * bits) / 8);
    out.set(f.name, encoded + s.dictionary < s.raw);
  });
  return out;
}
