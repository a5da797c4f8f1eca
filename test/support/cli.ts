/**
 * Running the packice CLI in-process: `runCli` through `buildProgram` (errors reject), and
 * `runMain` through `main` as bin/packice.js does (errors become stderr and an exit code).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { buildProgram, main } from '../../lib/cli/main.js';
import { REPO_ROOT } from './fixtures.js';

/** Runs `packice <args>` and returns what it printed; a failed command rejects with its error. */
export async function runCli(args: readonly string[]): Promise<string> {
  let out = '';
  await buildProgram((s) => {
    out += s;
  }).parseAsync(['node', 'packice', ...args]);
  return out;
}

export interface MainResult {
  readonly exitCode: number | undefined;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `main(['node', 'packice', ...args])` with process.stdout/stderr writes and
 * process.exitCode captured; all three are restored afterwards.
 */
export async function runMain(args: readonly string[]): Promise<MainResult> {
  const savedOut = process.stdout.write;
  const savedErr = process.stderr.write;
  const savedCode = process.exitCode;
  let stdout = '';
  let stderr = '';
  process.exitCode = undefined;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk);
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk);
    return true;
  }) as typeof process.stderr.write;
  let exitCode: number | undefined;
  try {
    await main(['node', 'packice', ...args]);
    exitCode = process.exitCode === undefined ? undefined : Number(process.exitCode);
  } finally {
    process.stdout.write = savedOut;
    process.stderr.write = savedErr;
    process.exitCode = savedCode;
  }
  return { exitCode, stdout, stderr };
}

export interface BinResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `bin/packice.js <args>` as a child process, the way a person does (it runs dist/, which
 * test/global-setup.ts builds from the sources under test). `env` entries set to undefined are removed.
 */
export function runBin(args: readonly string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<BinResult> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...options.env })) if (v !== undefined) env[k] = v;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, ...args], { cwd: options.cwd ?? REPO_ROOT, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ status: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

export const BIN = join(REPO_ROOT, 'bin', 'packice.js');
