/**
 * Start-up time of the `packice` command, as a person at a shell pays it: the wall time of a
 * whole child process for `packice --help` and `packice info <demo table>`, next to a bare
 * `node -e 0` measured in the same run (the floor no Node CLI goes below), each the median of
 * several runs taken in turn. Also the same commands from the TypeScript sources through tsx
 * (PACKICE_FROM_SOURCE=1), which is how bin/packice.js ran before the compiled build.
 *
 *   npx tsx bench/startup.ts [runs=9] [demo-folder=.cache/bench/startup-demo]
 *
 * The demo table is built with `packice demo` (into the folder, once) when it is not there.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'packice.js');
const runs = Number(process.argv[2] ?? 9);
const demo = resolve(process.argv[3] ?? join(ROOT, '.cache', 'bench', 'startup-demo'));

function run(args: readonly string[], env: NodeJS.ProcessEnv = process.env): number {
  const start = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (!existsSync(join(demo, 'metadata'))) {
  process.stderr.write(`building the demo table in ${demo} (once)\n`);
  const r = spawnSync(process.execPath, [BIN, 'demo', demo, '--json'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error('packice demo failed');
}
const build = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
if (build.status !== 0) throw new Error('scripts/build.mjs failed');

const source = { ...process.env, PACKICE_FROM_SOURCE: '1' };
const cases: [string, readonly string[], NodeJS.ProcessEnv?][] = [
  ['node -e 0', ['-e', '0']],
  ['packice --help', [BIN, '--help']],
  ['packice info <demo>', [BIN, 'info', demo]],
  ['packice --help (sources, tsx)', [BIN, '--help'], source],
  ['packice info <demo> (sources, tsx)', [BIN, 'info', demo], source],
];
const times = cases.map((): number[] => []);
const loadBefore = loadavg()[0];
// Round-robin, so a change in machine load touches every case alike.
for (let i = 0; i < runs; i++) cases.forEach(([, args, env], c) => times[c].push(run(args, env)));
const base = median(times[0]);
process.stdout.write(`start-up, median of ${runs} runs (${cpus().length} CPUs, load ${loadBefore.toFixed(1)} -> ${loadavg()[0].toFixed(1)}):\n`);
process.stdout.write('| command | median | min | max | over `node -e 0` |\n|---|---:|---:|---:|---:|\n');
cases.forEach(([name], c) => {
  const m = median(times[c]);
  const over = c === 0 ? '' : `+${Math.round(m - base)} ms`;
  process.stdout.write(`| \`${name}\` | ${Math.round(m)} ms | ${Math.round(Math.min(...times[c]))} ms | ${Math.round(Math.max(...times[c]))} ms | ${over} |\n`);
});
