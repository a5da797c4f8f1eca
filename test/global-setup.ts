/**
 * vitest globalSetup: one moto S3 server for the whole run. Tests read its endpoint with
 * `testS3Endpoint()` from test/support/s3.ts. Set PACKICE_TEST_S3_ENDPOINT to use a server you
 * started yourself instead.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { REPO_ROOT, TEST_AWS_ENV, startMoto } from './support/moto.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The moto endpoint, or '' when none could be started (then `s3Unavailable` says why). */
    s3Endpoint: string;
    s3Unavailable: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Workers are forked after this runs and inherit the environment.
  Object.assign(process.env, TEST_AWS_ENV);
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

  // Tests that run bin/packice.js as a child run dist/: build it from the sources being tested.
  const compiled = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts', 'build.mjs')], { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  if (compiled.status !== 0) throw new Error(`scripts/build.mjs failed (exit ${compiled.status})`);

  const given = process.env.PACKICE_TEST_S3_ENDPOINT;
  if (given) {
    project.provide('s3Endpoint', given);
    project.provide('s3Unavailable', '');
    return async () => undefined;
  }

  const built = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'setup-python.sh')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'inherit', 'pipe'],
    encoding: 'utf8',
  });
  if (built.status !== 0) {
    // Tests that need no S3 still run; the ones that do fail with this reason.
    const reason = `scripts/setup-python.sh failed (exit ${built.status}):\n${(built.stderr ?? '').slice(-4000)}`;
    process.stderr.write(`${reason}\n`);
    project.provide('s3Endpoint', '');
    project.provide('s3Unavailable', reason);
    return async () => undefined;
  }

  const moto = await startMoto();
  const killOnExit = (): void => {
    try {
      process.kill(moto.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  process.once('exit', killOnExit);
  process.env.PACKICE_TEST_S3_ENDPOINT = moto.endpoint;
  project.provide('s3Endpoint', moto.endpoint);
  project.provide('s3Unavailable', '');

  return async () => {
    process.off('exit', killOnExit);
    await moto.stop();
  };
}
