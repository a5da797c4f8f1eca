import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidFileError, ValidationError } from '../../lib/errors.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { headerString, openAvroContainer } from '../../lib/iceberg/avro.js';
import {
  type ManifestFile,
  ManifestContent,
  encodeManifestList,
  manifestListType,
  readManifestList,
  readManifestListFile,
  writeManifestList,
} from '../../lib/iceberg/manifest-list.js';
import { FIXTURES, tempDir } from '../support/fixtures.js';

const io = new LocalFileIO();

const list = (table: string, file: string): string => join(FIXTURES, table, 'metadata', file);
const POS = 'iceberg_v2_partitioned_position_deletes';
const EQ = 'iceberg_v2_delete_equality_partitioned';
const DV = 'iceberg_v3_deletion_vectors';

/** [manifest file name, content, sequence number, added snapshot, added files, added rows, first_row_id] */
type Row = [string, number, bigint, bigint, number, bigint, bigint | null];
const EQ_S1 = 3217166167862484560n;
const EQ_S2 = 7564375228633944060n;
const EQ_S3 = 3979814664665937114n;
const EQ_S4 = 4821964189199835313n;

const EXPECTED: Record<string, [string, Row[]]> = {
  'v2 position deletes, snapshot 1': [
    list(POS, 'snap-2057976186205897384-1-771485e9-78ac-4ffc-b1ef-1fda5bab33cf.avro'),
    [['771485e9-78ac-4ffc-b1ef-1fda5bab33cf-m0.avro', 0, 1n, 2057976186205897384n, 3, 20n, null]],
  ],
  'v2 position deletes, snapshot 2': [
    list(POS, 'snap-8885697082976537578-1-464c179e-c9ba-40f5-a35f-144106a1f16c.avro'),
    [
      ['771485e9-78ac-4ffc-b1ef-1fda5bab33cf-m0.avro', 0, 1n, 2057976186205897384n, 3, 20n, null],
      ['464c179e-c9ba-40f5-a35f-144106a1f16c-m0.avro', 1, 2n, 8885697082976537578n, 3, 10n, null],
    ],
  ],
  'v2 equality deletes, snapshot 1': [
    list(EQ, 'snap-3217166167862484560-1-db5041df-259d-48b9-ade1-1bf382a93d5a.avro'),
    [
      ['db5041df-259d-48b9-ade1-1bf382a93d5a-m0.avro', 0, 1n, EQ_S1, 1, 3n, null],
      ['db5041df-259d-48b9-ade1-1bf382a93d5a-m1.avro', 1, 1n, EQ_S1, 1, 3n, null],
    ],
  ],
  'v2 equality deletes, snapshot 2': [
    list(EQ, 'snap-7564375228633944060-1-57f8cd32-619c-46fc-a683-1dee7473c990.avro'),
    [
      ['57f8cd32-619c-46fc-a683-1dee7473c990-m0.avro', 0, 2n, EQ_S2, 1, 2n, null],
      ['db5041df-259d-48b9-ade1-1bf382a93d5a-m0.avro', 0, 1n, EQ_S1, 1, 3n, null],
      ['57f8cd32-619c-46fc-a683-1dee7473c990-m1.avro', 1, 2n, EQ_S2, 1, 2n, null],
      ['db5041df-259d-48b9-ade1-1bf382a93d5a-m1.avro', 1, 1n, EQ_S1, 1, 3n, null],
    ],
  ],
  'v2 equality deletes, snapshot 3': [
    list(EQ, 'snap-3979814664665937114-1-09ca0acc-c19e-4073-80f7-b476a6e568c7.avro'),
    [
      ['09ca0acc-c19e-4073-80f7-b476a6e568c7-m0.avro', 0, 3n, EQ_S3, 1, 2n, null],
      ['57f8cd32-619c-46fc-a683-1dee7473c990-m0.avro', 0, 2n, EQ_S2, 1, 2n, null],
      ['db5041df-259d-48b9-ade1-1bf382a93d5a-m0.avro', 0, 1n, EQ_S1, 1, 3n, null],
      ['09ca0acc-c19e-4073-80f7-b476a6e568c7-m1.avro', 1, 3n, EQ_S3, 1, 2n, null],
      ['57f8cd32-619c-46fc-a683-1dee7473c990-m1.avro', 1, 2n, EQ_S2, 1, 2n, null],
      ['db5041df-259d-48b9-ade1-1bf382a93d5a-m1.avro', 1, 1n, EQ_S1, 1, 3n, null],
    ],
  ],
  'v2 equality deletes, snapshot 4': [
    list(EQ, 'snap-4821964189199835313-1-e3dac70e-a8aa-4d15-9d35-20c4f25f36d5.avro'),
    [
      ['e3dac70e-a8aa-4d15-9d35-20c4f25f36d5-m0.avro', 0, 4n, EQ_S4, 1, 1n, null],
      ['09ca0acc-c19e-4073-80f7-b476a6e568c7-m0.avro', 0, 3n, EQ_S3, 1, 2n, null],
      ['57f8cd32-619c-46fc-a683-1dee7473c990-m0.avro', 0, 2n, EQ_S2, 1, 2n, null],
      ['db5041df-259d-48b9-ade1-1bf382a93d5a-m0.avro', 0, 1n, EQ_S1, 1, 3n, null],
      ['e3dac70e-a8aa-4d15-9d35-20c4f25f36d5-m1.avro', 1, 4n, EQ_S4, 1, 1n, null],
      ['09ca0acc-c19e-4073-80f7-b476a6e568c7-m1.avro', 1, 3n, EQ_S3, 1, 2n, null],
      ['57f8cd32-619c-46fc-a683-1dee7473c990-m1.avro', 1, 2n, EQ_S2, 1, 2n, null],
      ['db5041df-259d-48b9-ade1-1bf382a93d5a-m1.avro', 1, 1n, EQ_S1, 1, 3n, null],
    ],
  ],
  'v3 deletion vectors, snapshot 1': [
    list(DV, 'snap-2700858159721908397-1-5e791f63-c675-4124-8390-6bbce9e61755.avro'),
    [['5e791f63-c675-4124-8390-6bbce9e61755-m0.avro', 0, 1n, 2700858159721908397n, 5, 5n, 0n]],
  ],
  'v3 deletion vectors, snapshot 2': [
    list(DV, 'snap-3685752423136077685-1-e9787b6c-e745-4040-b78f-e4012aa178ab.avro'),
    [
      ['5e791f63-c675-4124-8390-6bbce9e61755-m0.avro', 0, 1n, 2700858159721908397n, 5, 5n, 0n],
      ['e9787b6c-e745-4040-b78f-e4012aa178ab-m0.avro', 1, 2n, 3685752423136077685n, 2, 2n, null],
    ],
  ],
};

const DV_LIST_2 = EXPECTED['v3 deletion vectors, snapshot 2'][0];

describe('reading the fixture manifest lists', () => {
  it.each(Object.entries(EXPECTED))('%s', async (_name, [path, rows]) => {
    const manifests = await readManifestList(io, path, path.includes('v3') ? 3 : 2);
    expect(
      manifests.map((m) => [basename(m.manifestPath), m.content, m.sequenceNumber, m.addedSnapshotId, m.addedFilesCount, m.addedRowsCount, m.firstRowId]),
    ).toEqual(rows);
    for (const m of manifests) {
      // Every fixture manifest was added once and never rewritten.
      expect(m.minSequenceNumber).toBe(m.sequenceNumber);
      expect([m.existingFilesCount, m.deletedFilesCount, m.existingRowsCount, m.deletedRowsCount]).toEqual([0, 0, 0n, 0n]);
      expect(m.partitionSpecId).toBe(0);
      expect(m.keyMetadata).toBe(null);
    }
  });

  it('finds fields by id when an older writer named them differently (added_data_files_count)', async () => {
    const path = EXPECTED['v2 position deletes, snapshot 2'][0];
    const { header, manifests } = await readManifestListFile(readFileSync(path), path);
    expect(headerString(header, 'avro.schema')).toContain('"name":"added_data_files_count"');
    expect(manifests[1]).toEqual({
      manifestPath: '/test-warehouse/iceberg_test/hadoop_catalog/ice/iceberg_v2_partitioned_position_deletes/metadata/464c179e-c9ba-40f5-a35f-144106a1f16c-m0.avro',
      manifestLength: 5766n,
      partitionSpecId: 0,
      content: ManifestContent.Deletes,
      sequenceNumber: 2n,
      minSequenceNumber: 2n,
      addedSnapshotId: 8885697082976537578n,
      addedFilesCount: 3,
      existingFilesCount: 0,
      deletedFilesCount: 0,
      addedRowsCount: 10n,
      existingRowsCount: 0n,
      deletedRowsCount: 0n,
      partitions: [
        { containsNull: false, containsNan: false, lowerBound: new Uint8Array(Buffer.from('click')), upperBound: new Uint8Array(Buffer.from('view')) },
      ],
      keyMetadata: null,
      firstRowId: null,
    });
  });

  it('reads date partition bounds and the v3 manifest lengths', async () => {
    const [, eq] = EXPECTED['v2 equality deletes, snapshot 2'];
    const manifests = await readManifestList(io, EXPECTED['v2 equality deletes, snapshot 2'][0]);
    expect(manifests.length).toBe(eq.length);
    expect(manifests[0].partitions).toEqual([
      { containsNull: false, containsNan: false, lowerBound: Uint8Array.of(0x04, 0x4d, 0, 0), upperBound: Uint8Array.of(0x04, 0x4d, 0, 0) },
    ]);
    const v3 = await readManifestList(io, DV_LIST_2, 3);
    expect(v3.map((m) => m.manifestLength)).toEqual([7847n, 7840n]);
    expect(v3.map((m) => m.partitions)).toEqual([[], []]);
  });

  it('names the file when it is not a manifest list', async () => {
    const dir = tempDir();
    const path = join(dir, 'snap-1.avro');
    writeFileSync(path, readFileSync(DV_LIST_2).subarray(0, 2000));
    await expect(readManifestList(io, path)).rejects.toThrow(new InvalidFileError('truncated Avro header', { path }));
  });
});

describe('writing manifest lists as ManifestListWriter does', () => {
  it('re-encodes the v3 fixture list: identical header bytes and identical records', async () => {
    const original = readFileSync(DV_LIST_2);
    const read = await readManifestListFile(original, DV_LIST_2, 3);
    const encoded = encodeManifestList(
      {
        formatVersion: 3,
        snapshotId: 3685752423136077685n,
        parentSnapshotId: 2700858159721908397n,
        sequenceNumber: 2n,
        firstRowId: 5n,
        syncMarker: read.header.syncMarker,
      },
      read.manifests,
      'new.avro',
    );
    const ours = Buffer.from(encoded.bytes);
    const headerLength = read.header.length;
    expect(ours.subarray(0, headerLength).equals(original.subarray(0, headerLength))).toBe(true);
    // One block each; zlib builds differ, so compare the inflated records.
    const block = (b: Buffer): Buffer => inflateRawSync(b.subarray(headerLength + 3, b.length - 16));
    expect(block(ours).equals(block(original))).toBe(true);
    expect(encoded.nextRowId).toBe(5n);
    expect(encoded.addedRows).toBe(0n);
    expect((await readManifestListFile(ours, 'new.avro')).manifests).toEqual(read.manifests);
  });

  it('writes v2 lists with the v2 schema and header keys in Java order', async () => {
    const path = EXPECTED['v2 equality deletes, snapshot 4'][0];
    const manifests = await readManifestList(io, path, 2);
    const dir = tempDir();
    const out = join(dir, 'snap-4821964189199835313-1-x.avro');
    const written = await writeManifestList(io, out, { formatVersion: 2, snapshotId: EQ_S4, parentSnapshotId: EQ_S3, sequenceNumber: 4n }, manifests);
    expect(written.nextRowId).toBe(null);
    expect(written.manifests).toEqual(manifests);
    const reader = await openAvroContainer(readFileSync(out), out);
    expect([...reader.header.meta.keys()]).toEqual([
      'avro.schema', 'avro.codec', 'snapshot-id', 'format-version', 'sequence-number', 'iceberg.schema', 'parent-snapshot-id',
    ]);
    expect(headerString(reader.header, 'parent-snapshot-id')).toBe(String(EQ_S3));
    expect(headerString(reader.header, 'avro.codec')).toBe('deflate');
    expect(headerString(reader.header, 'avro.schema')).not.toContain('first_row_id');
    expect(await readManifestList(io, out, 2)).toEqual(manifests);
  });

  const fresh = (over: Partial<ManifestFile>): ManifestFile => ({
    manifestPath: 's3://b/t/metadata/new-m0.avro',
    manifestLength: 1234n,
    partitionSpecId: 0,
    content: ManifestContent.Data,
    sequenceNumber: null,
    minSequenceNumber: null,
    addedSnapshotId: 99n,
    addedFilesCount: 1,
    existingFilesCount: 0,
    deletedFilesCount: 0,
    addedRowsCount: 10n,
    existingRowsCount: 0n,
    deletedRowsCount: 0n,
    partitions: [],
    keyMetadata: null,
    firstRowId: null,
    ...over,
  });

  it("gives new manifests the commit's sequence number and keeps assigned ones", () => {
    const out = encodeManifestList(
      { formatVersion: 2, snapshotId: 99n, parentSnapshotId: null, sequenceNumber: 7n },
      [fresh({}), fresh({ minSequenceNumber: 3n }), fresh({ sequenceNumber: 5n, minSequenceNumber: 4n, addedSnapshotId: 42n })],
      'l.avro',
    );
    expect(out.manifests.map((m) => [m.sequenceNumber, m.minSequenceNumber])).toEqual([[7n, 7n], [7n, 3n], [5n, 4n]]);
    expect(() =>
      encodeManifestList({ formatVersion: 2, snapshotId: 99n, parentSnapshotId: null, sequenceNumber: 7n }, [fresh({ addedSnapshotId: 42n })], 'l.avro'),
    ).toThrow(new ValidationError('Found unassigned sequence number for a manifest from snapshot: 42', { path: 'l.avro' }));
  });

  it('assigns v3 first_row_id as the spec example does (ManifestListWriter.V3Writer)', () => {
    const existing = fresh({ manifestPath: 'existing', sequenceNumber: 3n, minSequenceNumber: 3n, addedSnapshotId: 1n, addedRowsCount: 75n, firstRowId: 925n });
    const added1 = fresh({ manifestPath: 'added1', addedRowsCount: 100n, existingRowsCount: 25n });
    const added2 = fresh({ manifestPath: 'added2', addedRowsCount: 0n, existingRowsCount: 100n });
    const deletes = fresh({ manifestPath: 'deletes', content: ManifestContent.Deletes, firstRowId: 7n });
    const added3 = fresh({ manifestPath: 'added3', addedRowsCount: 125n, existingRowsCount: 25n });
    const out = encodeManifestList(
      { formatVersion: 3, snapshotId: 99n, parentSnapshotId: 1n, sequenceNumber: 4n, firstRowId: 1000n },
      [existing, added1, added2, deletes, added3],
      'l.avro',
    );
    expect(out.manifests.map((m) => [m.manifestPath, m.firstRowId])).toEqual([
      ['existing', 925n], ['added1', 1000n], ['added2', 1125n], ['deletes', null], ['added3', 1225n],
    ]);
    expect(out.nextRowId).toBe(1375n);
    expect(out.addedRows).toBe(375n);
  });

  it('refuses a v3 list without first-row-id, counts of null in v2+, and delete manifests in v1', () => {
    const base = { snapshotId: 99n, parentSnapshotId: null, sequenceNumber: 1n };
    expect(() => encodeManifestList({ ...base, formatVersion: 3 }, [], 'l.avro')).toThrow(ValidationError);
    expect(() => encodeManifestList({ ...base, formatVersion: 2 }, [fresh({ addedFilesCount: null })], 'l.avro')).toThrow(
      'l.avro: Cannot write added_files_count of null for manifest s3://b/t/metadata/new-m0.avro in a v2+ manifest list',
    );
    expect(() => encodeManifestList({ ...base, formatVersion: 1 }, [fresh({ content: ManifestContent.Deletes })], 'l.avro')).toThrow(
      'l.avro: Cannot store delete manifests in a v1 table',
    );
  });

  it('reads v1 lists with content 0 and sequence numbers 0', async () => {
    const v1 = encodeManifestList(
      { formatVersion: 1, snapshotId: 5n, parentSnapshotId: null, sequenceNumber: 0n },
      [fresh({ addedSnapshotId: 5n, addedFilesCount: null, addedRowsCount: null })],
      'v1.avro',
    );
    const { header, manifests } = await readManifestListFile(v1.bytes, 'v1.avro', 1);
    expect([...header.meta.keys()]).toEqual(['avro.schema', 'avro.codec', 'snapshot-id', 'format-version', 'iceberg.schema', 'parent-snapshot-id']);
    expect(manifestListType(1).fields.map((f) => f.id)).toEqual([500, 501, 502, 503, 504, 505, 506, 507, 512, 513, 514, 519]);
    expect(manifests).toEqual([
      { ...fresh({ addedSnapshotId: 5n, addedFilesCount: null, addedRowsCount: null }), sequenceNumber: 0n, minSequenceNumber: 0n },
    ]);
  });

  it('round-trips random manifest lists, v2 and v3, with snapshot ids beyond 2^53', async () => {
    const long = fc.bigInt({ min: 0n, max: 2n ** 63n - 1n });
    const bytes = fc.option(fc.uint8Array({ minLength: 0, maxLength: 9 }).map((b) => new Uint8Array(b)), { nil: null });
    const manifest = fc.record({
      manifestPath: fc.string({ minLength: 1 }),
      manifestLength: long,
      partitionSpecId: fc.integer({ min: 0, max: 1000 }),
      content: fc.constantFrom(0 as const, 1 as const),
      sequenceNumber: long,
      minSequenceNumber: long,
      addedSnapshotId: long,
      addedFilesCount: fc.nat(),
      existingFilesCount: fc.nat(),
      deletedFilesCount: fc.nat(),
      addedRowsCount: long,
      existingRowsCount: long,
      deletedRowsCount: long,
      partitions: fc.option(
        fc.array(fc.record({ containsNull: fc.boolean(), containsNan: fc.option(fc.boolean(), { nil: null }), lowerBound: bytes, upperBound: bytes }), {
          maxLength: 3,
        }),
        { nil: null },
      ),
      keyMetadata: bytes,
      firstRowId: fc.option(long, { nil: null }),
    });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(2 as const, 3 as const), fc.array(manifest, { maxLength: 6 }), long, async (v, manifests, snapshotId) => {
        // Keep the v3 assignments inside the long range.
        const ms = manifests.map((m) => ({ ...m, addedRowsCount: m.addedRowsCount % 2n ** 50n, existingRowsCount: m.existingRowsCount % 2n ** 50n }));
        const enc = encodeManifestList({ formatVersion: v, snapshotId, parentSnapshotId: snapshotId - 1n, sequenceNumber: 3n, firstRowId: 2n ** 60n }, ms, 'p.avro');
        const back = await readManifestListFile(enc.bytes, 'p.avro', v);
        const expected = enc.manifests.map((m) => ({ ...m, firstRowId: v === 3 ? m.firstRowId : null }));
        expect(back.manifests).toEqual(expected);
        expect(headerString(back.header, 'snapshot-id')).toBe(String(snapshotId));
      }),
      { numRuns: 150 },
    );
  });
});
