/**
 * The run's S3 server (started by test/global-setup.ts) and fresh buckets on it.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { TEST_AWS_ENV, createBucket } from './moto.js';

// SDK clients made inside the code under test sign with these (moto accepts any).
Object.assign(process.env, TEST_AWS_ENV);

/** The endpoint of the run's moto server, e.g. `http://127.0.0.1:40123`. */
export function testS3Endpoint(): string {
  const endpoint = inject('s3Endpoint') || process.env.PACKICE_TEST_S3_ENDPOINT;
  if (!endpoint) {
    throw new Error(`no S3 test server: ${inject('s3Unavailable') || 'test/global-setup.ts did not run'}`);
  }
  return endpoint;
}

let made = 0;

/** A new empty bucket with a unique name; call it once per test file (or per test). */
export async function freshBucket(): Promise<string> {
  const name = `packice-${process.pid}-${++made}-${randomBytes(4).toString('hex')}`;
  await createBucket(testS3Endpoint(), name);
  return name;
}
