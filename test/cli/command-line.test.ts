/**
 * The command line as a new user meets it: relative paths and `~`, numbers checked against
 * their range, `--version`, `scan | head`, and no noise from the AWS SDK. Most run
 * bin/packice.js as a child process, as a shell does.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveLocation } from '../../lib/io/index.js';
import { LocalFileIO } from '../../lib/io/local.js';
import type { Row } from '../../lib/iceberg/values.js';
import { appendRows, createNewTable } from '../../lib/table/operations.js';
import { BIN, runBin, runMain } from '../support/cli.js';
import { REPO_ROOT, tempDir } from '../support/fixtures.js';
import { smallTable } from '../support/small-table.js';

const io = new LocalFileIO();
let home: string;
let table: string;

beforeAll(async () => {
  home = tempDir();
  mkdirSync(join(home, 'tables'));
  table = join(home, 'tables', 'events');
  await smallTable(io, table, 2);
});

describe('locations', () => {
  it('resolves relative paths against the working folder and ~ against home; URIs and absolute paths stay', () => {
    expect(resolveLocation('.packice-demo', '/w', '/h')).toBe('/w/.packice-demo');
    expect(resolveLocation('./x/', '/w', '/h')).toBe('/w/x');
    expect(resolveLocation('../t', '/w/a', '/h')).toBe('/w/t');
    expect(resolveLocation('~', '/w', '/h')).toBe('/h');
    expect(resolveLocation('~/t', '/w', '/h')).toBe('/h/t');
    for (const same of ['/abs/t', 's3://b/t', 'file:///t', 'file:/t', 's3a://b/t']) expect(resolveLocation(same, '/w', '/h')).toBe(same);
  });

  it('opens a table named relatively, with ./, and with ~', async () => {
    const tables = join(home, 'tables');
    for (const [name, cwd] of [['events', tables], ['./events', tables], ['tables/events/', home], ['~/tables/events', '/']] as const) {
      const r = await runBin(['info', name, '--json'], { cwd, env: { HOME: home } });
      expect(r.stderr, name).toBe('');
      expect(r.status).toBe(0);
      expect((JSON.parse(r.stdout) as { location: string }).location).toBe(table);
    }
  });
});

describe('numbers', () => {
  const usage = async (args: string[]): Promise<string> => {
    const r = await runMain(args);
    expect(r.exitCode, args.join(' ')).not.toBe(0);
    expect(r.exitCode).not.toBeUndefined();
    expect(r.stdout).toBe('');
    return r.stderr.split('\n')[0];
  };

  it('refuses a bad --parallelism, --commit-every or scan --limit, naming the option and the range', async () => {
    expect(await usage(['compact', table, '--parallelism', 'abc'])).toBe(
      `error: option '--parallelism <n>' argument 'abc' is invalid. must be a whole number from 0 to 1024, got "abc"`,
    );
    expect(await usage(['compact', table, '--parallelism', '-1'])).toContain('must be a whole number from 0 to 1024, got "-1"');
    for (const bad of ['abc', '-1', '0', '1.5']) {
      expect(await usage(['compact', table, '--commit-every', bad])).toBe(
        `error: option '--commit-every <k>' argument '${bad}' is invalid. must be a whole number >= 1, got "${bad}"`,
      );
    }
    for (const bad of ['abc', '-1']) {
      expect(await usage(['scan', table, '--limit', bad])).toBe(
        `error: option '--limit <n>' argument '${bad}' is invalid. must be a whole number >= 0, got "${bad}"`,
      );
    }
  });

  it('refuses sizes and counts out of range, and takes sizes with units', async () => {
    expect(await usage(['plan', table, '--target-file-size', '1'])).toBe(
      `error: option '--target-file-size <size>' argument '1' is invalid. must be at least 2 bytes, got "1"`,
    );
    expect(await usage(['plan', table, '--max-group-bytes', '1x'])).toContain('"1x" is not a size (e.g. 134217728, 128MB, 512MiB, 1GiB)');
    expect(await usage(['plan', table, '--min-input-files', '0'])).toContain('must be a whole number >= 1, got "0"');
    expect(await usage(['plan', table, '--max-groups', 'many'])).toContain('must be a whole number >= 1, got "many"');
    expect(await usage(['plan', table, '--delete-ratio-threshold', '1.5'])).toContain('must be a number > 0 and <= 1, got "1.5"');
    expect(await usage(['plan', table, '--quiet-minutes', '-3'])).toContain('must be a number of minutes >= 0, got "-3"');
    expect(await usage(['expire', table, '--retain-last', '0'])).toContain('must be a whole number >= 1, got "0"');
    const ok = await runMain(['plan', table, '--json', '--target-file-size', '128MiB', '--max-group-bytes', '1GB']);
    expect(ok.stderr).toBe('');
    const policy = (JSON.parse(ok.stdout) as { policy: { targetFileSizeBytes: number; maxGroupBytes: number } }).policy;
    expect(policy.targetFileSizeBytes).toBe(128 * 1024 * 1024);
    expect(policy.maxGroupBytes).toBe(1024 ** 3);
  });

  it('scan --limit 0 prints nothing and --limit 3 three rows', async () => {
    expect((await runMain(['scan', table, '--limit', '0'])).stdout).toBe('');
    expect((await runMain(['scan', table, '--limit', '3'])).stdout.trim().split('\n')).toHaveLength(3);
  });
});

describe('noise', () => {
  it('--version prints the version', async () => {
    const r = await runBin(['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('`scan | head -3` prints three rows and exits quietly', async () => {
    let t = await createNewTable(io, join(tempDir(), 'wide'), {
      schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: { type: 'long' } }, { id: 2, name: 's', required: true, type: { type: 'string' } }] },
    });
    const rows: Row[] = Array.from({ length: 20_000 }, (_, i) => ({ id: BigInt(i), s: `row ${i} ${'x'.repeat(40)}` }));
    t = await appendRows(t, rows);
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" scan "${t.location}" | head -3; echo "exit \${PIPESTATUS[0]}" >&2`], {
      cwd: REPO_ROOT, encoding: 'utf8',
    });
    expect(r.stdout.trim().split('\n')).toHaveLength(3);
    expect(r.stderr).toBe('exit 0\n');
  });
});
