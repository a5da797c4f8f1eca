/**
 * `packice describe`, `snapshots` and `files` on Java-written tables agree with Java Iceberg
 * 1.12's own `snapshots` and `files` metadata tables (and its partitionToPath and scan).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FileRow, SnapshotRow, TableDescription } from '../../lib/table/metadata-tables.js';
import { runMain } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';
import { ensureJavaHarness, javaInfo, javaLocations, javaMetadataTable, javaWrite, type JavaScenario } from '../support/java.js';

const CONTENT = ['DATA', 'POSITION_DELETES', 'EQUALITY_DELETES'];

async function json<T>(args: string[]): Promise<T> {
  const r = await runMain(args);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as T;
}

describe('interop: describe, snapshots and files against Java metadata tables', () => {
  beforeAll(async () => {
    await ensureJavaHarness();
  }, 20 * 60_000);

  it.each(['v2-mixed', 'v3-deletion-vectors'] as JavaScenario[])('%s', async (scenario) => {
    const location = join(tempDir(), scenario);
    await javaWrite(scenario, location);

    const ours = await json<SnapshotRow[]>(['snapshots', location, '--json']);
    const java = await javaMetadataTable(location, 'snapshots');
    expect(ours.length).toBeGreaterThan(1);
    const byId = new Map(java.map((j) => [j.snapshot_id as string, j]));
    expect(ours.map((s) => s.snapshotId).sort()).toEqual([...byId.keys()].sort());
    for (const s of ours) {
      const j = byId.get(s.snapshotId)!;
      expect(s.parentId).toBe(j.parent_id);
      expect(s.operation).toBe(j.operation);
      expect(s.manifestList).toBe(j.manifest_list);
      expect(s.summary).toEqual(j.summary);
      expect(BigInt(Date.parse(s.committedAt)) * 1000n).toBe(BigInt(j.committed_at as string));
    }

    const files = await json<FileRow[]>(['files', location, '--deletes', '--json']);
    const javaFiles = await javaMetadataTable(location, 'files');
    const key = (path: string, content: string): string => `${content} ${path}`;
    expect(files.map((f) => key(f.filePath, f.content)).sort()).toEqual(javaFiles.map((j) => key(j.file_path as string, CONTENT[j.content as number])).sort());
    for (const f of files) {
      const j = javaFiles.find((x) => x.file_path === f.filePath && CONTENT[x.content as number] === f.content)!;
      expect(f.recordCount, f.filePath).toBe(j.record_count);
      expect(f.fileSizeInBytes).toBe(j.file_size_in_bytes);
      expect(f.fileFormat).toBe(j.file_format);
      expect(f.specId).toBe(j.spec_id);
      if (f.referencedDataFile !== undefined) expect(f.referencedDataFile).toBe(j.referenced_data_file);
    }
    const partitions = new Map((await javaLocations(location)).map((l) => [l.path, l.partitionPath]));
    for (const f of files) if (f.content === 'DATA') expect(f.partition).toBe(partitions.get(f.filePath));
    const info = await javaInfo(location);
    expect(files.filter((f) => f.content === 'DATA')).toHaveLength(info.dataFiles);

    const d = await json<TableDescription>(['describe', location, '--json']);
    expect(d.currentSnapshotId).toBe(info.currentSnapshotId);
    expect(d.formatVersion).toBe(info.formatVersion);
    // The schema as Java wrote it into the metadata file.
    const metadataFile = /^metadata\s+(\S+)/m.exec((await runMain(['info', location])).stdout)![1];
    const raw = JSON.parse(readFileSync(metadataFile, 'utf8')) as { schemas: { 'schema-id': number; fields: { id: number; name: string; required: boolean }[] }[]; 'current-schema-id': number };
    const schema = raw.schemas.find((s) => s['schema-id'] === raw['current-schema-id'])!;
    expect(d.columns.filter((c) => !c.name.includes('.')).map((c) => [c.id, c.name, c.required])).toEqual(schema.fields.map((f) => [f.id, f.name, f.required]));
  });
});
