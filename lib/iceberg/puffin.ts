/**
 * Puffin files (format/puffin-spec.md): "PFA1", blobs, then a footer
 * `magic, JSON payload, payload size (4-byte LE), 4 flag bytes, magic`.
 */
import * as zlib from 'node:zlib';
import { isLosslessNumber, parse } from 'lossless-json';
import { IllegalStateError, InvalidFileError, UnsupportedError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';

export const PUFFIN_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x50, 0x46, 0x41, 0x31);
/** Payload size (4) + flags (4) + magic (4): the fixed tail of the footer. */
export const PUFFIN_FOOTER_STRUCT_LENGTH = 12;
/** Header magic + footer magic + empty payload + footer struct. */
const MIN_FILE_LENGTH = 4 + 4 + PUFFIN_FOOTER_STRUCT_LENGTH;
/** How much of the file's end to fetch first: most footers fit, so one read suffices. */
const TAIL_GUESS = 16 * 1024;
const FLAG_FOOTER_COMPRESSED = 0; // byte 0, bit 0
const RULE = 'puffin-spec "Footer structure"';

export interface BlobMetadata {
  readonly type: string;
  /** Field ids the blob was computed for. */
  readonly fields: readonly number[];
  readonly snapshotId: bigint;
  readonly sequenceNumber: bigint;
  /** Where the blob's (possibly compressed) bytes start in the file. */
  readonly offset: number;
  readonly length: number;
  /** `lz4` or `zstd`; absent means uncompressed. */
  readonly compressionCodec?: string;
  readonly properties: Readonly<Record<string, string>>;
}

/** The footer's FileMetadata, plus where the footer sits. */
export interface PuffinFooter {
  readonly blobs: readonly BlobMetadata[];
  readonly properties: Readonly<Record<string, string>>;
  readonly fileLength: number;
  /** Bytes from the footer's first magic to the end of the file. */
  readonly footerSize: number;
}

/** A blob to write. Snapshot id and sequence number default to -1 ("inherited", as DVs need). */
export interface PuffinBlob {
  readonly type: string;
  readonly fields: readonly number[];
  readonly snapshotId?: bigint | number;
  readonly sequenceNumber?: bigint | number;
  readonly data: Uint8Array;
  readonly properties?: Readonly<Record<string, string>>;
}

export interface PuffinWriteResult {
  readonly path: string;
  /** Total bytes written: what a manifest's file_size_in_bytes needs. */
  readonly fileSize: number;
  readonly footerSize: number;
  readonly blobs: readonly BlobMetadata[];
}

/** Reads and checks the footer. `fileLength` saves a length lookup when a manifest already knows it. */
export async function readPuffinFooter(io: FileIO, path: string, fileLength?: number): Promise<PuffinFooter> {
  const input = io.newInputFile(path, fileLength);
  const length = await input.length();
  if (length < MIN_FILE_LENGTH) {
    throw new InvalidFileError(
      `Invalid Puffin file: length ${length} is less than the minimal Puffin file length ${MIN_FILE_LENGTH} (${RULE})`,
      { path },
    );
  }
  const tailStart = Math.max(0, length - TAIL_GUESS);
  let tail = await input.read(tailStart, length);
  const struct = tail.length - PUFFIN_FOOTER_STRUCT_LENGTH;
  checkMagic(tail, tail.length - 4, length - 4, path);
  const view = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  const payloadSize = view.getInt32(struct, true);
  const footerSize = 4 + payloadSize + PUFFIN_FOOTER_STRUCT_LENGTH;
  if (payloadSize < 0 || footerSize > length - 4) {
    throw new InvalidFileError(
      `Invalid Puffin footer payload size ${payloadSize} for a file of ${length} bytes (${RULE})`,
      { path },
    );
  }
  const compressed = decodeFlags(tail.subarray(struct + 4, struct + 8), path);
  let footerStart = tail.length - footerSize;
  if (footerStart < 0) {
    tail = await input.read(length - footerSize, length);
    footerStart = 0;
  }
  checkMagic(tail, footerStart, length - footerSize, path);
  if (tailStart === 0) checkMagic(tail, 0, 0, path); // the header magic came for free
  if (compressed) {
    // Java cannot read these either (PuffinFormat.decompress has no LZ4 frame support).
    throw new UnsupportedError('Puffin footer payload is LZ4-compressed, which is not supported', { path });
  }
  const payload = tail.subarray(footerStart + 4, footerStart + 4 + payloadSize);
  const { blobs, properties } = parseFileMetadata(payload, path);
  const blobEnd = length - footerSize;
  blobs.forEach((b, i) => {
    if (b.offset < 4 || b.length < 0 || b.offset + b.length > blobEnd) {
      throw new InvalidFileError(
        `Puffin blob ${i} (${b.type}) at offset ${b.offset} with length ${b.length} lies outside the blob area [4, ${blobEnd})`,
        { path },
      );
    }
  });
  return { blobs, properties, fileLength: length, footerSize };
}

/** A blob's bytes, decompressed. */
export async function readPuffinBlob(io: FileIO, path: string, blob: BlobMetadata): Promise<Uint8Array> {
  const decompress = decompressor(blob.compressionCodec, path);
  const raw = await io.readRange(path, blob.offset, blob.offset + blob.length);
  if (raw.length !== blob.length) {
    throw new InvalidFileError(
      `Puffin blob at offset ${blob.offset}: expected ${blob.length} bytes, read ${raw.length} (file truncated?)`,
      { path },
    );
  }
  return decompress(raw);
}

/**
 * Builds a Puffin file in memory and writes it with one `io.write` at `finish()`.
 * Blob offsets are known as soon as a blob is added.
 */
export class PuffinWriter {
  private readonly chunks: Uint8Array[] = [PUFFIN_MAGIC.slice()];
  private readonly blobs: BlobMetadata[] = [];
  private position: number = PUFFIN_MAGIC.length;
  private finished = false;
  private readonly properties: Record<string, string>;

  constructor(
    private readonly io: FileIO,
    readonly path: string,
    options: { readonly createdBy?: string; readonly properties?: Readonly<Record<string, string>> } = {},
  ) {
    this.properties = { ...(options.properties ?? {}) };
    this.properties['created-by'] ??= options.createdBy ?? 'packice';
  }

  /** Appends a blob, uncompressed, and returns its metadata. */
  add(blob: PuffinBlob): BlobMetadata {
    if (this.finished) throw new IllegalStateError(`PuffinWriter for ${this.path} is already finished`, { path: this.path });
    const meta: BlobMetadata = {
      type: blob.type,
      fields: [...blob.fields],
      snapshotId: BigInt(blob.snapshotId ?? -1),
      sequenceNumber: BigInt(blob.sequenceNumber ?? -1),
      offset: this.position,
      length: blob.data.length,
      properties: { ...(blob.properties ?? {}) },
    };
    this.chunks.push(blob.data);
    this.position += blob.data.length;
    this.blobs.push(meta);
    return meta;
  }

  /** The whole file's bytes, footer included (no I/O). */
  toBytes(): { bytes: Uint8Array; footerSize: number } {
    const payload = new TextEncoder().encode(fileMetadataToJson(this.blobs, this.properties));
    const footer = new Uint8Array(4 + payload.length + PUFFIN_FOOTER_STRUCT_LENGTH);
    footer.set(PUFFIN_MAGIC, 0);
    footer.set(payload, 4);
    new DataView(footer.buffer).setInt32(4 + payload.length, payload.length, true);
    // flags stay 0: the payload is not compressed
    footer.set(PUFFIN_MAGIC, footer.length - 4);
    const bytes = new Uint8Array(this.position + footer.length);
    let at = 0;
    for (const c of this.chunks) {
      bytes.set(c, at);
      at += c.length;
    }
    bytes.set(footer, at);
    return { bytes, footerSize: footer.length };
  }

  async finish(): Promise<PuffinWriteResult> {
    if (this.finished) throw new IllegalStateError(`PuffinWriter for ${this.path} is already finished`, { path: this.path });
    const { bytes, footerSize } = this.toBytes();
    this.finished = true;
    await this.io.write(this.path, bytes);
    return { path: this.path, fileSize: bytes.length, footerSize, blobs: [...this.blobs] };
  }
}

// ---- footer JSON ----

function fileMetadataToJson(blobs: readonly BlobMetadata[], properties: Readonly<Record<string, string>>): string {
  // Written by hand so that longs above 2^53 keep every digit.
  const parts = blobs.map((b) => {
    let s =
      `{"type":${JSON.stringify(b.type)},"fields":[${b.fields.join(',')}],` +
      `"snapshot-id":${b.snapshotId},"sequence-number":${b.sequenceNumber},"offset":${b.offset},"length":${b.length}`;
    if (b.compressionCodec !== undefined) s += `,"compression-codec":${JSON.stringify(b.compressionCodec)}`;
    if (Object.keys(b.properties).length > 0) s += `,"properties":${JSON.stringify(b.properties)}`;
    return s + '}';
  });
  let json = `{"blobs":[${parts.join(',')}]`;
  if (Object.keys(properties).length > 0) json += `,"properties":${JSON.stringify(properties)}`;
  return json + '}';
}

function parseFileMetadata(payload: Uint8Array, path: string): { blobs: BlobMetadata[]; properties: Record<string, string> } {
  const bad = (what: string): never => {
    throw new InvalidFileError(`Invalid Puffin footer: ${what} (puffin-spec "FileMetadata")`, { path });
  };
  let json: unknown;
  try {
    json = parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
  } catch (e) {
    return bad(`payload is not UTF-8 JSON: ${(e as Error).message}`);
  }
  if (!isObject(json)) return bad('payload is not a JSON object');
  if (!Array.isArray(json.blobs)) return bad('"blobs" is missing or not an array');
  const blobs = json.blobs.map((b: unknown, i: number): BlobMetadata => {
    if (!isObject(b)) return bad(`blob ${i} is not an object`);
    const long = (key: string): bigint => {
      const v = b[key];
      if (!isLosslessNumber(v) || !/^-?\d+$/.test(v.value)) return bad(`blob ${i} "${key}" is not a long`);
      return BigInt(v.value);
    };
    const offset = (key: string): number => {
      const v = long(key);
      if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) return bad(`blob ${i} "${key}" ${v} is out of range`);
      return Number(v);
    };
    if (typeof b.type !== 'string') return bad(`blob ${i} "type" is not a string`);
    if (!Array.isArray(b.fields)) return bad(`blob ${i} "fields" is not a list of ints`);
    const fields = b.fields.map((f: unknown) => {
      if (!isLosslessNumber(f) || !/^-?\d+$/.test(f.value)) return bad(`blob ${i} "fields" is not a list of ints`);
      return Number(f.value);
    });
    const codec = b['compression-codec'];
    if (codec !== undefined && codec !== null && typeof codec !== 'string') {
      return bad(`blob ${i} "compression-codec" is not a string`);
    }
    return {
      type: b.type,
      fields,
      snapshotId: long('snapshot-id'),
      sequenceNumber: long('sequence-number'),
      offset: offset('offset'),
      length: offset('length'),
      ...(typeof codec === 'string' ? { compressionCodec: codec } : {}),
      properties: stringMap(b.properties, `blob ${i} "properties"`, bad),
    };
  });
  return { blobs, properties: stringMap(json.properties, '"properties"', bad) };
}

function stringMap(v: unknown, what: string, bad: (what: string) => never): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) return bad(`${what} is not an object`);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== 'string') return bad(`${what} value for "${k}" is not a string`);
    out[k] = x;
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !isLosslessNumber(v);
}

// ---- helpers ----

function checkMagic(bytes: Uint8Array, at: number, fileOffset: number, path: string): void {
  for (let i = 0; i < 4; i++) {
    if (bytes[at + i] !== PUFFIN_MAGIC[i]) {
      const got = Array.from(bytes.subarray(at, at + 4), (x) => x.toString(16).padStart(2, '0')).join(' ');
      throw new InvalidFileError(
        `Invalid Puffin file: expected magic 50 46 41 31 ("PFA1") at offset ${fileOffset}, found ${got} (${RULE})`,
        { path },
      );
    }
  }
}

/** Returns whether the footer payload is compressed; any other set bit is a feature we don't know. */
function decodeFlags(flags: Uint8Array, path: string): boolean {
  let compressed = false;
  for (let byte = 0; byte < 4; byte++) {
    for (let bit = 0; bit < 8; bit++) {
      if ((flags[byte] & (1 << bit)) === 0) continue;
      if (byte === 0 && bit === FLAG_FOOTER_COMPRESSED) compressed = true;
      else throw new UnsupportedError(`Puffin footer has unknown flag byte ${byte} bit ${bit} set (${RULE})`, { path });
    }
  }
  return compressed;
}

type Decompress = (raw: Uint8Array) => Uint8Array;

function decompressor(codec: string | undefined, path: string): Decompress {
  if (codec === undefined) return (raw) => raw;
  if (codec === 'zstd') {
    // zlib gained zstd in Node 22.15 / 23.8; on Node 20 this codec stays unsupported.
    const zstd = (zlib as unknown as Record<string, unknown>).zstdDecompressSync;
    if (typeof zstd === 'function') {
      return (raw) => {
        try {
          return new Uint8Array((zstd as (b: Uint8Array) => Buffer)(raw));
        } catch (e) {
          throw new InvalidFileError(`Puffin blob is not a valid zstd frame: ${(e as Error).message}`, {
            path,
            cause: e,
          });
        }
      };
    }
    throw new UnsupportedError(`Puffin blob compression codec "zstd" needs Node >= 22.15 (running ${process.version})`, {
      path,
    });
  }
  throw new UnsupportedError(`Unsupported Puffin blob compression codec "${codec}"`, { path });
}
