/**
 * Planning at scale (issue 11, must-show 2): packice's compaction planner against Java Iceberg
 * 1.12's `newScan().planFiles()` on metadata-only tables of N data files in M manifests (built
 * by bench/compaction-tables.ts buildMetadataTable, cached in .cache/bench/planning), each
 * implementation in a fresh process per table, `runs` plans per process, median reported with
 * the process's peak RSS.
 *
 *   npx tsx bench/planning.ts [tables=100000x100,100000x1000,1000000x100,1000000x1000] [runs=3] [--write] [--no-baseline]
 *
 * --write replaces the planning section of BENCHMARKS.md. PACKICE_BENCH_BASE=<dir> (a checkout of
 * another commit, with node_modules) also plans each table with that checkout's planner, just
 * before this one's (interleaved), as the row "packice <PACKICE_BENCH_BASE_LABEL>".
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { planPhase } from './compaction-phases.js';
import { buildMetadataTable } from './compaction-tables.js';
import {
  ensureJavaClasspath, int, javaVersion, loadAverage, machine, machineLines, markdownTable, median, mib, nodeChildArgs, parseArgs,
  type PhaseResult, REPO_ROOT, writeSection,
} from './report.js';

const SCRIPT = fileURLToPath(import.meta.url);
const CACHE = join(REPO_ROOT, '.cache', 'bench', 'planning');

interface Run {
  readonly result: PhaseResult | null;
  readonly error?: string;
  readonly processS: number;
}

function run(command: string, args: readonly string[], what: string): Run {
  console.log(`  ${what} …`);
  const t = performance.now();
  const child = spawnSync(command, args, { encoding: 'utf8', cwd: REPO_ROOT, maxBuffer: 256 * 2 ** 20, stdio: ['ignore', 'pipe', 'pipe'] });
  const processS = (performance.now() - t) / 1000;
  if (child.error || child.status !== 0) {
    const oom = /heap out of memory|Reached heap limit|OutOfMemoryError/.test(child.stderr ?? '');
    const error = oom ? 'out of memory' : (child.error?.message ?? child.stderr.trim().split('\n').slice(-3).join(' / '));
    console.error(`${what} failed: ${error}`);
    return { result: null, error, processS };
  }
  return { result: JSON.parse(child.stdout.trim().split('\n').pop() ?? '') as PhaseResult, processS };
}

const s2 = (x: number): string => x.toFixed(2);
const info = (r: PhaseResult, k: string): string => String(r.info?.[k] ?? '');

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const tables = (args.positional[0] ?? '100000x100,100000x1000,1000000x100,1000000x1000').split(',').map((t) => {
    const [files, manifests] = t.split('x').map(Number);
    return { files, manifests };
  });
  const runs = Number(args.positional[1] ?? 3);
  const m = machine();
  const load0 = loadAverage();
  const classpath = args.baseline ? ensureJavaClasspath() : null;
  let javaDir: string | null = null;
  if (classpath) {
    javaDir = mkdtempSync(join(tmpdir(), 'packice-bench-java-'));
    const javac = spawnSync('javac', ['-d', javaDir, '-cp', classpath, join(REPO_ROOT, 'bench', 'baselines', 'PlanFiles.java')], { encoding: 'utf8' });
    if (javac.status !== 0) throw new Error(`javac failed: ${javac.stderr}`);
  }
  const rows: string[][] = [];
  const inputs: string[] = [];
  try {
    for (const { files, manifests } of tables) {
      const location = join(CACHE, `plan-${files}-${manifests}`);
      const facts = await buildMetadataTable(location, files, (s) => console.log(s), Math.ceil(files / manifests));
      inputs.push(`${int(files)} files in ${int(manifests)} manifests: ${facts.description} (built in ${facts.buildSeconds.toFixed(1)} s)`);
      const label = `${int(files)} files / ${int(manifests)} manifests`;
      const loadAt = loadAverage();
      const [cmd, rest] = nodeChildArgs(SCRIPT, ['--phase', location, String(runs)]);
      const baseDir = process.env.PACKICE_BENCH_BASE;
      const baseLabel = process.env.PACKICE_BENCH_BASE_LABEL ?? 'base';
      const base = baseDir
        ? run(cmd, [...rest.slice(0, -4), join(baseDir, 'bench', 'planning.ts'), ...rest.slice(-3)], `packice ${baseLabel}, ${label}`)
        : null;
      const ours = run(cmd, rest, `packice, ${label}`);
      const java = javaDir ? run('java', ['-cp', `${javaDir}:${classpath}`, 'PlanFiles', location, String(runs), 'off'], `Java, ${label}`) : null;
      const row = (name: string, r: Run | null, extra: (p: PhaseResult) => string): void => {
        if (!r) return;
        if (!r.result) {
          rows.push([label, name, `failed: ${r.error ?? ''}`, '', '', '', '', '', loadAt]);
          return;
        }
        const p = r.result;
        console.log(`  ${name}: ${JSON.stringify(p)}`);
        rows.push([
          label, name, `**${s2(median(p.wallS))}**`, p.wallS.map(s2).join(', '), s2(median(p.cpuS)), mib(p.maxRssKiB),
          `${int(Number(info(p, 'tasks')))} / ${int(Number(info(p, 'deletes')))}`, extra(p), loadAt,
        ]);
      };
      const ourNotes = (p: PhaseResult): string =>
        `${int(Number(info(p, 'candidates')))} candidates kept; ${info(p, 'groups')} groups of ${int(Number(info(p, 'groupInputs')))} files; ` +
        `plan JSON ${info(p, 'planJsonMiB')} MiB; GC pauses ${info(p, 'gcS').split(',').map(Number).map(s2).join(', ')} s`;
      if (baseDir) row(`packice \`planCompaction\` ${baseLabel}`, base, ourNotes);
      row('packice `planCompaction`', ours, ourNotes);
      row(`Java \`newScan().planFiles()\` ${java?.result ? info(java.result, 'version') : ''}`, java, (p) =>
        `table load ${s2(Number(info(p, 'loadS')))} s, ${info(p, 'processors')} planning threads`);
    }
  } finally {
    if (javaDir) rmSync(javaDir, { recursive: true, force: true });
  }
  const load1 = loadAverage();
  const table = markdownTable(
    ['table', 'implementation', 'median s', 'each run, s', 'CPU s (median run)', 'peak RSS', 'tasks / deletes', 'notes', 'load (1/5/15) before'],
    rows,
  );
  const body = [
    '## Planning at scale',
    '',
    `- **Command:** \`${process.env.PACKICE_BENCH_BASE ? `PACKICE_BENCH_BASE=<checkout of ${process.env.PACKICE_BENCH_BASE_LABEL ?? 'base'}> ` : ''}npx tsx bench/planning.ts ${tables.map((t) => `${t.files}x${t.manifests}`).join(',')} ${runs}${args.write ? ' --write' : ''}\` ` +
      '(`npm run bench:planning`).',
    ...machineLines(m, [javaVersion() ?? 'no Java'], load0, load1),
    ...inputs.map((s) => `- **Input:** ${s}.`),
    `- **Runs:** ${runs} plans per implementation, all in one fresh process (the first includes JIT warm-up); median wall-clock ` +
      'seconds, the CPU seconds of that run, and the peak RSS of the whole process.',
    '',
    table,
    '',
    'packice plans from the manifests alone: it reads the delete manifests, then streams the data manifests (8 at a ' +
      'time; their bytes read on the main thread and decoded into columns on worker threads, `packice.plan.decode-workers`, ' +
      'by default one per vCPU from 2 vCPUs and 32 MiB of data manifests, else on the main thread; column metrics skipped, as Java ' +
      'reads without `includeColumnStats()`), pairs each data file with its deletes and keeps only the candidates (too small, too large, ' +
      'with deletes, another spec or format) column by column (typed arrays and one array of paths, lib/compaction/candidate-store.ts), ' +
      'counting the rest; then it bin-packs per partition, keeps the best 1,000 ' +
      'groups and makes DataFiles and message JSON only for their inputs. Java\'s `planFiles` does the scan only, on a pool of one ' +
      'thread per core, holding nothing. Peak RSS is the whole process\'s over all its runs' +
      (process.env.PACKICE_BENCH_BASE
        ? `; the rows "${process.env.PACKICE_BENCH_BASE_LABEL ?? 'base'}" are the same bench with that commit's planner, run just before this one's on each table.`
        : '.'),
  ].join('\n');
  console.log(body);
  if (args.write) writeSection('planning', body);
}

if (process.argv[2] === '--phase') {
  await planPhase(process.argv[3], Number(process.argv[4]));
} else {
  await main();
}
