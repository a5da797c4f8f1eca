import { describe, expect, it } from 'vitest';
import { shownPath } from '../../lib/cli/format.js';
import { urlEncode } from '../../lib/iceberg/locations.js';

describe('shownPath (partition paths in text output)', () => {
  it('decodes the values partitionToPath encoded, keeping only / and % encoded', () => {
    expect(shownPath('')).toBe('(unpartitioned)');
    expect(shownPath('ts=2026-01-01T10%3A00%3A00/s_day=a+b')).toBe('ts=2026-01-01T10:00:00/s_day=a b');
    expect(shownPath('s=a+b%2Fc%3Dd/n=9007199254740993')).toBe('s=a b%2Fc=d/n=9007199254740993');
    expect(shownPath('tstz=1969-12-31T23%3A59%3A59.5%2B00%3A00')).toBe('tstz=1969-12-31T23:59:59.5+00:00');
    expect(shownPath('p=%C3%A9t%C3%A9%25')).toBe('p=été%25');
  });

  it('round-trips any value: what it shows, with / and % read back, is the value', () => {
    for (const v of ['a/b', '100%', 'x+y z', 'ü:=?&#~', '', '%2F']) {
      const shown = shownPath(`k=${urlEncode(v)}`);
      expect(decodeURIComponent(shown.slice(2))).toBe(v);
    }
  });

  it('shows a segment it cannot decode as it is', () => {
    expect(shownPath('k=%E0%A4%A')).toBe('k=%E0%A4%A');
  });
});
