import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidFileError, ReadOnlyTableError } from '../../lib/errors.js';
import { commitTable, loadTable } from '../../lib/catalog/table.js';
import { metadataFileLocation } from '../../lib/catalog/object-store-catalog.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { createNewTable } from '../../lib/table/operations.js';
import { tempDir } from '../support/fixtures.js';

describe('a table opened from an explicit metadata file', () => {
  it('refuses a commit as read-only, not as an invalid file, and writes nothing', async () => {
    // Prepare
    const io = new LocalFileIO();
    const location = join(tempDir('packice-readonly-'), 't');
    await createNewTable(io, location, {
      formatVersion: 2,
      schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: { type: 'long' } }] },
    });
    await io.write(join(location, 'pinned.metadata.json'), await io.read(metadataFileLocation(location, 1)));
    const table = await loadTable(location, { io, metadataFile: join(location, 'pinned.metadata.json') });

    // Act
    const commit = commitTable(table, () => ({ updates: [], requirements: [] }));

    // Assess
    await expect(commit).rejects.toThrow(ReadOnlyTableError);
    await expect(commit).rejects.not.toThrow(InvalidFileError);
    await expect(commit).rejects.toThrow('read-only');
    expect(await io.exists(metadataFileLocation(location, 2))).toBe(false);
  });
});
