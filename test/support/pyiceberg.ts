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

const REST_SCRIPT = join(REPO_ROOT, 'interop', 'python', 'rest_table.py');

/** What `rest_table.py write` prints. */
export interface PyRestWriteResult {
  readonly snapshots: number;
  /** Decimal string (snapshot ids exceed 2^53). */
  readonly currentSnapshotId: string;
}

async function pyRest(args: readonly string[], catalogProperties: Readonly<Record<string, string>>): Promise<string> {
  const python = join(PY_VENV, 'bin', 'python');
  if (!existsSync(python)) throw new Error(`${python} is missing: run scripts/setup-python.sh`);
  try {
    const { stdout } = await run(python, [REST_SCRIPT, ...args], {
      cwd: REPO_ROOT,
      timeout: 180_000,
      maxBuffer: 512 * 1024 * 1024,
      encoding: 'utf8',
      env: { ...process.env, PACKICE_REST_CATALOG_PROPERTIES: JSON.stringify(catalogProperties) },
    });
    return stdout;
  } catch (e) {
    throw new Error(`PyIceberg '${args.join(' ')}' failed:\n${failure(e)}`, { cause: e });
  }
}

/**
 * PyIceberg creates the table `rest+http://host:port/<namespace>/<table>` through the REST catalog
 * and writes rest_table.py's scenario: identity(category), three appends, two deletes; live ids
 * 1 3-8 10-13 15 16.
 */
export async function pyRestWrite(name: string, catalogProperties: Readonly<Record<string, string>> = {}): Promise<PyRestWriteResult> {
  const [result] = parseJsonLines(await pyRest(['write', name], catalogProperties), `PyIceberg REST write ${name}`);
  return result as unknown as PyRestWriteResult;
}

/** Live rows PyIceberg reads from a table it loads through the REST catalog, in scan order. */
export async function pyRestRead(name: string, catalogProperties: Readonly<Record<string, string>> = {}): Promise<CanonicalRow[]> {
  return parseJsonLines(await pyRest(['read', name], catalogProperties), `PyIceberg REST read ${name}`);
}
