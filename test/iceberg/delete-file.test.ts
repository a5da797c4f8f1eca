import { describe, expect, it } from 'vitest';
import { deleteFileKey, deleteFileReadBytes, isDeletionVector, referencedDataFile } from '../../lib/iceberg/delete-file.js';
import { FileContent } from '../../lib/iceberg/manifest.js';
import { MetadataColumns } from '../../lib/iceberg/schema.js';

const posDelete = { content: FileContent.PositionDeletes, filePath: 'hdfs://nn:8020/w/t/data/d1.parquet', fileFormat: 'PARQUET', fileSizeInBytes: 900n };
const dv = (offset: bigint) => ({
  content: FileContent.PositionDeletes,
  filePath: 's3://b/w/t/data/dv.puffin',
  fileFormat: 'PUFFIN',
  fileSizeInBytes: 5000n,
  contentOffset: offset,
  contentSizeInBytes: 40n,
});

describe('delete files', () => {
  it('tells deletion vectors from position and equality delete files', () => {
    expect(isDeletionVector(dv(4n))).toBe(true);
    expect(isDeletionVector(posDelete)).toBe(false);
    expect(isDeletionVector({ content: FileContent.EqualityDeletes, fileFormat: 'PARQUET' })).toBe(false);
    expect(isDeletionVector({ content: FileContent.PositionDeletes, fileFormat: 'puffin' })).toBe(true);
  });

  it('keys a file by its normalised path, a deletion vector by its blob', () => {
    expect(deleteFileKey(posDelete)).toBe(deleteFileKey({ ...posDelete, filePath: '/w/t/data/d1.parquet' }));
    expect(deleteFileKey(dv(4n))).not.toBe(deleteFileKey(dv(44n)));
    expect(deleteFileKey(dv(4n))).toBe(deleteFileKey({ ...dv(4n), filePath: 's3a://b/w/t/data/dv.puffin' }));
    // The JSON form of a DataFile carries the offset as a string: same key.
    expect(deleteFileKey({ ...dv(4n), contentOffset: '4' })).toBe(deleteFileKey(dv(4n)));
  });

  it('counts the bytes a reader fetches: a blob, or the whole file', () => {
    expect(deleteFileReadBytes(dv(4n))).toBe(40n);
    expect(deleteFileReadBytes(posDelete)).toBe(900n);
    expect(deleteFileReadBytes({ ...dv(4n), contentSizeInBytes: null })).toBe(5000n);
  });

  it('names the one data file a file-scoped delete applies to: referenced_data_file, else equal file_path bounds', () => {
    const bytes = (p: string): Uint8Array => new TextEncoder().encode(p);
    const bounds = (lower: string, upper: string) => ({
      lowerBounds: new Map([[MetadataColumns.FILE_PATH, bytes(lower)]]),
      upperBounds: new Map([[MetadataColumns.FILE_PATH, bytes(upper)]]),
    });
    expect(referencedDataFile({ ...dv(4n), referencedDataFile: 's3://b/w/t/data/a.parquet' })).toBe('s3://b/w/t/data/a.parquet');
    expect(referencedDataFile({ ...posDelete, ...bounds('/w/t/a.parquet', '/w/t/a.parquet') })).toBe('/w/t/a.parquet');
    // Partition-scoped: bounds that differ, or none.
    expect(referencedDataFile({ ...posDelete, ...bounds('/w/t/a.parquet', '/w/t/b.parquet') })).toBeUndefined();
    expect(referencedDataFile(posDelete)).toBeUndefined();
    // Equality deletes never name one file.
    expect(referencedDataFile({ ...posDelete, content: FileContent.EqualityDeletes, ...bounds('/x', '/x') })).toBeUndefined();
  });
});
