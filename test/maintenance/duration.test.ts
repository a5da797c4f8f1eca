import { describe, expect, it } from 'vitest';
import { formatDurationText, parseDuration } from '../../lib/maintenance/duration.js';
import { fileKey, inLocationScheme, isInsideLocation } from '../../lib/maintenance/file-uri.js';

describe('durations', () => {
  it('reads 3d, 12h, 30m, 0s and combinations; bare numbers only with a named unit', () => {
    expect(parseDuration('3d')).toBe(259_200_000);
    expect(parseDuration('12h')).toBe(43_200_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('0s')).toBe(0);
    expect(parseDuration('1d12h')).toBe(129_600_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('7', '--horizon', 'd')).toBe(604_800_000);
    expect(() => parseDuration('7', '--older-than')).toThrow(/--older-than: "7" is not a duration/);
    expect(() => parseDuration('3 days')).toThrow(/not a duration/);
    expect(formatDurationText(5_400_000)).toBe('1h30m');
    expect(formatDurationText(0)).toBe('0s');
  });
});

describe('file URIs (the s3/s3a/s3n rule)', () => {
  it('treats s3, s3a and s3n as one scheme and buckets case-insensitively', () => {
    expect(fileKey('s3a://Bucket/t/x')).toBe(fileKey('s3://bucket/t/x'));
    expect(fileKey('s3n://bucket/t/x')).toBe(fileKey('s3://bucket/t/x'));
    expect(fileKey('s3://other/t/x')).not.toBe(fileKey('s3://bucket/t/x'));
    expect(fileKey('file:///t/x')).toBe(fileKey('/t/x'));
    expect(fileKey('gs://bucket/t/x')).not.toBe(fileKey('s3://bucket/t/x'));
    expect(inLocationScheme('s3://b/t', 's3a://b/t/x')).toBe('s3://b/t/x');
  });

  it('says what is inside a table location, and nothing with dot segments is', () => {
    expect(isInsideLocation('s3://b/t', 's3a://b/t/data/x')).toBe(true);
    expect(isInsideLocation('s3://b/t', 's3://b/t_backup/x')).toBe(false);
    expect(isInsideLocation('s3://b/t', 's3://c/t/x')).toBe(false);
    expect(isInsideLocation('s3://b/t', 's3://b/t/../u/x')).toBe(false);
    expect(isInsideLocation('s3://b/t', 's3://b/t//x')).toBe(false);
    expect(isInsideLocation('/w/t', '/w/t/data/./x')).toBe(false);
    expect(isInsideLocation('/w/t', 'file:/w/t/data/x')).toBe(true);
    expect(isInsideLocation('/w/t', '/w/t')).toBe(false);
  });
});
