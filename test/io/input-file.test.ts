import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IoError, NotFoundError } from '../../lib/errors.js';
import { existsByStat } from '../../lib/io/input-file.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { tempDir } from '../support/fixtures.js';

describe('existsByStat', () => {
  it('is true for a file, false for an absent path or a folder', async () => {
    const dir = tempDir('packice-exists-');
    writeFileSync(join(dir, 'a.txt'), 'a');
    mkdirSync(join(dir, 'folder'));
    const io = new LocalFileIO();
    expect(await existsByStat(io, join(dir, 'a.txt'))).toBe(true);
    expect(await existsByStat(io, join(dir, 'absent.txt'))).toBe(false);
    expect(await existsByStat(io, join(dir, 'folder'))).toBe(false);
  });

  it('throws a failure that is not "not found" rather than answer false', async () => {
    const failing = {
      stat: (path: string) => Promise.reject(new IoError('access denied', { path })),
    };
    const absent = {
      stat: (path: string) => Promise.reject(new NotFoundError('no such key', { path })),
    };
    await expect(existsByStat(failing, 's3://b/k')).rejects.toThrow(IoError);
    expect(await existsByStat(absent, 's3://b/k')).toBe(false);
  });
});
