import { describe, expect, it } from 'vitest';
import { dataFileType, isFileFormat } from '../../../lib/iceberg/manifest/data-file.js';
import type { StructType } from '../../../lib/iceberg/types.js';

const PARTITION: StructType = { type: 'struct', fields: [] };
const ids = (v: 1 | 2 | 3): number[] => dataFileType(v, PARTITION).fields.map((f) => f.id);

describe('data_file struct', () => {
  it('has the field ids, in the order, that V1/V2/V3Metadata.DataFileWrapper write', () => {
    expect(ids(1)).toEqual([100, 101, 102, 103, 104, 105, 108, 109, 110, 137, 125, 128, 131, 132, 140]);
    expect(ids(2)).toEqual([134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135, 140, 143]);
    expect(ids(3)).toEqual([134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135, 140, 142, 143, 144, 145]);
  });

  it('documents the partition tuple from v2 on, as Java does', () => {
    expect(dataFileType(1, PARTITION).fields.find((f) => f.id === 102)?.doc).toBeUndefined();
    expect(dataFileType(2, PARTITION).fields.find((f) => f.id === 102)?.doc).toBe('Partition data tuple, schema based on the partition spec');
  });
});

describe('isFileFormat', () => {
  it('accepts the spec names in upper case only', () => {
    expect(['PARQUET', 'AVRO', 'ORC', 'PUFFIN'].every(isFileFormat)).toBe(true);
    expect(isFileFormat('parquet')).toBe(false);
    expect(isFileFormat('CSV')).toBe(false);
  });
});
