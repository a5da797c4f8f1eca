import { describe, expect, it } from 'vitest';
import { DeleteFileIndex } from '../../lib/iceberg/delete-index.js';
import { FileContent, type DataFile } from '../../lib/iceberg/manifest.js';
import { MetadataColumns } from '../../lib/iceberg/schema.js';
import type { PartitionSpec } from '../../lib/iceberg/partition.js';

const spec: PartitionSpec = { specId: 0, fields: [{ sourceId: 1, fieldId: 1000, name: 'p', transform: { kind: 'identity' } }] };
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

function dataFile(path: string, content: FileContent = FileContent.Data, extra: Partial<DataFile> = {}): DataFile {
  return { content, filePath: path, fileFormat: 'PARQUET', specId: 0, partition: { p: 1 }, recordCount: 10n, fileSizeInBytes: 100n, ...extra };
}

function positionDeletes(path: string, lower?: string, upper?: string): DataFile {
  return dataFile(path, FileContent.PositionDeletes, {
    ...(lower !== undefined ? { lowerBounds: new Map([[MetadataColumns.FILE_PATH, bytes(lower)]]) } : {}),
    ...(upper !== undefined ? { upperBounds: new Map([[MetadataColumns.FILE_PATH, bytes(upper)]]) } : {}),
  });
}

function indexOf(...deletes: DataFile[]): DeleteFileIndex {
  const index = new DeleteFileIndex(new Map([[0, spec]]));
  for (const d of deletes) index.add({ status: 1, snapshotId: 2n, sequenceNumber: 2n, fileSequenceNumber: 2n, dataFile: d });
  return index;
}

const applied = (index: DeleteFileIndex, path: string): string[] =>
  index.forDataFile(dataFile(path), 1n).positionDeletes.map((d) => d.file.filePath);

describe('DeleteFileIndex', () => {
  it("gives a partition-scoped position delete file only to data files within its file_path bounds (Java's canContainPosDeletesForFile)", () => {
    const index = indexOf(
      positionDeletes('s3://b/t/data/del-a.parquet', 's3://b/t/data/f-0001.parquet', 's3://b/t/data/f-0004.parquet'),
      positionDeletes('s3://b/t/data/del-b.parquet', 's3://b/t/data/f-0005.parquet', 's3://b/t/data/f-0008.parquet'),
      positionDeletes('s3://b/t/data/del-c.parquet'),
      positionDeletes('s3://b/t/data/del-d.parquet', 's3://b/t/data/f-0007'),
    );
    expect(applied(index, 's3://b/t/data/f-0001.parquet')).toEqual(['s3://b/t/data/del-a.parquet', 's3://b/t/data/del-c.parquet']);
    expect(applied(index, 's3://b/t/data/f-0004.parquet')).toEqual(['s3://b/t/data/del-a.parquet', 's3://b/t/data/del-c.parquet']);
    expect(applied(index, 's3://b/t/data/f-0006.parquet')).toEqual(['s3://b/t/data/del-b.parquet', 's3://b/t/data/del-c.parquet']);
    // Only a lower bound (truncated): everything at or past it.
    expect(applied(index, 's3://b/t/data/f-0008.parquet')).toEqual([
      's3://b/t/data/del-b.parquet',
      's3://b/t/data/del-c.parquet',
      's3://b/t/data/del-d.parquet',
    ]);
    expect(applied(index, 's3://b/t/data/f-0009.parquet')).toEqual(['s3://b/t/data/del-c.parquet', 's3://b/t/data/del-d.parquet']);
  });

  it('keeps a delete file whose bounds name the data file under another scheme or authority (the scan matches normalized paths)', () => {
    const index = indexOf(positionDeletes('s3://b/t/data/del-a.parquet', 's3a://b/t/data/f-1.parquet', 's3a://b/t/data/f-3.parquet'));
    expect(applied(index, 's3://b/t/data/f-2.parquet')).toEqual(['s3://b/t/data/del-a.parquet']);
    expect(applied(index, 's3://b/t/data/f-4.parquet')).toEqual([]);
  });

  it('compares paths by UTF-16 code units, as Comparators.charSequences() does', () => {
    const index = indexOf(positionDeletes('/t/del.parquet', '/t/data/é-1', '/t/data/é-3'));
    expect(applied(index, '/t/data/é-2')).toEqual(['/t/del.parquet']);
    expect(applied(index, '/t/data/e-2')).toEqual([]);
  });
});
