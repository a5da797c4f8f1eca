/**
 * The start-up work (issue 12, "slow start"): bin/packice.js runs the compiled JavaScript in
 * dist/, and `--help` and `info` on a local table load neither Parquet (parquet-wasm, Arrow) nor
 * the AWS SDK. Read from a module resolve hook in the child, not from a clock.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '../../lib/io/local.js';
import { runBin } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';
import { smallTable } from '../support/small-table.js';

let dir: string;
let table: string;

/** A hook that appends every module URL the child resolves to $PACKICE_TRACE, and its registration. */
function writeHooks(): string {
  writeFileSync(
    join(dir, 'hooks.mjs'),
    "import { appendFileSync } from 'node:fs';\n" +
      'export async function resolve(specifier, context, next) {\n' +
      '  const r = await next(specifier, context);\n' +
      "  appendFileSync(process.env.PACKICE_TRACE, `${r.url}\\n`);\n" +
      '  return r;\n' +
      '}\n',
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`);
  return register;
}

/** The modules `packice <args>` loaded (ESM imports, the way the CLI loads its commands). */
async function modulesLoadedBy(args: string[]): Promise<string[]> {
  const trace = join(dir, `trace-${args[0]}.txt`);
  writeFileSync(trace, '');
  const r = await runBin(args, { env: { NODE_OPTIONS: `--import ${pathToFileURL(writeHooks()).href}`, PACKICE_TRACE: trace, PACKICE_FROM_SOURCE: undefined } });
  expect(r.status, r.stderr).toBe(0);
  return readFileSync(trace, 'utf8').trim().split('\n');
}

beforeAll(async () => {
  dir = tempDir();
  table = join(dir, 'events');
  await smallTable(new LocalFileIO(), table, 2);
});

describe('start-up', () => {
  it.each([['--help'], ['info', '<table>']])('packice %s runs dist/ and loads neither Parquet nor the AWS SDK', async (...args) => {
    const loaded = await modulesLoadedBy(args.map((a) => (a === '<table>' ? table : a)));
    expect(loaded.some((u) => u.includes('/dist/lib/cli/main.js'))).toBe(true);
    expect(loaded.filter((u) => /\/lib\/.*\.ts$|\/tsx\//.test(u))).toEqual([]);
    expect(loaded.filter((u) => /parquet-wasm|apache-arrow|@aws-sdk|@smithy/.test(u))).toEqual([]);
  });

  it('(the trace sees a command that does read Parquet: scan)', async () => {
    const loaded = await modulesLoadedBy(['scan', table, '--limit', '1']);
    expect(loaded.some((u) => u.includes('parquet-wasm'))).toBe(true);
  });
});
