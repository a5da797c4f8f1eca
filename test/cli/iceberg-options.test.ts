/** `--option name=value` takes rewrite_data_files' own option names, so a Spark user's settings carry over. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalFileIO } from '../../lib/io/local.js';
import type { Row } from '../../lib/iceberg/values.js';
import { appendRows, createNewTable } from '../../lib/table/operations.js';
import { runMain } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';

const io = new LocalFileIO();

async function threePartitions(): Promise<string> {
  let t = await createNewTable(io, join(tempDir(), 't'), {
    schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: { type: 'long' } }, { id: 2, name: 'p', required: true, type: { type: 'string' } }] },
    partitionFields: [{ sourceId: 2, name: 'p', transform: { kind: 'identity' } }],
  });
  let id = 0;
  for (let round = 0; round < 2; round++) t = await appendRows(t, ['a', 'b', 'c'].map((p): Row => ({ id: BigInt(id++), p })));
  return t.location;
}

describe('--option', () => {
  it("maps rewrite_data_files' option names onto the policy, and refuses what it cannot honour by name", async () => {
    const location = await threePartitions();
    const ok = await runMain(['plan', location, '--json', '--option', 'min-input-files=5', '--option', 'target-file-size-bytes=256MB', '--option', 'max-file-group-size-bytes=1GB', '--option', 'remove-dangling-deletes=true']);
    expect(ok.stderr).toBe('');
    expect((JSON.parse(ok.stdout) as { policy: unknown }).policy).toMatchObject({ minInputFiles: 5, targetFileSizeBytes: 256 * 1024 ** 2, maxGroupBytes: 1024 ** 3 });
    const error = async (...option: string[]): Promise<string> => {
      const r = await runMain(['plan', location, ...option]);
      expect(r.exitCode).toBe(1);
      return r.stderr.trim();
    };
    expect(await error('--option', 'delete-ratio-threshold=2')).toBe('packice: --option delete-ratio-threshold: must be a number > 0 and <= 1, got "2"');
    expect(await error('--option', 'rewrite-all=true')).toContain('--option rewrite-all: not supported');
    expect(await error('--option', 'remove-dangling-deletes=false')).toContain('packice always runs with remove-dangling-deletes=true');
    expect(await error('--option', 'min-input-file=5')).toContain("--option min-input-file: not a rewrite_data_files option packice knows");
    expect(await error('--option', 'min-input-files=3', '--min-input-files', '4')).toContain('--option min-input-files and --min-input-files both set the same thing');
  });

  it('partial-progress.enabled with max-commits spreads the groups over that many snapshots', async () => {
    const location = await threePartitions();
    const r = await runMain([
      'compact', location, '--option', 'min-input-files=2', '--option', 'partial-progress.enabled=true', '--option', 'partial-progress.max-commits=3',
      '--option', 'max-concurrent-file-group-rewrites=1',
    ]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/commit {4}3 snapshots \(/);
  });
});
