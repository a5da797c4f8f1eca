import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidFileError, ValidationError } from '../../lib/errors.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { headerString, openAvroContainer, writeAvroContainer } from '../../lib/iceberg/avro.js';
import {
  type DataFile,
  type ManifestEntry,
  FileContent,
  ManifestContent,
  ManifestEntryStatus,
  ManifestWriter,
  manifestAvroSchema,
  readManifest,
  readManifestFile,
} from '../../lib/iceberg/manifest.js';
import { type ManifestFile, readManifestList } from '../../lib/iceberg/manifest-list.js';
import { type PartitionSpec, partitionSpecFromJson, partitionType } from '../../lib/iceberg/partition.js';
import { type Schema, schemaFromJson } from '../../lib/iceberg/schema.js';
import { currentSchema, currentSnapshot, parseTableMetadata, specsById, type TableMetadata } from '../../lib/iceberg/table-metadata.js';
import type { IcebergValue, Row } from '../../lib/iceberg/values.js';
import { FIXTURES, tempDir } from '../support/fixtures.js';

const io = new LocalFileIO();
const POS = 'iceberg_v2_partitioned_position_deletes';
const EQ = 'iceberg_v2_delete_equality_partitioned';
const DV = 'iceberg_v3_deletion_vectors';
const CURRENT: Record<string, string> = { [POS]: 'v3.metadata.json', [EQ]: 'v5.metadata.json', [DV]: 'v3.metadata.json' };

function table(name: string): TableMetadata {
  const path = join(FIXTURES, name, 'metadata', CURRENT[name]);
  return parseTableMetadata(readFileSync(path, 'utf8'), path);
}

/** The fixture's paths point at the warehouse it was written in; read the local copies. */
const local = (name: string, path: string): string => join(FIXTURES, name, 'metadata', basename(path));

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Every manifest of the table's current snapshot, with inheritance applied. */
async function currentEntries(name: string): Promise<{ manifest: ManifestFile; entries: ManifestEntry[] }[]> {
  const m = table(name);
  const snapshot = currentSnapshot(m);
  if (!snapshot?.manifestList) throw new Error('no current snapshot');
  const manifests = await readManifestList(io, local(name, snapshot.manifestList), m.formatVersion);
  return Promise.all(
    manifests.map(async (mf) => {
      const manifest = { ...mf, manifestPath: local(name, mf.manifestPath) };
      return { manifest, entries: await collect(readManifest(io, manifest, specsById(m), currentSchema(m))) };
    }),
  );
}

const NO_METRICS = { columnSizes: null, valueCounts: null, nullValueCounts: null, nanValueCounts: null, lowerBounds: null, upperBounds: null };

const tail = (p: string): string => p.split('/').slice(-2).join('/');

describe('reading the fixture manifests', () => {
  it('v2 position deletes: data and delete manifests, inherited sequence numbers', async () => {
    const [data, deletes] = await currentEntries(POS);
    expect(data.manifest.content).toBe(ManifestContent.Data);
    expect(
      data.entries.map((e) => [e.status, e.snapshotId, e.sequenceNumber, e.fileSequenceNumber, e.dataFile.content, tail(e.dataFile.filePath), e.dataFile.partition, e.dataFile.recordCount, e.dataFile.fileSizeInBytes]),
    ).toEqual([
      [1, 2057976186205897384n, 1n, 1n, 0, 'action=click/874b32d9a15da206-f60e01cb00000003_1034098606_data.0.parq', { action: 'click' }, 6n, 1182n],
      [1, 2057976186205897384n, 1n, 1n, 0, 'action=download/874b32d9a15da206-f60e01cb00000003_1489587766_data.0.parq', { action: 'download' }, 6n, 1203n],
      [1, 2057976186205897384n, 1n, 1n, 0, 'action=view/874b32d9a15da206-f60e01cb00000004_1711435901_data.0.parq', { action: 'view' }, 8n, 1183n],
    ]);
    const first = data.entries[0].dataFile;
    expect(first.filePath).toBe(
      '/test-warehouse/iceberg_test/hadoop_catalog/ice/iceberg_v2_partitioned_position_deletes/data/action=click/874b32d9a15da206-f60e01cb00000003_1034098606_data.0.parq',
    );
    expect([first.fileFormat, first.specId, first.sortOrderId, first.nanValueCounts, first.splitOffsets, first.firstRowId]).toEqual(['PARQUET', 0, 0, null, null, null]);
    expect([...(first.columnSizes?.keys() ?? [])]).toEqual([1, 2, 3, 4]);
    expect(first.valueCounts?.get(1)).toBe(6n);

    expect(deletes.manifest.content).toBe(ManifestContent.Deletes);
    expect(deletes.entries.map((e) => [e.sequenceNumber, e.fileSequenceNumber, e.dataFile.content, e.dataFile.partition, e.dataFile.recordCount])).toEqual([
      [2n, 2n, FileContent.PositionDeletes, { action: 'view' }, 5n],
      [2n, 2n, FileContent.PositionDeletes, { action: 'click' }, 3n],
      [2n, 2n, FileContent.PositionDeletes, { action: 'download' }, 2n],
    ]);
    // Position delete files carry metrics for file_path and pos (and the row's columns).
    expect([...(deletes.entries[0].dataFile.lowerBounds?.keys() ?? [])].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 2147483545, 2147483546]);
  });

  it('v2 equality deletes: equality_ids [2, 3], date partitions, one sequence number per commit', async () => {
    const all = await currentEntries(EQ);
    expect(all.length).toBe(8);
    const rows = all.map(({ manifest, entries }) => {
      expect(entries.length).toBe(1);
      const f = entries[0].dataFile;
      return [manifest.sequenceNumber, entries[0].sequenceNumber, f.content, f.equalityIds, f.partition, f.recordCount];
    });
    expect(rows).toEqual([
      [4n, 4n, 0, null, { d: 19716 }, 1n],
      [3n, 3n, 0, null, { d: 19715 }, 2n],
      [2n, 2n, 0, null, { d: 19716 }, 2n],
      [1n, 1n, 0, null, { d: 19715 }, 3n],
      [4n, 4n, 2, [2, 3], { d: 19716 }, 1n],
      [3n, 3n, 2, [2, 3], { d: 19715 }, 2n],
      [2n, 2n, 2, [2, 3], { d: 19716 }, 2n],
      [1n, 1n, 2, [2, 3], { d: 19715 }, 3n],
    ]);
    expect(all[4].entries[0].dataFile.splitOffsets).toEqual([4n]);
  });

  it('v3 deletion vectors: DV entries and first_row_id inheritance', async () => {
    const [data, dvs] = await currentEntries(DV);
    expect(data.manifest.firstRowId).toBe(0n);
    expect(data.entries.map((e) => [tail(e.dataFile.filePath), e.dataFile.firstRowId, e.sequenceNumber, e.dataFile.lowerBounds?.get(1)])).toEqual([
      ['data/00000-0-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet', 0n, 1n, Uint8Array.of(1, 0, 0, 0)],
      ['data/00001-1-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet', 1n, 1n, Uint8Array.of(2, 0, 0, 0)],
      ['data/00002-2-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet', 2n, 1n, Uint8Array.of(3, 0, 0, 0)],
      ['data/00003-3-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet', 3n, 1n, Uint8Array.of(4, 0, 0, 0)],
      ['data/00004-4-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet', 4n, 1n, Uint8Array.of(5, 0, 0, 0)],
    ]);
    const puffin = 'hdfs://localhost:20500/test-warehouse/iceberg_v3_deletion_vectors/data/00000-9-08e88179-85b6-4635-8b34-94b49abc87d9-00001-deletes.puffin';
    const base = {
      content: FileContent.PositionDeletes, filePath: puffin, fileFormat: 'PUFFIN', specId: 0, partition: {}, recordCount: 1n,
      fileSizeInBytes: 824n, columnSizes: null, valueCounts: null, nullValueCounts: null, nanValueCounts: null, lowerBounds: null,
      upperBounds: null, keyMetadata: null, splitOffsets: null, equalityIds: null, sortOrderId: null, firstRowId: null,
    };
    const target = (n: number): string =>
      `hdfs://localhost:20500/test-warehouse/iceberg_v3_deletion_vectors/data/0000${n}-${n}-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet`;
    expect(dvs.entries).toEqual([
      {
        status: ManifestEntryStatus.Added, snapshotId: 3685752423136077685n, sequenceNumber: 2n, fileSequenceNumber: 2n,
        dataFile: { ...base, referencedDataFile: target(3), contentOffset: 4n, contentSizeInBytes: 42n },
      },
      {
        status: 1, snapshotId: 3685752423136077685n, sequenceNumber: 2n, fileSequenceNumber: 2n,
        dataFile: { ...base, referencedDataFile: target(1), contentOffset: 46n, contentSizeInBytes: 42n },
      },
    ]);
  });

  it('reads the raw entries and header, from bytes or a stream, without inheritance', async () => {
    const path = join(FIXTURES, DV, 'metadata/5e791f63-c675-4124-8390-6bbce9e61755-m0.avro');
    const bytes = readFileSync(path);
    const m = await readManifestFile(bytes, path);
    expect([m.header.formatVersion, m.header.content, m.header.partitionSpecId, m.header.schemaId, m.header.partitionSpecJson]).toEqual([
      3, ManifestContent.Data, 0, undefined, '[]',
    ]);
    expect(m.header.schemaJson).toBe('{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"i","required":false,"type":"int"}]}');
    const raw = await collect(m.entries);
    expect(raw.map((e) => [e.sequenceNumber, e.fileSequenceNumber, e.dataFile.firstRowId])).toEqual(Array(5).fill([null, null, null]));
    async function* chunks(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < bytes.length; i += 333) yield bytes.subarray(i, i + 333);
    }
    expect(await collect((await readManifestFile(chunks(), path)).entries)).toEqual(raw);
  });

  it('reads manifests whose header lacks the Iceberg keys, typing partitions from the Avro schema', async () => {
    const path = join(FIXTURES, EQ, 'metadata/09ca0acc-c19e-4073-80f7-b476a6e568c7-m1.avro');
    const m = await readManifestFile(readFileSync(path), path);
    expect([m.header.formatVersion, m.header.content, m.header.partitionSpecId]).toEqual([undefined, undefined, undefined]);
    const [e] = await collect(m.entries);
    expect([e.dataFile.partition, e.dataFile.content, e.dataFile.equalityIds, e.dataFile.specId]).toEqual([{ d: 19715 }, 2, [2, 3], 0]);
  });

  it('names the file when a manifest is truncated, and refuses an unknown spec', async () => {
    const dir = tempDir();
    const path = join(dir, 'cut-m0.avro');
    const source = readFileSync(join(FIXTURES, DV, 'metadata/5e791f63-c675-4124-8390-6bbce9e61755-m0.avro'));
    writeFileSync(path, source.subarray(0, source.length - 40));
    const m = table(DV);
    const manifest: ManifestFile = {
      manifestPath: path, manifestLength: BigInt(source.length - 40), partitionSpecId: 0, content: 0, sequenceNumber: 1n,
      minSequenceNumber: 1n, addedSnapshotId: 1n, addedFilesCount: 5, existingFilesCount: 0, deletedFilesCount: 0,
      addedRowsCount: 5n, existingRowsCount: 0n, deletedRowsCount: 0n, firstRowId: 0n,
    };
    const err = await collect(readManifest(io, manifest, specsById(m), currentSchema(m))).catch((e: Error) => e);
    expect(err).toBeInstanceOf(InvalidFileError);
    expect((err as Error).message).toMatch(new RegExp(`^${path}: truncated Avro block 0 at offset \\d+`));
    const unknownSpec = await collect(readManifest(io, { ...manifest, partitionSpecId: 7 }, specsById(m), currentSchema(m))).catch((e: Error) => e);
    expect((unknownSpec as Error).message).toBe(`${path}: manifest uses partition spec 7, which the table does not have`);
  });
});

describe('writing manifests as Java does', () => {
  it.each([
    ['data', '5e791f63-c675-4124-8390-6bbce9e61755-m0.avro', 2700858159721908397n, ManifestContent.Data],
    ['deletes', 'e9787b6c-e745-4040-b78f-e4012aa178ab-m0.avro', 3685752423136077685n, ManifestContent.Deletes],
  ] as const)('re-writes the v3 %s manifest: Java header keys and values, identical records', async (_kind, file, snapshotId, content) => {
    const path = join(FIXTURES, DV, 'metadata', file);
    const original = readFileSync(path);
    const m = table(DV);
    const raw = await collect((await readManifestFile(original, path)).entries);
    const out = join(tempDir(), file);
    const writer = new ManifestWriter(io, out, { formatVersion: 3, spec: specsById(m).get(0) as PartitionSpec, schema: currentSchema(m), snapshotId, content });
    for (const e of raw) writer.add(e.dataFile);
    const summary = await writer.close();

    const theirs = await openAvroContainer(original, path);
    const ours = await openAvroContainer(readFileSync(out), out);
    const keys = [...theirs.header.meta.keys()];
    // Java's order, plus schema-id (the spec requires it; ManifestWriter.java leaves it out).
    expect([...ours.header.meta.keys()]).toEqual([...keys.slice(0, 3), 'schema-id', ...keys.slice(3)]);
    for (const k of keys) expect(headerString(ours.header, k), k).toBe(headerString(theirs.header, k));
    expect(headerString(ours.header, 'schema-id')).toBe('0');
    // zlib builds differ, so compare the inflated records.
    const inflated = async (r: typeof ours): Promise<Buffer> => {
      const blocks: Buffer[] = [];
      for await (const b of r.blocks()) blocks.push(b.data);
      return Buffer.concat(blocks);
    };
    expect((await inflated(ours)).equals(await inflated(theirs))).toBe(true);

    expect(summary).toEqual({
      manifestPath: out, manifestLength: BigInt(readFileSync(out).length), partitionSpecId: 0, content, sequenceNumber: null,
      minSequenceNumber: null, addedSnapshotId: snapshotId, addedFilesCount: raw.length, existingFilesCount: 0, deletedFilesCount: 0,
      addedRowsCount: BigInt(raw.length), existingRowsCount: 0n, deletedRowsCount: 0n, partitions: [], keyMetadata: null, firstRowId: null,
    });
  });

  it('summarizes partitions like the fixture list does (PartitionSummary)', async () => {
    const m = table(POS);
    const [data] = await currentEntries(POS);
    const writer = new ManifestWriter(io, join(tempDir(), 'm.avro'), {
      formatVersion: 2, spec: specsById(m).get(0) as PartitionSpec, schema: currentSchema(m), snapshotId: 2057976186205897384n,
    });
    for (const e of data.entries) writer.existing(e);
    const summary = await writer.close();
    expect(summary.partitions).toEqual(data.manifest.partitions);
    expect([summary.existingFilesCount, summary.existingRowsCount, summary.minSequenceNumber]).toEqual([3, 20n, 1n]);
  });
});

// ---------------------------------------------------------------------------
// A table with a partition field of every kind, for the writer's own round trips.

const SCHEMA: Schema = schemaFromJson({
  type: 'struct',
  'schema-id': 3,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'n', required: false, type: 'int' },
    { id: 3, name: 's', required: false, type: 'string' },
    { id: 4, name: 'd', required: false, type: 'date' },
    { id: 5, name: 'ts', required: false, type: 'timestamptz' },
    { id: 6, name: 'x', required: false, type: 'double' },
    { id: 7, name: 'price', required: false, type: 'decimal(10, 2)' },
    { id: 8, name: 'u', required: false, type: 'uuid' },
    { id: 9, name: 'b', required: false, type: 'binary' },
    { id: 10, name: 'flag', required: false, type: 'boolean' },
    { id: 11, name: 'fx', required: false, type: 'fixed[4]' },
  ],
});
const field = (name: string, transform: string, source: number, id: number): Record<string, unknown> => ({
  name, transform, 'source-id': source, 'field-id': id,
});
const SPEC: PartitionSpec = partitionSpecFromJson({
  'spec-id': 2,
  fields: [
    field('id_bucket', 'bucket[8]', 1, 1000), field('n', 'identity', 2, 1001), field('s_trunc', 'truncate[4]', 3, 1002),
    field('d', 'identity', 4, 1003), field('ts_day', 'day', 5, 1004), field('x', 'identity', 6, 1005),
    field('price', 'identity', 7, 1006), field('u', 'identity', 8, 1007), field('b', 'identity', 9, 1008),
    field('flag', 'identity', 10, 1009), field('fx', 'identity', 11, 1010), field('id', 'identity', 1, 1011),
    field('a.b c', 'identity', 2, 1012),
  ],
});
const SPECS = new Map([[2, SPEC]]);

const long = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const nat64 = fc.bigInt({ min: 0n, max: 2n ** 63n - 1n });
const opt = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(a, { nil: null });
const bytes = (max: number): fc.Arbitrary<Uint8Array> => fc.uint8Array({ maxLength: max }).map((b) => new Uint8Array(b));
const idMap = <T>(v: fc.Arbitrary<T>): fc.Arbitrary<Map<number, T> | null> =>
  opt(fc.uniqueArray(fc.tuple(fc.integer({ min: 1, max: 2147483647 }), v), { selector: (t) => t[0], maxLength: 6 }).map((a) => new Map(a)));

const partition: fc.Arbitrary<Row> = fc.record({
  id_bucket: opt(fc.integer({ min: 0, max: 7 })),
  n: opt(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
  s_trunc: opt(fc.string({ maxLength: 4 })),
  d: opt(fc.integer({ min: -1_000_000, max: 1_000_000 })),
  ts_day: opt(fc.integer({ min: -1_000_000, max: 1_000_000 })),
  x: opt(fc.double()),
  price: opt(fc.bigInt({ min: -(10n ** 10n) + 1n, max: 10n ** 10n - 1n })),
  u: opt(fc.uuid()),
  b: opt(bytes(12)),
  flag: opt(fc.boolean()),
  fx: opt(bytes(4).filter((b) => b.length === 4)),
  id: opt(long),
  'a.b c': opt(fc.integer({ min: -5, max: 5 })),
}) as fc.Arbitrary<Row>;

function dataFileArb(content: FileContent): fc.Arbitrary<DataFile> {
  return fc.record({
    content: fc.constant(content),
    filePath: fc.string({ minLength: 1, maxLength: 80 }),
    fileFormat: fc.constantFrom('PARQUET' as const, 'AVRO' as const, 'ORC' as const, 'PUFFIN' as const),
    specId: fc.constant(2),
    partition,
    recordCount: nat64,
    fileSizeInBytes: nat64,
    columnSizes: idMap(nat64),
    valueCounts: idMap(nat64),
    nullValueCounts: idMap(nat64),
    nanValueCounts: idMap(nat64),
    lowerBounds: idMap(bytes(16)),
    upperBounds: idMap(bytes(16)),
    keyMetadata: opt(bytes(8)),
    splitOffsets: opt(fc.array(nat64, { maxLength: 3 })),
    equalityIds: content === FileContent.EqualityDeletes ? fc.array(fc.integer({ min: 1, max: 11 }), { minLength: 1, maxLength: 3 }) : fc.constant(null),
    sortOrderId: opt(fc.integer({ min: 0, max: 5 })),
    firstRowId: content === FileContent.Data ? opt(nat64) : fc.constant(null),
    referencedDataFile: content === FileContent.Data ? fc.constant(null) : opt(fc.string({ maxLength: 40 })),
    contentOffset: content === FileContent.PositionDeletes ? opt(nat64) : fc.constant(null),
    contentSizeInBytes: content === FileContent.PositionDeletes ? opt(nat64) : fc.constant(null),
  });
}

type Op = { kind: 'add'; file: DataFile; seq: bigint | null } | { kind: 'existing' | 'delete'; entry: ManifestEntry };

function opArb(content: FileContent): fc.Arbitrary<Op> {
  const file = dataFileArb(content);
  return fc.oneof(
    fc.record({ kind: fc.constant('add' as const), file, seq: opt(nat64) }),
    fc.record({
      kind: fc.constantFrom('existing' as const, 'delete' as const),
      entry: fc.record({
        status: fc.constant(0 as const),
        snapshotId: nat64,
        sequenceNumber: nat64,
        fileSequenceNumber: opt(nat64),
        dataFile: file,
      }),
    }),
  );
}

/** What reading gives back for an entry the writer was handed. */
function expectedEntry(op: Op, v: 2 | 3, writerSnapshot: bigint): ManifestEntry {
  const file = op.kind === 'add' ? op.file : op.entry.dataFile;
  const dataFile: DataFile = {
    ...file,
    firstRowId: v === 3 ? (file.firstRowId ?? null) : null,
    referencedDataFile: v === 2 || file.content === FileContent.PositionDeletes ? (file.referencedDataFile ?? null) : null,
    contentOffset: v === 3 ? (file.contentOffset ?? null) : null,
    contentSizeInBytes: v === 3 ? (file.contentSizeInBytes ?? null) : null,
  };
  if (op.kind === 'add') return { status: 1, snapshotId: writerSnapshot, sequenceNumber: op.seq, fileSequenceNumber: null, dataFile };
  if (op.kind === 'existing') return { ...op.entry, status: 0, dataFile };
  return { ...op.entry, status: 2, snapshotId: writerSnapshot, dataFile };
}

describe('manifest round trips', () => {
  it('writes and reads back random entries, v2 and v3, data and delete manifests', async () => {
    const dir = tempDir();
    let n = 0;
    const arb = fc
      .tuple(fc.constantFrom(2 as const, 3 as const), fc.constantFrom(FileContent.Data, FileContent.PositionDeletes, FileContent.EqualityDeletes))
      .chain(([v, content]) => fc.tuple(fc.constant(v), fc.constant(content), fc.array(opArb(content), { maxLength: 8 }), nat64));
    await fc.assert(
      fc.asyncProperty(arb, async ([v, content, ops, snapshotId]) => {
        const path = join(dir, `m${n++}.avro`);
        const manifestContent = content === FileContent.Data ? ManifestContent.Data : ManifestContent.Deletes;
        const writer = new ManifestWriter(io, path, { formatVersion: v, spec: SPEC, schema: SCHEMA, snapshotId, content: manifestContent });
        for (const op of ops) {
          if (op.kind === 'add') writer.add(op.file, op.seq);
          else if (op.kind === 'existing') writer.existing(op.entry);
          else writer.delete(op.entry);
        }
        const summary = await writer.close();
        const m = await readManifestFile(readFileSync(path), path, { partitionType: partitionType(SPEC, SCHEMA) });
        expect(await collect(m.entries)).toEqual(ops.map((op) => expectedEntry(op, v, snapshotId)));
        // Without metrics a data manifest skips them in the decoder; a delete manifest keeps them.
        const lean = await readManifestFile(readFileSync(path), path, { partitionType: partitionType(SPEC, SCHEMA), dataFileStats: false });
        expect(await collect(lean.entries)).toEqual(
          ops.map((op) => {
            const e = expectedEntry(op, v, snapshotId);
            return e.dataFile.content !== FileContent.Data ? e : { ...e, dataFile: { ...e.dataFile, ...NO_METRICS } };
          }),
        );
        expect([m.header.formatVersion, m.header.content, m.header.partitionSpecId, m.header.schemaId]).toEqual([v, manifestContent, 2, 3]);
        expect(summary.addedFilesCount).toBe(ops.filter((o) => o.kind === 'add').length);
        expect(summary.deletedRowsCount).toBe(
          ops.reduce((s, o) => s + (o.kind === 'delete' ? o.entry.dataFile.recordCount : 0n), 0n),
        );
      }),
      { numRuns: 120 },
    );
  });

  it('keeps partition values of every type and writes their summaries per Appendix D', async () => {
    const path = join(tempDir(), 'p.avro');
    const base = { content: FileContent.Data, fileFormat: 'PARQUET', specId: 2, recordCount: 1n, fileSizeInBytes: 10n } as const;
    const p1: Row = {
      id_bucket: 3, n: -5, s_trunc: 'abcd', d: -1, ts_day: 19000, x: -0, price: -12345n, u: 'ffffffff-0000-0000-0000-000000000001',
      b: Uint8Array.of(1, 2), flag: false, fx: Uint8Array.of(9, 9, 9, 9), id: 2n ** 62n, 'a.b c': 1,
    };
    const p2: Row = {
      id_bucket: 0, n: 7, s_trunc: 'abc', d: 5, ts_day: null, x: Number.NaN, price: 99n, u: '00000000-0000-0000-0000-000000000002',
      b: Uint8Array.of(1), flag: true, fx: null, id: -1n, 'a.b c': null,
    };
    const p3: Row = { ...p2, x: 0, n: null };
    const writer = new ManifestWriter(io, path, { formatVersion: 3, spec: SPEC, schema: SCHEMA, snapshotId: 1n });
    [p1, p2, p3].forEach((partition, i) => writer.add({ ...base, filePath: `f${i}`, partition }));
    const summary = await writer.close();
    const got = await collect((await readManifestFile(readFileSync(path), path, { partitionType: partitionType(SPEC, SCHEMA) })).entries);
    expect(got.map((e) => e.dataFile.partition)).toEqual([p1, p2, p3]);
    const hex = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b).toString('hex'));
    expect(summary.partitions?.map((s) => [s.containsNull, s.containsNan, hex(s.lowerBound), hex(s.upperBound)])).toEqual([
      [false, false, '00000000', '03000000'], // id_bucket: int
      [true, false, 'fbffffff', '07000000'], // n
      [false, false, '616263', '61626364'], // s_trunc: "abc" < "abcd"
      [false, false, 'ffffffff', '05000000'], // d: date
      [true, false, '384a0000', '384a0000'], // ts_day: 19000 days
      [false, true, '0000000000000080', '0000000000000000'], // x: -0.0 < +0.0, NaN flagged
      [false, false, 'cfc7', '63'], // price: minimal two's complement
      // u: Java's UUID.compareTo is signed, so ffffffff-… sorts first.
      [false, false, 'ffffffff000000000000000000000001', '00000000000000000000000000000002'],
      [false, false, '01', '0102'], // b
      [false, false, '00', '01'], // flag
      [true, false, '09090909', '09090909'], // fx
      [false, false, 'ffffffffffffffff', '0000000000000040'], // id: long
      [true, false, '01000000', '01000000'], // "a.b c" (Avro name a_x2Eb_x20c)
    ]);
    expect(headerString((await openAvroContainer(readFileSync(path), path)).header, 'avro.schema')).toContain(
      '{"name":"a_x2Eb_x20c","type":["null","int"],"default":null,"iceberg-field-name":"a.b c","field-id":1012}',
    );
  });

  it('refuses entries that break the rules, naming the manifest', () => {
    const path = '/t/metadata/w-m0.avro';
    const file: DataFile = {
      content: FileContent.Data, filePath: 'a.parquet', fileFormat: 'PARQUET', specId: 2, partition: {}, recordCount: 1n, fileSizeInBytes: 1n,
    };
    const writer = new ManifestWriter(io, path, { formatVersion: 2, spec: SPEC, schema: SCHEMA, snapshotId: 9n });
    const entry: ManifestEntry = { status: 0, snapshotId: 9n, sequenceNumber: null, fileSequenceNumber: null, dataFile: file };
    expect(() => writer.existing(entry)).toThrow(
      new ValidationError('Only entries with status ADDED can have null sequence number: a.parquet', { path }),
    );
    expect(() => writer.existing({ ...entry, snapshotId: 3n })).toThrow(
      new ValidationError('Found unassigned sequence number for an entry from snapshot: 3', { path }),
    );
    expect(() => writer.existing({ ...entry, snapshotId: null, sequenceNumber: 1n })).toThrow(
      `${path}: Cannot write an EXISTING entry without a snapshot id: a.parquet`,
    );
    expect(() => writer.add({ ...file, specId: 0 })).toThrow(`${path}: a.parquet has partition spec 0, but this manifest holds spec 2`);
    expect(() => writer.add({ ...file, content: FileContent.EqualityDeletes })).toThrow(`${path}: a.parquet has content 2, which a data manifest cannot hold`);
    expect(() => writer.add({ ...file, partition: { n: 'seven' } as Row })).toThrow(ValidationError);
    expect(() => writer.add({ ...file, recordCount: 5 as unknown as bigint })).toThrow(/^\/t\/metadata\/w-m0\.avro: cannot write the entry of a\.parquet: invalid "long": 5/);
    expect(writer.entryCount).toBe(0);
    expect(() => new ManifestWriter(io, path, { formatVersion: 1, spec: SPEC, schema: SCHEMA, snapshotId: 9n, content: 1 })).toThrow(
      `${path}: Cannot write delete manifests in a v1 table`,
    );
  });
});

describe('inheritance on read (InheritableMetadataFactory, ManifestReader.idAssigner)', () => {
  const file = (name: string, recordCount: bigint, firstRowId: bigint | null = null): DataFile => ({
    content: FileContent.Data, filePath: name, fileFormat: 'PARQUET', specId: 2, partition: {}, recordCount, fileSizeInBytes: 100n, firstRowId,
  });

  async function written(v: 1 | 2 | 3): Promise<ManifestFile> {
    const writer = new ManifestWriter(io, join(tempDir(), 'i.avro'), { formatVersion: v, spec: SPEC, schema: SCHEMA, snapshotId: 77n });
    writer.add(file('added', 10n));
    writer.existing({ status: 0, snapshotId: 5n, sequenceNumber: 3n, fileSequenceNumber: 3n, dataFile: file('existing', 7n, 500n) });
    writer.delete({ status: 0, snapshotId: 5n, sequenceNumber: 2n, fileSequenceNumber: 2n, dataFile: file('deleted', 100n) });
    writer.add(file('added-with-seq', 5n), 4n);
    writer.existing({ status: 0, snapshotId: 6n, sequenceNumber: 1n, fileSequenceNumber: null, dataFile: file('pre-v3', 20n) });
    return writer.close();
  }

  const read = async (mf: ManifestFile): Promise<unknown[]> =>
    (await collect(readManifest(io, mf, SPECS, SCHEMA))).map((e) => [e.dataFile.filePath, e.status, e.snapshotId, e.sequenceNumber, e.fileSequenceNumber, e.dataFile.firstRowId]);

  it('v3: sequence numbers only for ADDED, row ids for every live file without one', async () => {
    const mf = await written(3);
    expect(mf.minSequenceNumber).toBe(1n);
    expect(await read({ ...mf, sequenceNumber: 9n, firstRowId: 1000n })).toEqual([
      ['added', 1, 77n, 9n, 9n, 1000n],
      ['existing', 0, 5n, 3n, 3n, 500n],
      ['deleted', 2, 77n, 2n, 2n, null],
      ['added-with-seq', 1, 77n, 4n, 9n, 1010n],
      ['pre-v3', 0, 6n, 1n, null, 1015n],
    ]);
    // A manifest without first_row_id (written before the upgrade): no row ids at all.
    expect((await read({ ...mf, sequenceNumber: 9n, firstRowId: null })).map((r) => (r as unknown[])[5])).toEqual([null, null, null, null, null]);
    // Not yet in a manifest list: nothing but the snapshot id is inherited.
    expect((await read(mf)).map((r) => (r as unknown[]).slice(3))).toEqual([
      [null, null, null], [3n, 3n, 500n], [2n, 2n, null], [4n, null, null], [1n, null, null],
    ]);
  });

  it('v1: sequence number 0 for every entry', async () => {
    const mf = await written(1);
    const path = mf.manifestPath;
    const header = (await openAvroContainer(readFileSync(path), path)).header;
    expect([...header.meta.keys()]).toEqual(['schema', 'avro.schema', 'avro.codec', 'schema-id', 'format-version', 'partition-spec-id', 'iceberg.schema', 'partition-spec']);
    expect(headerString(header, 'avro.schema')).toContain('{"name":"block_size_in_bytes","type":"long","field-id":105}');
    expect(await read({ ...mf, sequenceNumber: 0n, minSequenceNumber: 0n })).toEqual([
      ['added', 1, 77n, 0n, 0n, null],
      ['existing', 0, 5n, 0n, 0n, null],
      ['deleted', 2, 77n, 0n, 0n, null],
      ['added-with-seq', 1, 77n, 0n, 0n, null],
      ['pre-v3', 0, 6n, 0n, 0n, null],
    ]);
  });

  it('a null snapshot_id takes the manifest added_snapshot_id, whatever the status', async () => {
    const path = join(tempDir(), 'n.avro');
    const ptype = partitionType(SPEC, SCHEMA);
    const df = (p: string): Record<string, unknown> => ({
      content: 0, file_path: p, file_format: 'PARQUET', partition: Object.fromEntries(ptype.fields.map((f) => [f.name.replace(/[. ]/g, (c) => (c === '.' ? '_x2E' : '_x20')), null])),
      record_count: 1n, file_size_in_bytes: 1n, column_sizes: null, value_counts: null, null_value_counts: null, nan_value_counts: null,
      lower_bounds: null, upper_bounds: null, key_metadata: null, split_offsets: null, equality_ids: null, sort_order_id: null, referenced_data_file: null,
    });
    const bytesOut = writeAvroContainer(manifestAvroSchema(2, ptype), [
      { status: 0, snapshot_id: null, sequence_number: 1n, file_sequence_number: 1n, data_file: df('e') },
      { status: 2, snapshot_id: null, sequence_number: 1n, file_sequence_number: 1n, data_file: df('d') },
    ]);
    writeFileSync(path, bytesOut);
    const mf: ManifestFile = {
      manifestPath: path, manifestLength: BigInt(bytesOut.length), partitionSpecId: 2, content: 0, sequenceNumber: 4n, minSequenceNumber: 1n,
      addedSnapshotId: 123456789012345678n, addedFilesCount: 0, existingFilesCount: 1, deletedFilesCount: 1, addedRowsCount: 0n,
      existingRowsCount: 1n, deletedRowsCount: 1n,
    };
    expect(await read(mf)).toEqual([
      ['e', 0, 123456789012345678n, 1n, 1n, null],
      ['d', 2, 123456789012345678n, 1n, 1n, null],
    ]);
  });

  it('streams a large manifest in range reads', async () => {
    const writer = new ManifestWriter(io, join(tempDir(), 'big.avro'), { formatVersion: 3, spec: SPEC, schema: SCHEMA, snapshotId: 1n });
    for (let i = 0; i < 2000; i++) writer.add({ ...file(`f${i}`, BigInt(i)), partition: { n: i, s_trunc: `s${i % 7}` } as Row as Record<string, IcebergValue> });
    const mf = { ...(await writer.close()), sequenceNumber: 1n, firstRowId: 0n };
    expect(mf.manifestLength).toBeGreaterThan(20_000n);
    const whole = await collect(readManifest(io, mf, SPECS, SCHEMA));
    const ranged = await collect(readManifest(io, mf, SPECS, SCHEMA, { chunkSize: 1000 }));
    expect(ranged).toEqual(whole);
    expect(whole.length).toBe(2000);
    expect(whole[1999].dataFile.firstRowId).toBe((1998n * 1999n) / 2n);
  });
});
