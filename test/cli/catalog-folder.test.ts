/**
 * A folder a catalog service wrote (`NNNNN-<uuid>.metadata.json`, no version hint, as Glue, REST
 * catalogs and Trino leave it): read-only commands read its newest metadata file with a warning,
 * committing commands refuse before writing anything, naming the catalog table names to use.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '../../lib/io/local.js';
import { runMain } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';
import { smallTable } from '../support/small-table.js';

let location: string;
let newest: string;

/** Every file under the folder with its size and modification time. */
function snapshotOf(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(`${relative(dir, p)} ${statSync(p).size} ${statSync(p).mtimeMs}`);
    }
  };
  walk(dir);
  return out.sort();
}

beforeAll(async () => {
  location = join(tempDir(), 'glue_table');
  await smallTable(new LocalFileIO(), location, 2);
  const metadata = join(location, 'metadata');
  rmSync(join(metadata, 'version-hint.text'));
  for (const f of readdirSync(metadata)) {
    const m = /^v(\d+)\.metadata\.json$/.exec(f);
    if (!m) continue;
    const name = `${m[1].padStart(5, '0')}-${randomUUID()}.metadata.json`;
    renameSync(join(metadata, f), join(metadata, name));
    if (Number(m[1]) === 6) newest = name;
  }
  expect(newest).toBeDefined();
});

describe('a catalog-written metadata folder', () => {
  it('is read from its newest metadata file by info, describe, files, scan and plan, with a warning', async () => {
    const info = await runMain(['info', location, '--json']);
    expect(info.exitCode ?? 0).toBe(0);
    expect(info.stderr).toBe(
      `packice: warning: ${location} has no v<N>.metadata.json; reading its newest metadata file ${newest} (read-only): ` +
        'the catalog that wrote it, not the folder, holds which version is current\n',
    );
    expect(JSON.parse(info.stdout)).toMatchObject({ records: '40', positionDeleteFiles: 2 });
    for (const args of [['describe', location], ['files', location], ['scan', location], ['plan', location], ['health', location]]) {
      const r = await runMain(args);
      expect(r.exitCode ?? 0, args[0]).toBe(0);
      expect(r.stderr).toContain('reading its newest metadata file');
    }
    expect((await runMain(['scan', location])).stdout.trim().split('\n')).toHaveLength(32);
  });

  it('refuses every committing command before writing anything, naming the catalog table names', async () => {
    // `step plan` only reads, as `plan` does; the steps after it write into the table.
    const planned = await runMain(['step', 'plan', location, '--min-input-files', '1']);
    expect(planned.exitCode ?? 0, planned.stderr).toBe(0);
    const planFile = join(tempDir(), 'plan.json');
    writeFileSync(planFile, planned.stdout);
    const resultsFile = join(tempDir(), 'results.jsonl');
    writeFileSync(resultsFile, `${JSON.stringify({ groupId: 'g0', error: 'not run' })}\n`);

    const before = snapshotOf(location);
    for (const args of [
      ['compact', location, '--min-input-files', '1'],
      ['compact', location, '--min-input-files', '1', '--dry-run'],
      ['delete', location, '--where', 'id = 1'],
      ['expire', location],
      ['expire', location, '--dry-run', '--report', join(tempDir(), 'r.json')],
      ['orphans', location],
      ['rewrite-manifests', location],
      ['step', 'rewrite', planFile],
      ['step', 'commit', planFile, resultsFile],
    ]) {
      const r = await runMain(args);
      const command = args[0] === 'step' ? `step ${args[1]}` : args[0];
      expect(r.exitCode, args.join(' ')).toBe(1);
      const error = r.stderr.split('\n').find((l) => l.startsWith('packice: ') && !l.startsWith('packice: warning'))!;
      expect(error, args.join(' ')).toContain(`${command} refused, nothing written: its metadata files are named NNNNN-<uuid>.metadata.json`);
      expect(error).toContain('glue://<database>/<table>, rest+https://<endpoint>/<namespace>/<table>');
    }
    expect(snapshotOf(location)).toEqual(before);
  });
});
