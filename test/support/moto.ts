/**
 * A moto S3 server on loopback, from the venv scripts/setup-python.sh builds.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { answersGet, startLoopbackServer } from './loopback-server.js';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const VENV = join(REPO_ROOT, '.cache', 'venv');

/** What S3 clients in tests sign with; moto accepts any credentials. */
export const TEST_AWS_ENV = {
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  AWS_REGION: 'us-east-1',
} as const;

export interface MotoServer {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** Starts moto_server on 127.0.0.1 and waits until it answers. */
export async function startMoto(options: { venv?: string; timeoutMs?: number } = {}): Promise<MotoServer> {
  const bin = join(options.venv ?? VENV, 'bin', 'moto_server');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run scripts/setup-python.sh`);
  const server = await startLoopbackServer({
    name: 'moto_server',
    command: bin,
    args: (port) => ['-H', '127.0.0.1', '-p', String(port)],
    env: () => ({ ...process.env, ...TEST_AWS_ENV }),
    ready: (endpoint) => answersGet(`${endpoint}/moto-api/`),
    timeoutMs: options.timeoutMs ?? 60_000,
  });
  return { endpoint: server.endpoint, pid: server.pid, stop: () => server.stop() };
}

export function testS3Client(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: TEST_AWS_ENV.AWS_REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: TEST_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: TEST_AWS_ENV.AWS_SECRET_ACCESS_KEY },
  });
}

export async function createBucket(endpoint: string, name: string): Promise<void> {
  const client = testS3Client(endpoint);
  try {
    await client.send(new CreateBucketCommand({ Bucket: name }));
  } finally {
    client.destroy();
  }
}
