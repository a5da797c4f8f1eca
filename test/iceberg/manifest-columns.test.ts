/**
 * A data manifest read into columns (lib/iceberg/manifest-columns.ts) gives back every live data
 * file readManifestBatches reads (without metrics, inheritance applied): from the columns, or
 * whole when the columns cannot hold it exactly.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { columnsDataFile, COLUMN_FLAGS, decodeManifestColumns } from '../../lib/iceberg/manifest-columns.js';
import { readManifestList } from '../../lib/iceberg/manifest-list.js';
import { FileContent, ManifestWriter, readManifestBatches, type ManifestEntry } from '../../lib/iceberg/manifest.js';
import { currentSchema, currentSnapshot, specsById } from '../../lib/iceberg/table-metadata.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { tempDir } from '../support/fixtures.js';
import { smallTable } from '../support/small-table.js';

const io = new LocalFileIO();

describe('manifest columns', () => {
  it('hold every live data file of a v3 manifest as read, odd files whole', async () => {
    const t = await smallTable(io, join(tempDir(), 'columns'), 3);
    const specs = specsById(t.metadata);
    const schema = currentSchema(t.metadata);
    const spec = specs.get(t.metadata.defaultSpecId)!;
    const listed = await readManifestList(io, currentSnapshot(t.metadata)!.manifestList!, 3);
    const entries: ManifestEntry[] = [];
    for (const m of listed.filter((x) => x.content === 0)) {
      for await (const batch of readManifestBatches(io, m, specs, schema)) entries.push(...batch);
    }
    const f = entries[0].dataFile;
    const path = join(t.location, 'metadata', 'columns-m0.avro');
    const writer = new ManifestWriter(io, path, { formatVersion: 3, spec, schema, snapshotId: 7n });
    writer.add({ ...f, filePath: `${f.filePath}-plain`, firstRowId: null });
    writer.add({ ...f, filePath: `${f.filePath}-key`, keyMetadata: new Uint8Array([1, 2]), firstRowId: null });
    writer.add({ ...f, filePath: `${f.filePath}-huge`, fileSizeInBytes: 2n ** 60n + 1n, firstRowId: null });
    writer.add({ ...f, filePath: `${f.filePath}-nosplits`, splitOffsets: null, sortOrderId: 3, firstRowId: 40n });
    writer.existing({ ...entries[1], dataFile: { ...entries[1].dataFile, splitOffsets: [4n, 100n] } });
    writer.delete(entries[2]);
    const manifest = { ...(await writer.close()), sequenceNumber: 9n, firstRowId: 1000n };

    const read: ManifestEntry[] = [];
    for await (const batch of readManifestBatches(io, manifest, specs, schema, { dataFileStats: false })) {
      read.push(...batch.filter((e) => e.status !== 2 && e.dataFile.content === FileContent.Data));
    }
    const c = await decodeManifestColumns(readFileSync(path), manifest, spec, schema);
    expect(c.count).toBe(5);
    expect(c.count).toBe(read.length);
    expect([...c.wholeAt]).toEqual([1, 2]);
    expect(c.whole).toEqual([read[1], read[2]]);
    for (let i = 0; i < c.count; i++) {
      const e = read[i];
      expect(c.paths[i]).toBe(e.dataFile.filePath);
      expect(c.partitions[c.partitionIndexes[i]].row).toEqual(e.dataFile.partition);
      if (i === 1 || i === 2) continue;
      expect(columnsDataFile(c, i, e.dataFile.partition)).toEqual(e.dataFile);
      expect(c.sequenceNumbers[i]).toBe(e.sequenceNumber);
      expect(c.flags[i] & COLUMN_FLAGS.NO_SNAPSHOT ? null : c.snapshotIds[i]).toBe(e.snapshotId);
    }
  });
});
