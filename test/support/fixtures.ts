import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Real tables written by other engines (read-only; see test/fixtures/iceberg/README.md). */
export const FIXTURES = resolve(REPO_ROOT, 'test/fixtures/iceberg');

export const FIXTURE_TABLES = [
  'iceberg_v2_partitioned_position_deletes',
  'iceberg_v2_delete_equality_partitioned',
  'iceberg_v3_deletion_vectors',
] as const;

export function tempDir(prefix = 'packice-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A writable copy of a fixture table. */
export function copyFixture(name: string): string {
  const dir = join(tempDir(), name);
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  return dir;
}
