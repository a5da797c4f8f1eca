/**
 * What an S3 command prints when the setup is wrong: one line saying what to set, never a raw
 * SDK error or stack; and no AWS SDK Node-version warning on a command that works.
 */
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { fileIOFor } from '../../lib/io/index.js';
import { runBin } from '../support/cli.js';
import { REPO_ROOT } from '../support/fixtures.js';
import { freshBucket, testS3Endpoint } from '../support/s3.js';
import { smallTable } from '../support/small-table.js';

let location: string;
/** As a user's shell has it: no test switch for the SDK's warning. */
const USER_ENV = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: undefined, AWS_EC2_METADATA_DISABLED: 'true' };

beforeAll(async () => {
  location = `s3://${await freshBucket()}/warehouse/events`;
  await smallTable(fileIOFor(location, { s3Endpoint: testS3Endpoint() }), location, 2);
});

/** The run failed with exactly one line on stderr, which it returns. */
function oneLine(r: { status: number | null; stdout: string; stderr: string }): string {
  expect(r.status).toBe(1);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  return lines[0];
}

describe('S3 commands', () => {
  it('print no AWS SDK warning', async () => {
    const r = await runBin(['--s3-endpoint', testS3Endpoint(), 'info', location], { env: USER_ENV });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('data files');
  });

  it('(the SDK itself warns under Node 20 without the switch: the test above proves packice silences it)', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, AWS_EC2_METADATA_DISABLED: 'true' };
    delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    const script =
      "const { S3Client, ListBucketsCommand } = require('@aws-sdk/client-s3');" +
      `new S3Client({ endpoint: ${JSON.stringify(testS3Endpoint())}, forcePathStyle: true }).send(new ListBucketsCommand({})).then(() => undefined);`;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: REPO_ROOT, env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.includes('NodeVersionSupportWarning')).toBe(Number(process.versions.node.split('.')[0]) < 22);
  });

  it('name the missing bucket and what to check', async () => {
    const line = oneLine(await runBin(['--s3-endpoint', testS3Endpoint(), 'info', 's3://packice-no-such-bucket/t'], { env: USER_ENV }));
    expect(line).toContain('the bucket packice-no-such-bucket does not exist at the S3 endpoint');
    expect(line).toContain('--s3-endpoint / AWS_ENDPOINT_URL_S3');
  });

  it('say what to set for an endpoint that is not a URL, or not there', async () => {
    const bad = oneLine(await runBin(['--s3-endpoint', 'not a url', 'info', location], { env: USER_ENV }));
    expect(bad).toContain('the S3 endpoint "not a url" is not a URL: set --s3-endpoint or AWS_ENDPOINT_URL_S3');
    const closed = oneLine(await runBin(['--s3-endpoint', 'http://127.0.0.1:9', 'info', location], { env: { ...USER_ENV, AWS_MAX_ATTEMPTS: '1' } }));
    expect(closed).toContain('cannot reach the S3 endpoint http://127.0.0.1:9 (ECONNREFUSED): check --s3-endpoint / AWS_ENDPOINT_URL_S3');
  });

  it('say what to set when there are no credentials', async () => {
    const env = {
      ...USER_ENV, AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined, AWS_SESSION_TOKEN: undefined, AWS_PROFILE: undefined,
      AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials', AWS_CONFIG_FILE: '/nonexistent/config',
      AWS_CONTAINER_CREDENTIALS_FULL_URI: undefined, AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: undefined, AWS_WEB_IDENTITY_TOKEN_FILE: undefined,
    };
    const line = oneLine(await runBin(['--s3-endpoint', testS3Endpoint(), 'info', location], { env }));
    expect(line).toContain('no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE');
  });
});
