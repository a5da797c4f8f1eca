/**
 * What every benchmark shares: the machine it ran on, child processes that answer with one
 * JSON line, the Markdown it prints, and its own section of BENCHMARKS.md (`--write`).
 * Nothing here is imported by lib/ or by the tests.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BENCHMARKS_MD = join(REPO_ROOT, 'BENCHMARKS.md');
export const VENV_PYTHON = join(REPO_ROOT, '.cache', 'venv', 'bin', 'python');
export const JAVA_CLASSPATH = join(REPO_ROOT, '.cache', 'interop', 'classpath.txt');
/** Spark 3.5 + Iceberg's Spark runtime (bench/spark), built by scripts/setup-spark.sh. */
export const SPARK_CLASSPATH = join(REPO_ROOT, '.cache', 'spark', 'classpath.txt');
/** The JVM flags Spark needs on Java 17 (--add-opens) and its driver heap, as a `java @file` argument file. */
export const SPARK_JVM_OPTIONS = join(REPO_ROOT, 'bench', 'spark', 'jvm-options.txt');

export interface Args {
  /** Positional arguments, flags removed. */
  readonly positional: readonly string[];
  /** `--write`: replace this bench's section of BENCHMARKS.md. */
  readonly write: boolean;
  /** `--no-baseline`: skip the reference implementations. */
  readonly baseline: boolean;
}

export function parseArgs(argv: readonly string[]): Args {
  const positional = argv.filter((a) => !a.startsWith('--'));
  for (const flag of argv.filter((a) => a.startsWith('--'))) {
    if (flag !== '--write' && flag !== '--no-baseline') throw new Error(`unknown flag ${flag} (known: --write, --no-baseline)`);
  }
  return { positional, write: argv.includes('--write'), baseline: !argv.includes('--no-baseline') };
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** One line per phase of a child process, measured inside that process. */
export interface PhaseResult {
  /** Wall-clock seconds of each timed run. */
  readonly wallS: readonly number[];
  /** CPU seconds (all threads of the process) of each timed run. */
  readonly cpuS: readonly number[];
  /** Peak resident set of the whole process, KiB (getrusage ru_maxrss or VmHWM). */
  readonly maxRssKiB: number;
  /** Free-form facts the child reports (library version, row counts, …). */
  readonly info?: Readonly<Record<string, string | number | boolean>>;
}

/** Runs a child that prints one JSON line (its last line) on stdout; its stderr passes through. */
export function runChild<T = PhaseResult>(command: string, args: readonly string[], what: string): T {
  const child = spawnSync(command, args, { encoding: 'utf8', cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.error) throw new Error(`${what}: cannot start ${command}: ${child.error.message}`);
  if (child.status !== 0) throw new Error(`${what} failed (exit ${child.status ?? child.signal}):\n${child.stderr}`);
  const last = child.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`${what}: expected a JSON line on stdout, got:\n${child.stdout}\n${child.stderr}`);
  }
}

/** This same script again in a fresh Node process (tsx loader included), with `flags` before it. */
export function nodeChildArgs(script: string, args: readonly string[], flags: readonly string[] = []): [string, string[]] {
  return [process.execPath, [...flags, ...process.execArgv, script, ...args]];
}

/**
 * The V8 flags the rewrite Lambda's exec wrapper (cdk/node-flags.sh) starts node with: children
 * that rewrite run with them, as the function does. `LAMBDA_FLAGS=0` leaves them out.
 */
export function lambdaNodeFlags(): string[] {
  if (process.env.LAMBDA_FLAGS === '0') return [];
  const script = readFileSync(join(REPO_ROOT, 'cdk', 'node-flags.sh'), 'utf8');
  const exec = script.split('\n').find((l) => l.startsWith('exec '));
  return exec?.match(/--[\w-]+=\S+/g) ?? [];
}

function firstLine(command: string, args: readonly string[]): string | null {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (r.status !== 0 || r.error) return null;
  return `${r.stdout}${r.stderr}`.trim().split('\n')[0] ?? null;
}

/** The venv's Python, built by scripts/setup-python.sh (idempotent); null when it cannot be built. */
export function ensurePython(): string | null {
  const r = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'setup-python.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  return r.status === 0 && existsSync(VENV_PYTHON) ? VENV_PYTHON : null;
}

/** The interop harness classpath from scripts/setup-java.sh (idempotent); null without java/mvn. */
export function ensureJavaClasspath(): string | null {
  const r = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'setup-java.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  return r.status === 0 && existsSync(JAVA_CLASSPATH) ? readFileSync(JAVA_CLASSPATH, 'utf8').trim() : null;
}

/** The Spark bench's classpath from scripts/setup-spark.sh (idempotent; ~300 MB into .cache/m2 the first time); null without java/mvn. */
export function ensureSparkClasspath(): string | null {
  const r = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'setup-spark.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  return r.status === 0 && existsSync(SPARK_CLASSPATH) ? readFileSync(SPARK_CLASSPATH, 'utf8').trim() : null;
}

export interface Machine {
  readonly cpu: string;
  readonly nproc: number;
  readonly memGiB: number;
  readonly kernel: string;
  readonly node: string;
}

export function machine(): Machine {
  let cpu = 'unknown CPU';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu;
  } catch {
    // not Linux: keep "unknown"
  }
  const nproc = Number(firstLine('nproc', []) ?? availableParallelism());
  return {
    cpu,
    nproc,
    memGiB: totalmem() / 1024 ** 3,
    kernel: firstLine('uname', ['-sr']) ?? process.platform,
    node: process.version,
  };
}

export function pythonVersion(python: string): string | null {
  return firstLine(python, ['--version']);
}

/** `openjdk version "17.0.15" 2025-04-15` → `Java 17.0.15 (openjdk)`. */
export function javaVersion(): string | null {
  const line = firstLine('java', ['-version']);
  const m = line ? /^(\S+) version "([^"]+)"/.exec(line) : null;
  return m ? `Java ${m[2]} (${m[1]})` : line;
}

/** The 1-, 5- and 15-minute load averages, e.g. "3.91 4.02 4.20". */
export function loadAverage(): string {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
}

export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** 1234567.8 → "1,234,568". */
export function int(x: number): string {
  return Math.round(x).toLocaleString('en-US');
}

export function mib(kib: number): string {
  return `${Math.round(kib / 1024)} MiB`;
}

/** Replaces the text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` in BENCHMARKS.md. */
export function writeSection(name: string, body: string): void {
  const open = `<!-- bench:${name} -->`;
  const close = `<!-- /bench:${name} -->`;
  const text = existsSync(BENCHMARKS_MD) ? readFileSync(BENCHMARKS_MD, 'utf8') : '# Benchmarks\n';
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  const block = `${open}\n${body.trim()}\n${close}`;
  let next: string;
  if (start >= 0 && end > start) next = text.slice(0, start) + block + text.slice(end + close.length);
  else if (start < 0 && end < 0) next = `${text.trimEnd()}\n\n${block}\n`;
  else throw new Error(`${BENCHMARKS_MD}: markers for "${name}" are unbalanced: fix them by hand`);
  writeFileSync(BENCHMARKS_MD, next);
  console.log(`wrote the "${name}" section of ${BENCHMARKS_MD}`);
}

/** The Machine and load lines every section carries. */
export function machineLines(m: Machine, extra: readonly string[], loadBefore: string, loadAfter: string): string[] {
  return [
    `- **Machine:** ${m.cpu}, ${m.nproc} CPUs (\`nproc\`), ${m.memGiB.toFixed(1)} GiB RAM, ${m.kernel}; ` +
      [`Node ${m.node}`, ...extra].join(', '),
    `- **Load average** (1/5/15 min) ${loadBefore} at the start, ${loadAfter} at the end. The machine is shared: ` +
      'wall-clock rates move with the load; the per-CPU-second rates move less.',
    `- **Date:** ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}`,
  ];
}

/** CPU seconds of this process's main thread so far (Linux: /proc; undefined elsewhere). */
export function mainThreadCpuS(): number | undefined {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return undefined;
  }
}
