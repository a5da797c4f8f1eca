import { describe, expect, it } from 'vitest';
import { baseName, isLocalPath, isS3Path, joinPath, normalizePath, parentOf, schemeOf } from '../../lib/io/path.js';

describe('joinPath', () => {
  it('puts exactly one slash between parts', () => {
    expect(joinPath('s3://b/t/', 'metadata', 'v1.metadata.json')).toBe('s3://b/t/metadata/v1.metadata.json');
    expect(joinPath('s3://b', '/data/', 'x=1/f.parquet')).toBe('s3://b/data/x=1/f.parquet');
    expect(joinPath('/t', '', 'a')).toBe('/t/a');
    expect(joinPath('file:/t//', 'a')).toBe('file:/t/a');
    expect(joinPath('/', 'a')).toBe('/a');
  });
});

describe('parentOf and baseName', () => {
  it('cut at the last slash, ignoring a trailing one', () => {
    expect(parentOf('s3://b/t/x.parquet')).toBe('s3://b/t');
    expect(parentOf('s3://b/t/')).toBe('s3://b');
    expect(parentOf('s3://b/x')).toBe('s3://b');
    expect(parentOf('/a/b')).toBe('/a');
    expect(parentOf('/a')).toBe('/');
    expect(parentOf('file:///a')).toBe('file:///');
    expect(parentOf('hdfs://nn:8020/w/t')).toBe('hdfs://nn:8020/w');
    expect(baseName('s3://b/t/x.parquet')).toBe('x.parquet');
    expect(baseName('/a/b/')).toBe('b');
  });

  it('treats roots as their own parent', () => {
    expect(parentOf('s3://bucket')).toBe('s3://bucket');
    expect(parentOf('/')).toBe('/');
  });
});

describe('normalizePath', () => {
  it('drops scheme and host for file and hdfs', () => {
    expect(normalizePath('hdfs://localhost:20500/test-warehouse/t/f.parquet')).toBe('/test-warehouse/t/f.parquet');
    expect(normalizePath('/test-warehouse/t/f.parquet')).toBe('/test-warehouse/t/f.parquet');
    expect(normalizePath('file:/x/y')).toBe('/x/y');
    expect(normalizePath('file:///x/y')).toBe('/x/y');
    expect(normalizePath('file://localhost/x/y')).toBe('/x/y');
    expect(normalizePath('HDFS://nn/x')).toBe('/x');
  });

  it('keeps the bucket for s3 and makes s3, s3a and s3n equal', () => {
    expect(normalizePath('s3://bucket/x/y')).toBe('bucket/x/y');
    expect(normalizePath('s3a://bucket/x/y')).toBe('bucket/x/y');
    expect(normalizePath('s3n://bucket/x/y')).toBe('bucket/x/y');
    expect(normalizePath('s3://other/x/y')).not.toBe(normalizePath('s3://bucket/x/y'));
    expect(normalizePath('s3://bucket/x/y')).not.toBe(normalizePath('/x/y'));
    expect(normalizePath('s3://bucket//x')).toBe('bucket//x');
  });
});

describe('scheme tests', () => {
  it('recognise local and S3 locations', () => {
    expect(schemeOf('S3A://b/k')).toBe('s3a');
    expect(schemeOf('/x')).toBeUndefined();
    expect([isLocalPath('/x'), isLocalPath('file:/x'), isLocalPath('s3://b/x'), isLocalPath('x')]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect([isS3Path('s3://b'), isS3Path('s3a://b'), isS3Path('s3n://b'), isS3Path('gs://b')]).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });
});
