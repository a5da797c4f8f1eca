import { resolve as resolveLocal } from 'node:path';
import { AlreadyExistsError, InvalidFileError, NotFoundError, ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { forEachLimit } from '../io/map-limit.js';
import { fileIOFor } from '../io/index.js';
import { baseName, isLocalPath, isS3Path, joinPath, normalizePath } from '../io/path.js';
import { openAvroContainer, writeAvroContainer, type AvroContainerReader, type AvroSchemaObject } from '../iceberg/avro.js';
import { readPuffinBlob, readPuffinFooter, PuffinWriter } from '../iceberg/puffin.js';
import { REFERENCED_DATA_FILE } from '../iceberg/deletion-vector.js';
import { LOCATION_PROPERTIES } from '../iceberg/locations.js';
import { FileContent, ManifestEntryStatus } from '../iceberg/manifest.js';
import { jsonBigInt, type JsonObject } from '../iceberg/json.js';
import { MetadataColumns, type Schema } from '../iceberg/schema.js';
import { parseTableMetadata, serializeTableMetadata, currentSchema, type TableMetadata } from '../iceberg/table-metadata.js';
import type { NestedField, StructType } from '../iceberg/types.js';
import { ParquetWriter } from '../parquet/writer.js';
import { loadTable } from '../catalog/table.js';
import { metadataFolder, metadataVersionOf, VERSION_HINT_FILE } from '../catalog/object-store-catalog.js';
import { readRows } from './data-reader.js';
import { POSITION_DELETE_SCHEMA } from './delete-filter.js';
import { openParquet } from '../parquet/reader.js';
import { fieldIdOf } from '../parquet/schema.js';

export interface RelocateOptions {
  readonly s3Endpoint?: string;
  /** Start from this metadata file (default: the source's current one). */
  readonly metadataFile?: string;
  readonly concurrency?: number;
  /**
   * Write into a target that already holds files (files at the same paths are replaced).
   * Metadata files are never written over, even then.
   */
  readonly overwrite?: boolean;
  /**
   * Copy only what the current snapshot and the refs reach: one metadata file, its snapshots,
   * snapshot log and statistics trimmed to those snapshots, no metadata log. A history that names
   * files that are gone does not stop it.
   */
  readonly currentOnly?: boolean;
  /** Manifests rewritten (with the files they list) of the total, as the copy goes. */
  readonly onProgress?: (label: string, done: number, total: number | undefined) => void;
}

export interface RelocateResult {
  /** The location recorded in the source metadata. */
  readonly sourceLocation: string;
  readonly targetLocation: string;
  readonly metadataLocation: string;
  readonly filesCopied: number;
  readonly filesRewritten: number;
  readonly bytesWritten: number;
}

/**
 * Copies a table and rewrites every path inside it from the location its
 * metadata records to `target`, as Iceberg's rewrite-table-path does: metadata
 * JSON, manifest lists, manifests, the file_path column of position delete
 * files, and the referenced-data-file of deletion vectors. `source` is where
 * the files are now; paths compare after scheme/authority normalisation.
 */
export async function relocateTable(source: string, target: string, options: RelocateOptions = {}): Promise<RelocateResult> {
  const src = absolute(source);
  const dst = absolute(target);
  const srcIo = fileIOFor(src, options);
  const dstIo = fileIOFor(dst, options);
  const current = await loadTable(src, { io: srcIo, ...(options.metadataFile !== undefined ? { metadataFile: options.metadataFile } : {}) });
  const metadata = options.currentOnly === true ? currentOnly(current.metadata) : current.metadata;
  if (normalizePath(dst) === normalizePath(src) || normalizePath(dst) === normalizePath(metadata.location)) {
    throw new ValidationError(`relocate: the target ${dst} is the table's own location; nothing would be copied, its files would be rewritten in place`, { path: dst });
  }
  if (!options.overwrite) await refuseNonEmptyTarget(dstIo, dst);
  const r = new Relocation(srcIo, dstIo, src, dst, metadata.location, options.concurrency ?? 8, options.overwrite === true, options.onProgress);
  const metadataLocation = await r.run(metadata, current.metadataLocation);
  return {
    sourceLocation: metadata.location,
    targetLocation: dst,
    metadataLocation,
    filesCopied: r.copied,
    filesRewritten: r.rewritten,
    bytesWritten: r.bytes,
  };
}

/**
 * The metadata trimmed to the current snapshot and the snapshots the refs name, as Iceberg's
 * rewrite-table-path leaves a version range: the snapshot log and statistics of those snapshots
 * only, and no metadata log (the older metadata files are not copied). A kept snapshot's parent
 * may be gone, as after an expiry.
 */
export function currentOnly(m: TableMetadata): TableMetadata {
  const keep = new Set<bigint>(Object.values(m.refs).map((r) => r.snapshotId));
  if (m.currentSnapshotId !== null) keep.add(m.currentSnapshotId);
  const keptStatistics = (list: readonly JsonObject[]): JsonObject[] =>
    list.filter((st) => st['snapshot-id'] !== undefined && st['snapshot-id'] !== null && keep.has(jsonBigInt(st['snapshot-id'], 'snapshot-id')));
  return {
    ...m,
    snapshots: m.snapshots.filter((s) => keep.has(s.snapshotId)),
    snapshotLog: m.snapshotLog.filter((e) => keep.has(e.snapshotId)),
    metadataLog: [],
    ...(m.statistics ? { statistics: keptStatistics(m.statistics) } : {}),
    ...(m.partitionStatistics ? { partitionStatistics: keptStatistics(m.partitionStatistics) } : {}),
  };
}

/** A relocation into a folder that holds anything could replace a user's files: refuse it. */
async function refuseNonEmptyTarget(io: FileIO, target: string): Promise<void> {
  for await (const f of io.list(target)) {
    throw new AlreadyExistsError(
      `relocate: the target ${target} is not empty (it holds ${f.path}, and maybe more); ` +
        'relocate writes only into an empty or absent location unless told --overwrite (metadata files are never overwritten)',
      { path: target },
    );
  }
}

function absolute(location: string): string {
  if (isS3Path(location) || /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(location)) return location.replace(/\/+$/, '');
  return resolveLocal(location);
}

interface RewrittenFile {
  readonly size: number;
  /** Old blob offset → new offset and length (Puffin files). */
  readonly blobs?: ReadonlyMap<number, { offset: number; length: number }>;
}

class Relocation {
  copied = 0;
  rewritten = 0;
  bytes = 0;
  private readonly oldRoot: string;
  /** Delete files rewritten, by normalised old path. */
  private readonly rewrittenDeletes = new Map<string, Promise<RewrittenFile>>();
  private readonly done = new Map<string, Promise<number>>();
  private schema: Schema | undefined;

  constructor(
    private readonly srcIo: FileIO,
    private readonly dstIo: FileIO,
    private readonly src: string,
    private readonly dst: string,
    recordedLocation: string,
    private readonly concurrency: number,
    private readonly overwrite: boolean,
    private readonly onProgress: RelocateOptions['onProgress'] = undefined,
  ) {
    this.oldRoot = normalizePath(recordedLocation).replace(/\/+$/, '');
  }

  /** The part of a recorded path below the table location; throws for paths outside it. */
  private relative(path: string): string {
    const n = normalizePath(path);
    if (n === this.oldRoot) return '';
    if (!n.startsWith(`${this.oldRoot}/`)) {
      throw new InvalidFileError(`path ${path} is outside the table location ${this.oldRoot}; cannot relocate it`, { path });
    }
    return n.slice(this.oldRoot.length + 1);
  }

  newPath(path: string): string {
    return joinPath(this.dst, this.relative(path));
  }

  private srcPath(path: string): string {
    return joinPath(this.src, this.relative(path));
  }

  private mapPathIfInside(path: string): string {
    const n = normalizePath(path);
    return n === this.oldRoot || n.startsWith(`${this.oldRoot}/`) ? this.newPath(path) : path;
  }

  async run(metadata: TableMetadata, metadataLocation: string): Promise<string> {
    this.schema = currentSchema(metadata);
    // Every metadata file of the log that still exists, then the current one. All are read
    // and parsed before anything is written, so a broken one leaves nothing behind.
    const files = [...metadata.metadataLog.map((e) => e.metadataFile), metadataLocation];
    const names = renameMetadataFiles(files);
    const parsed: { file: string; metadata: TableMetadata }[] = [];
    for (let i = 0; i < files.length; i++) {
      if (i === files.length - 1) {
        parsed.push({ file: files[i], metadata });
        continue;
      }
      const path = this.srcPath(files[i]);
      if (!(await this.srcIo.exists(path))) continue;
      parsed.push({ file: files[i], metadata: parseTableMetadata(new TextDecoder().decode(await this.srcIo.read(path)), path) });
    }
    if (this.overwrite) {
      for (const { file } of parsed) {
        const target = joinPath(metadataFolder(this.dst), names.get(normalizePath(file))!);
        if (await this.dstIo.exists(target)) {
          throw new AlreadyExistsError(`relocate: ${target} already exists; metadata files are never overwritten, even with --overwrite`, { path: target });
        }
      }
    }

    const manifestLists = new Set<string>();
    for (const s of metadata.snapshots) if (s.manifestList) manifestLists.add(s.manifestList);
    this.manifestsTotal = await this.checkSources(metadata, [...manifestLists]);
    this.onProgress?.('manifests', 0, this.manifestsTotal);

    // Data and delete files first, then manifests, lists, metadata; the hint last, so a
    // half-done relocation is never a table.
    await forEachLimit([...manifestLists], this.concurrency, async (list) => {
      await this.rewriteManifestList(list, metadata);
    });
    for (const s of metadata.statistics ?? []) await this.copy(String(s['statistics-path']));
    for (const s of metadata.partitionStatistics ?? []) await this.copy(String(s['statistics-path']));

    let lastName = '';
    for (const { file, metadata: m } of parsed) {
      lastName = names.get(normalizePath(file))!;
      // A metadata file is a table's history: never written over, --overwrite or not.
      await this.put(joinPath(metadataFolder(this.dst), lastName), new TextEncoder().encode(serializeTableMetadata(this.rewriteMetadata(m, names))), 'create');
      this.rewritten++;
    }
    const version = metadataVersionOf(lastName);
    if (version !== undefined) {
      await this.put(joinPath(metadataFolder(this.dst), VERSION_HINT_FILE), new TextEncoder().encode(String(version)), this.overwrite ? 'replace' : 'create');
    }
    return joinPath(metadataFolder(this.dst), lastName);
  }

  /**
   * Every manifest list the history names, every manifest they list and every statistics file
   * must be there before anything is written: a writer that expired snapshots without cleaning
   * up leaves history naming files that are gone, and a copy would stop half-way.
   */
  private async checkSources(metadata: TableMetadata, manifestLists: readonly string[]): Promise<number> {
    const missing = async (path: string, what: string): Promise<void> => {
      if (await this.srcIo.exists(this.srcPath(path))) return;
      throw new NotFoundError(
        `relocate: ${what} ${path} is missing; nothing was written. The table's history names a file that is gone ` +
          '(a writer expired snapshots without deleting their references): --current-only copies only what the current snapshot ' +
          'and the refs reach; or expire those snapshots, or relocate from an older --metadata file',
        { path: this.srcPath(path) },
      );
    };
    const manifests = new Set<string>();
    await forEachLimit(manifestLists, this.concurrency, async (list) => {
      const snapshot = metadata.snapshots.find((s) => s.manifestList === list)!;
      await missing(list, `the manifest list of snapshot ${snapshot.snapshotId}`);
      const { records } = await this.readContainer(list);
      for (const rec of records) {
        await missing(String(rec.manifest_path), `a manifest of snapshot ${snapshot.snapshotId}`);
        manifests.add(normalizePath(String(rec.manifest_path)));
      }
    });
    for (const st of [...(metadata.statistics ?? []), ...(metadata.partitionStatistics ?? [])]) await missing(String(st['statistics-path']), 'the statistics file');
    return manifests.size;
  }

  private rewriteMetadata(m: TableMetadata, names: ReadonlyMap<string, string>): TableMetadata {
    const properties = { ...m.properties };
    for (const k of LOCATION_PROPERTIES) if (properties[k] !== undefined) properties[k] = this.mapPathIfInside(properties[k]);
    const metaName = (p: string): string => joinPath(metadataFolder(this.dst), names.get(normalizePath(p)) ?? baseName(p));
    return {
      ...m,
      location: this.dst,
      properties,
      snapshots: m.snapshots.map((s) => ({
        ...s,
        ...(s.manifestList !== undefined ? { manifestList: this.newPath(s.manifestList) } : {}),
        ...(s.manifests !== undefined ? { manifests: s.manifests.map((p) => this.newPath(p)) } : {}),
      })),
      metadataLog: m.metadataLog.map((e) => ({ ...e, metadataFile: metaName(e.metadataFile) })),
      ...(m.statistics
        ? { statistics: m.statistics.map((s) => ({ ...s, 'statistics-path': this.newPath(String(s['statistics-path'])) })) }
        : {}),
      ...(m.partitionStatistics
        ? {
            partitionStatistics: m.partitionStatistics.map((s) => ({
              ...s,
              'statistics-path': this.newPath(String(s['statistics-path'])),
            })),
          }
        : {}),
    };
  }

  /** `create` fails if the object exists; so does every write unless --overwrite was given. */
  private async put(path: string, bytes: Uint8Array, mode: 'create' | 'replace' = this.overwrite ? 'replace' : 'create'): Promise<void> {
    try {
      if (mode === 'create') await this.dstIo.createIfAbsent(path, bytes);
      else await this.dstIo.write(path, bytes);
    } catch (e) {
      if (e instanceof AlreadyExistsError) {
        throw new AlreadyExistsError(
          `relocate: ${path} already exists; ${mode === 'create' && this.overwrite ? 'metadata files are never overwritten' : 'pass --overwrite to replace files in the target'}`,
          { path, cause: e },
        );
      }
      throw e;
    }
    this.bytes += bytes.length;
  }

  /** Copies a file byte for byte, once. */
  private copy(path: string): Promise<number> {
    return once(this.done, path, async () => {
      const bytes = await this.srcIo.read(this.srcPath(path));
      await this.put(this.newPath(path), bytes);
      this.copied++;
      return bytes.length;
    });
  }

  /** The records of an Avro container in the source table, with its reader (for the header). */
  private async readContainer(path: string): Promise<{ reader: AvroContainerReader<Record<string, unknown>>; records: Record<string, unknown>[] }> {
    const reader = await openAvroContainer<Record<string, unknown>>(await this.srcIo.read(this.srcPath(path)), path);
    const records: Record<string, unknown>[] = [];
    for await (const rec of reader) records.push(rec);
    return { reader, records };
  }

  private async rewriteManifestList(path: string, metadata: TableMetadata): Promise<number> {
    const { reader, records } = await this.readContainer(path);
    await forEachLimit(records, this.concurrency, async (rec) => {
      const manifest = String(rec.manifest_path);
      rec.manifest_length = BigInt(await this.rewriteManifest(manifest, metadata));
      rec.manifest_path = this.newPath(manifest);
    });
    const bytes = rewriteContainer(reader.header.schema as AvroSchemaObject, reader.header.meta, reader.header.codec, records);
    await this.put(this.newPath(path), bytes);
    this.rewritten++;
    return bytes.length;
  }

  private readonly manifests = new Map<string, Promise<number>>();
  private manifestsTotal = 0;
  private manifestsDone = 0;

  private rewriteManifest(path: string, metadata: TableMetadata): Promise<number> {
    return once(this.manifests, path, async () => {
      const length = await this.doRewriteManifest(path, metadata);
      this.onProgress?.('manifests', ++this.manifestsDone, this.manifestsTotal);
      return length;
    });
  }

  private async doRewriteManifest(path: string, metadata: TableMetadata): Promise<number> {
    const { reader, records } = await this.readContainer(path);
    await forEachLimit(records, this.concurrency, async (entry) => {
      const file = entry.data_file as Record<string, unknown>;
      const filePath = String(file.file_path);
      const content = Number(file.content ?? 0);
      const format = String(file.file_format).toUpperCase();
      if (Number(entry.status) === ManifestEntryStatus.Deleted) {
        // A deleted entry records a removal: its file may be gone, and no snapshot reads it
        // through this entry (as Iceberg's rewrite-table-path, which copies live entries only).
        if (content === 1 && format !== 'PUFFIN') rewriteFilePathBounds(file, (p) => this.mapPathIfInside(p));
      } else if (content === 0 || content === 2) {
        await this.copy(filePath);
      } else if (format === 'PUFFIN') {
        const out = await this.rewriteDeleteFile(filePath, () => this.rewritePuffin(filePath));
        file.file_size_in_bytes = BigInt(out.size);
        const moved = out.blobs?.get(Number(file.content_offset));
        if (moved) {
          file.content_offset = BigInt(moved.offset);
          file.content_size_in_bytes = BigInt(moved.length);
        }
      } else {
        const out = await this.rewriteDeleteFile(filePath, () => this.rewritePositionDeletes(filePath, metadata));
        file.file_size_in_bytes = BigInt(out.size);
        file.split_offsets = null;
        rewriteFilePathBounds(file, (p) => this.mapPathIfInside(p));
      }
      if (typeof file.referenced_data_file === 'string') file.referenced_data_file = this.newPath(file.referenced_data_file);
      file.file_path = this.newPath(filePath);
    });
    const bytes = rewriteContainer(reader.header.schema as AvroSchemaObject, reader.header.meta, reader.header.codec, records);
    await this.put(this.newPath(path), bytes);
    this.rewritten++;
    return bytes.length;
  }

  private rewriteDeleteFile(path: string, fn: () => Promise<RewrittenFile>): Promise<RewrittenFile> {
    const key = normalizePath(path);
    let p = this.rewrittenDeletes.get(key);
    if (!p) {
      p = fn().then((r) => {
        this.rewritten++;
        this.bytes += r.size;
        return r;
      });
      this.rewrittenDeletes.set(key, p);
    }
    return p;
  }

  private async rewritePuffin(path: string): Promise<RewrittenFile> {
    const from = this.srcPath(path);
    const footer = await readPuffinFooter(this.srcIo, from);
    const writer = new PuffinWriter(this.dstIo, this.newPath(path), { properties: footer.properties });
    const blobs = new Map<number, { offset: number; length: number }>();
    for (const b of footer.blobs) {
      const data = await readPuffinBlob(this.srcIo, from, b);
      const properties = { ...b.properties };
      if (properties[REFERENCED_DATA_FILE] !== undefined) properties[REFERENCED_DATA_FILE] = this.newPath(properties[REFERENCED_DATA_FILE]);
      if (b.compressionCodec !== undefined) {
        throw new InvalidFileError(`compressed Puffin blobs (${b.compressionCodec}) cannot be relocated yet`, { path });
      }
      const written = writer.add({ type: b.type, fields: b.fields, snapshotId: b.snapshotId, sequenceNumber: b.sequenceNumber, data, properties });
      blobs.set(b.offset, { offset: written.offset, length: written.length });
    }
    const result = await writer.finish();
    return { size: result.fileSize, blobs };
  }

  private async rewritePositionDeletes(path: string, metadata: TableMetadata): Promise<RewrittenFile> {
    const from = this.srcPath(path);
    const schema = await positionDeleteSchemaOf(this.srcIo, from, metadata);
    const writer = ParquetWriter.open(this.dstIo, this.newPath(path), schema, {
      compression: 'zstd',
    });
    try {
      for await (const batch of readRows(this.srcIo, { filePath: from, fileFormat: 'PARQUET', content: FileContent.PositionDeletes }, schema)) {
        for (const row of batch.rows) row.file_path = this.mapPathIfInside(String(row.file_path));
        await writer.writeRows(batch.rows);
      }
      const written = await writer.close();
      return { size: written.fileSizeInBytes };
    } catch (e) {
      await writer.abort();
      throw e;
    }
  }
}

/** file_path, pos, and the optional `row` column when the file has one (typed by the current schema). */
async function positionDeleteSchemaOf(io: FileIO, path: string, metadata: TableMetadata): Promise<StructType> {
  const reader = await openParquet(io, path);
  try {
    const hasRow = reader.arrowSchema.fields.some((f) => fieldIdOf(f) === MetadataColumns.ROW);
    if (!hasRow) return POSITION_DELETE_SCHEMA;
    const row: NestedField = {
      id: MetadataColumns.ROW,
      name: 'row',
      required: false,
      type: { type: 'struct', fields: currentSchema(metadata).fields.map((f) => ({ ...f, required: false })) },
    };
    return { type: 'struct', fields: [...POSITION_DELETE_SCHEMA.fields, row] };
  } finally {
    reader.close();
  }
}

/** Bounds of the file_path column of a position delete file hold paths too. */
function rewriteFilePathBounds(file: Record<string, unknown>, map: (p: string) => string): void {
  for (const key of ['lower_bounds', 'upper_bounds']) {
    const bounds = file[key];
    if (!(bounds instanceof Map)) continue;
    const old = bounds.get(MetadataColumns.FILE_PATH) as Uint8Array | undefined;
    if (old !== undefined) bounds.set(MetadataColumns.FILE_PATH, new TextEncoder().encode(map(new TextDecoder().decode(old))));
  }
}

/** The promise for `path` in `done`, started by `start` the first time its normalised path is asked for. */
function once<T>(done: Map<string, Promise<T>>, path: string, start: () => Promise<T>): Promise<T> {
  const key = normalizePath(path);
  let p = done.get(key);
  if (!p) {
    p = start();
    done.set(key, p);
  }
  return p;
}

/** Decoded values in the shape the encoder takes: maps as {key, value} arrays, bytes as Buffers. */
function writable(v: unknown): unknown {
  if (v instanceof Map) return [...v].map(([key, value]) => ({ key: writable(key), value: writable(value) }));
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v)) return v.map(writable);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = writable(x);
    return out;
  }
  return v;
}

/** Re-encodes container records with the same schema and key-value metadata. */
function rewriteContainer(
  schema: AvroSchemaObject,
  meta: ReadonlyMap<string, Uint8Array>,
  codec: string,
  records: readonly Record<string, unknown>[],
): Uint8Array {
  const extra = [...meta].filter(([k]) => k !== 'avro.schema' && k !== 'avro.codec');
  return writeAvroContainer(schema, records.map(writable), { meta: extra, codec: codec === 'null' ? 'null' : 'deflate' });
}

/** Keeps v<N>.metadata.json names; renames other schemes to v1..vK in log order. */
function renameMetadataFiles(files: readonly string[]): Map<string, string> {
  const keep = files.every((f) => metadataVersionOf(baseName(f)) !== undefined);
  return new Map(files.map((f, i) => [normalizePath(f), keep ? baseName(f) : `v${i + 1}.metadata.json`]));
}

export { isLocalPath };
