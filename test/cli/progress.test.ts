/**
 * Progress on long commands goes to stderr only when stderr is a terminal: a pipe (every test's,
 * every script's) and `--json` get none. `scan` draws one only when its rows go to a file.
 * The terminal cases run bin/packice.js under util-linux `script`, which gives it a pseudo-terminal.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '../../lib/io/local.js';
import { progressBar } from '../../lib/cli/progress.js';
import { BIN, runBin } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';
import { smallTable } from '../support/small-table.js';

/** A writable stream that says it is (or is not) a terminal and keeps what was written. */
function fakeStream(isTTY: boolean): { stream: NodeJS.WriteStream; written: () => string } {
  let text = '';
  const w = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  Object.assign(w, { isTTY, columns: 100, rows: 24 });
  return { stream: w as unknown as NodeJS.WriteStream, written: () => text };
}

/** `sh -c command` under a pseudo-terminal (stdin, stdout and stderr all the terminal); what it showed. */
function underTerminal(command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('script', ['-qec', command, '/dev/null'], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      if (error) return reject(new Error(`${command} failed under script: ${error.message}\n${stdout}`));
      resolve(stdout);
    });
  });
}

const quote = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;
const packice = (args: readonly string[]): string => [process.execPath, BIN, ...args].map(quote).join(' ');

let table: string;
beforeAll(async () => {
  table = join(tempDir(), 'events');
  await smallTable(new LocalFileIO(), table, 2);
});

describe('the progress bar', () => {
  it('draws the step with done and total on a terminal', () => {
    const { stream, written } = fakeStream(true);
    const progress = progressBar(true, stream);
    progress('manifests', 0, 3);
    progress('manifests', 1, 3);
    progress('manifests', 3, 3);
    expect(written()).toContain('manifests');
    expect(written()).toContain('0/3');
  });

  it('draws a counter when the total is unknown', () => {
    const { stream, written } = fakeStream(true);
    progressBar(true, stream)('list', 1000, undefined);
    expect(written()).toContain('list 1000');
  });

  it('writes nothing to a stream that is not a terminal, nor when turned off (--json)', () => {
    for (const [tty, enabled] of [[false, true], [true, false]] as const) {
      const { stream, written } = fakeStream(tty);
      const progress = progressBar(enabled, stream);
      progress('manifests', 0, 3);
      progress('manifests', 3, 3);
      expect(written()).toBe('');
    }
  });
});

describe('long commands', () => {
  it('print no progress into a pipe: relocate, scan, compact, expire, orphans', async () => {
    const dir = tempDir();
    for (const args of [
      ['relocate', table, join(dir, 'copy')],
      ['scan', table],
      ['compact', join(dir, 'copy'), '--min-input-files', '1', '--parallelism', '0'],
      ['expire', join(dir, 'copy'), '--older-than', '0s', '--retain-last', '1'],
      ['orphans', join(dir, 'copy'), '--older-than', '0s', '--force', '--dry-run', '--report', join(dir, 'orphans.json')],
    ]) {
      const r = await runBin(args);
      expect(r.status, `${args[0]}: ${r.stderr}`).toBe(0);
      expect(r.stderr, args[0]).toBe('');
      expect(r.stdout, args[0]).not.toMatch(/\u001b\[|\r/);
    }
  }, 120_000);

  it('on a terminal: relocate and expire draw a bar, not with --json; scan only into a file', async () => {
    const dir = tempDir();
    expect(await underTerminal(packice(['relocate', table, join(dir, 'a')]))).toContain('manifests');
    const json = await underTerminal(packice(['relocate', '--json', table, join(dir, 'b')]));
    expect(json).not.toContain('manifests');
    expect(JSON.parse(json.replace(/\r\n/g, '\n'))).toMatchObject({ filesCopied: 8 });
    expect(await underTerminal(packice(['expire', join(dir, 'a'), '--older-than', '0s', '--retain-last', '1']))).toMatch(/read-retained|read-expired|delete/);

    const onTerminal = await underTerminal(packice(['scan', table]));
    expect(onTerminal).not.toContain('data files');
    expect(onTerminal.trim().split('\n')).toHaveLength(32);
    const rows = join(dir, 'rows.jsonl');
    expect(await underTerminal(`${packice(['scan', table])} > ${quote(rows)}`)).toContain('data files');
    expect(readFileSync(rows, 'utf8').trim().split('\n')).toHaveLength(32);
  }, 120_000);
});
