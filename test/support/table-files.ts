/**
 * Looking at and tampering with the files of a local table in tests: hashes of a folder tree,
 * Avro container records re-encoded after an edit, and every string a decoded value holds.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { openAvroContainer, writeAvroContainer, type AvroSchemaObject } from '../../lib/iceberg/avro.js';

/** Every file below `dir`, as sorted paths relative to it. */
export function listTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

/** Relative path → SHA-256 of the content, for every file below `dir`. */
export function hashTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of listTree(dir)) out[f] = createHash('sha256').update(readFileSync(join(dir, f))).digest('hex');
  return out;
}

export interface AvroFile {
  readonly schema: AvroSchemaObject;
  /** Key-value metadata other than avro.schema and avro.codec, as text. */
  readonly meta: ReadonlyMap<string, string>;
  readonly codec: string;
  readonly records: Record<string, unknown>[];
}

/** Decodes a whole Avro container file (longs as bigint, bytes as Uint8Array, int-key maps as Map). */
export async function readAvroFile(path: string): Promise<AvroFile> {
  const reader = await openAvroContainer<Record<string, unknown>>(readFileSync(path), path);
  const records: Record<string, unknown>[] = [];
  for await (const r of reader) records.push(r);
  const meta = new Map<string, string>();
  for (const [k, v] of reader.header.meta) {
    if (k !== 'avro.schema' && k !== 'avro.codec') meta.set(k, new TextDecoder().decode(v));
  }
  return { schema: reader.header.schema as AvroSchemaObject, meta, codec: reader.header.codec, records };
}

/** Decoded values in the shape the encoder takes: Maps as {key, value} arrays, bytes as Buffers. */
function writable(v: unknown): unknown {
  if (v instanceof Map) return [...v].map(([key, value]) => ({ key: writable(key), value: writable(value) }));
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v)) return v.map(writable);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, writable(x)]));
  }
  return v;
}

/** Rewrites an Avro container file in place after `edit` changed its records; schema and metadata are kept. */
export async function editAvroFile(path: string, edit: (records: Record<string, unknown>[]) => void): Promise<void> {
  const file = await readAvroFile(path);
  edit(file.records);
  const bytes = writeAvroContainer(file.schema, file.records.map(writable), {
    meta: [...file.meta],
    codec: file.codec === 'null' ? 'null' : 'deflate',
  });
  writeFileSync(path, bytes);
}

/** Every string inside a decoded value (bytes read as UTF-8: bounds of file_path columns hold paths). */
export function stringsIn(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (v instanceof Uint8Array) out.push(new TextDecoder().decode(v));
  else if (v instanceof Map) for (const [k, x] of v) stringsIn(x, stringsIn(k, out));
  else if (Array.isArray(v)) for (const x of v) stringsIn(x, out);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) stringsIn(x, out);
  return out;
}
