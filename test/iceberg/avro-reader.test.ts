/**
 * Data manifests read without metrics decode entries straight from the block's bytes
 * (avro-reader.ts); they must equal what avsc decodes, for manifests written by other engines
 * and by us, and entries of one partition share one tuple.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildMetadataTable } from '../../bench/compaction-tables.js';
import { InvalidFileError } from '../../lib/errors.js';
import { type ManifestEntry, readManifestFile } from '../../lib/iceberg/manifest.js';
import { FIXTURES, tempDir } from '../support/fixtures.js';

async function entries(bytes: Uint8Array, path: string, avsc: boolean): Promise<ManifestEntry[]> {
  const out: ManifestEntry[] = [];
  for await (const e of (await readManifestFile(bytes, path, { dataFileStats: false, avsc })).entries) out.push(e);
  return out;
}

function manifests(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.avro') && !f.startsWith('snap-'))
    .map((f) => join(dir, f));
}

describe('manifest entries read from their bytes', () => {
  it('equal avsc’s on the fixtures (Impala, Hive, Flink, Spark) and on a table the bench builds', async () => {
    // Two files per day partition, in one data manifest.
    const bench = join(tempDir(), 'plan-2000-1');
    await buildMetadataTable(bench, 2000, undefined, 2000);
    const paths = [
      ...['iceberg_v2_partitioned_position_deletes', 'iceberg_v2_delete_equality_partitioned', 'iceberg_v3_deletion_vectors'].flatMap((n) =>
        manifests(join(FIXTURES, n, 'metadata')),
      ),
      ...manifests(join(bench, 'metadata')),
    ];
    let read = 0;
    for (const path of paths) {
      const bytes = readFileSync(path);
      const direct = await entries(bytes, path, false);
      expect(direct).toEqual(await entries(bytes, path, true));
      read += direct.length;
    }
    expect(read).toBeGreaterThan(2000);
    // Entries of one partition share their tuple.
    const data = manifests(join(bench, 'metadata')).find((p) => /-m0\.avro$/.test(p))!;
    const got = await entries(readFileSync(data), data, false);
    const byKey = new Map<unknown, object>();
    for (const e of got) {
      const key = JSON.stringify(e.dataFile.partition);
      const first = byKey.get(key);
      if (first) expect(e.dataFile.partition).toBe(first);
      else byKey.set(key, e.dataFile.partition);
    }
    expect(byKey.size).toBeLessThan(got.length);
  });

  it('names the file when a block is cut short', async () => {
    const bench = join(tempDir(), 'plan-100-1');
    await buildMetadataTable(bench, 100, undefined, 100);
    const path = manifests(join(bench, 'metadata')).find((p) => /-m0\.avro$/.test(p))!;
    const bytes = readFileSync(path);
    await expect(entries(bytes.subarray(0, bytes.length - 40), path, false)).rejects.toThrow(InvalidFileError);
    await expect(entries(bytes.subarray(0, bytes.length - 40), path, false)).rejects.toThrow(path);
  });
});
