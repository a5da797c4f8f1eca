/**
 * The dictionaries of merged row groups (row-group-merge.ts): per entry a 64-bit fingerprint of its
 * plain bytes, and the union of several chunks' dictionaries with each one's old-to-new index map.
 */

/** A plain-encoded value list: value i is bytes [offsets[i] + prefix, offsets[i + 1]). */
export interface PlainValues {
  readonly bytes: Uint8Array;
  readonly offsets: Int32Array;
  /** 4 for BYTE_ARRAY (the length prefix), else 0. */
  readonly prefix: number;
}

/**
 * Per dictionary entry, 64 bits of a hash of its plain bytes (two 32-bit lanes, each FNV-1a with
 * a final avalanche): what the proof hashes a dictionary-indexed value by, 8 bytes a value, where
 * gathering the values themselves cost a copy of every one on both sides of the proof.
 */
export function fingerprints(dict: PlainValues): Uint32Array {
  const n = dict.offsets.length - 1;
  const out = new Uint32Array(2 * n);
  const b = dict.bytes;
  const mix = (h: number): number => {
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  };
  for (let i = 0; i < n; i++) {
    const s = dict.offsets[i] + dict.prefix;
    const e = dict.offsets[i + 1];
    let h1 = 0x811c9dc5 ^ (e - s);
    let h2 = 0x1b873593 ^ Math.imul(e - s, 0x9e3779b1);
    for (let j = s; j < e; j++) {
      h1 = Math.imul(h1 ^ b[j], 0x01000193);
      h2 = Math.imul(h2 ^ b[j], 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    out[2 * i] = mix(h1);
    out[2 * i + 1] = mix(h2);
  }
  return out;
}

/**
 * The union of the sources' dictionaries, each distinct value once in first-seen order, with each
 * source's old-to-new index map; undefined when it would pass `limit` plain-encoded bytes. Values
 * are found by their fingerprints (`prints`, one array per dictionary), confirmed byte by byte.
 */
export function dictionaryUnion(
  dicts: readonly (PlainValues | undefined)[], prints: readonly (Uint32Array | undefined)[], limit: number,
): { remaps: (Int32Array | undefined)[]; values: Uint8Array; count: number } | undefined {
  // Union entry u is entry `entry[u]` of dictionary `from[u]`. An open-addressing table of union
  // entries + 1 by their first fingerprint word (a Map of chains was 7 % of a merge with deletes).
  const from: number[] = [];
  const entry: number[] = [];
  let keys = new Uint32Array(1024);
  let slots = new Int32Array(2048);
  let mask = slots.length - 1;
  let size = 0;
  const same = (a: PlainValues, i: number, b: PlainValues, j: number): boolean => {
    const as = a.offsets[i];
    const bs = b.offsets[j];
    const n = a.offsets[i + 1] - as;
    if (n !== b.offsets[j + 1] - bs) return false;
    for (let x = 0; x < n; x++) if (a.bytes[as + x] !== b.bytes[bs + x]) return false;
    return true;
  };
  const grow = (): void => {
    const wider = new Uint32Array(keys.length * 2);
    wider.set(keys);
    keys = wider;
    slots = new Int32Array(slots.length * 2);
    mask = slots.length - 1;
    for (let u = 0; u < from.length; u++) {
      let h = keys[u] & mask;
      while (slots[h] !== 0) h = (h + 1) & mask;
      slots[h] = u + 1;
    }
  };
  const remaps: (Int32Array | undefined)[] = [];
  for (const [d, dict] of dicts.entries()) {
    if (!dict) {
      remaps.push(undefined);
      continue;
    }
    const fp = prints[d]!;
    const n = dict.offsets.length - 1;
    const map = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const key = fp[2 * i];
      let h = key & mask;
      let u = -1;
      // Equal fingerprints are confirmed byte by byte; a collision probes on.
      for (let s = slots[h]; s !== 0; s = slots[(h = (h + 1) & mask)]) {
        if (keys[s - 1] === key && same(dicts[from[s - 1]]!, entry[s - 1], dict, i)) {
          u = s - 1;
          break;
        }
      }
      if (u < 0) {
        u = from.length;
        from.push(d);
        entry.push(i);
        keys[u] = key;
        slots[h] = u + 1;
        size += dict.offsets[i + 1] - dict.offsets[i];
        if (size > limit) return undefined;
        // `keys` has half as many places as `slots`: the table stays at most half full.
        if (from.length === keys.length) grow();
      }
      map[i] = u;
    }
    remaps.push(map);
  }
  const values = new Uint8Array(size);
  let at = 0;
  for (let u = 0; u < from.length; u++) {
    const dict = dicts[from[u]]!;
    const s = dict.offsets[entry[u]];
    const e = dict.offsets[entry[u] + 1];
    values.set(dict.bytes.subarray(s, e), at);
    at += e - s;
  }
  return { remaps, values, count: from.length };
}
