/**
 * PyIceberg 0.12 as a reference reader: interop/python/read_table.py in the venv that
 * scripts/setup-python.sh builds (test/global-setup.ts runs it before any test).
 * PyIceberg 0.12 refuses tables with equality deletes ("PyIceberg does not yet support equality
 * deletes"); position deletes and v3 deletion vectors read fine.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type CanonicalRow, parseJsonLines } from './canonical-rows.js';
import { REPO_ROOT } from './fixtures.js';
import { failure } from './java.js';

const run = promisify(execFile);

/** PACKICE_TEST_VENV overrides the venv (e.g. while .cache/venv is being rebuilt). */
export const PY_VENV = process.env.PACKICE_TEST_VENV ?? join(REPO_ROOT, '.cache', 'venv');
const SCRIPT = join(REPO_ROOT, 'interop', 'python', 'read_table.py');

/** Live rows PyIceberg reads from a metadata.json, in the canonical encoding, in scan order. */
export async function pyRead(metadataPath: string, snapshotId?: string | bigint): Promise<CanonicalRow[]> {
  const python = join(PY_VENV, 'bin', 'python');
  if (!existsSync(python)) throw new Error(`${python} is missing: run scripts/setup-python.sh`);
  const args = [SCRIPT, metadataPath];
  if (snapshotId !== undefined) args.push('--snapshot', String(snapshotId));
  try {
    const { stdout } = await run(python, args, {
      cwd: REPO_ROOT,
      timeout: 180_000,
      maxBuffer: 512 * 1024 * 1024,
      encoding: 'utf8',
    });
    return parseJsonLines(stdout, `PyIceberg read ${metadataPath}`);
  } catch (e) {
    throw new Error(`PyIceberg read of ${metadataPath} failed:\n${failure(e)}`, { cause: e });
  }
}
