/**
 * A moto S3 server on loopback, from the venv scripts/setup-python.sh builds.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';

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

/** A port nobody listens on right now (bind port 0, read it, release it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function answers(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** Starts moto_server on 127.0.0.1 and waits until it answers. */
export async function startMoto(options: { venv?: string; timeoutMs?: number } = {}): Promise<MotoServer> {
  const bin = join(options.venv ?? VENV, 'bin', 'moto_server');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run scripts/setup-python.sh`);
  const timeoutMs = options.timeoutMs ?? 60_000;

  // Another process may take the free port before moto binds it; then try another one.
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const child = spawn(bin, ['-H', '127.0.0.1', '-p', String(port)], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...TEST_AWS_ENV },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      // Keep the start of the output (the reason it died) and not every request line after.
      if (stderr.length < 20_000) stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let dead = false;
    void exited.then(() => {
      dead = true;
    });

    const deadline = Date.now() + timeoutMs;
    while (!dead && Date.now() < deadline && !(await answers(endpoint))) {
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!dead && (await answers(endpoint))) {
      return {
        endpoint,
        pid: child.pid ?? -1,
        async stop() {
          if (dead) return;
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
          await exited;
          clearTimeout(killer);
        },
      };
    }
    child.kill('SIGKILL');
    await exited;
    lastError = new Error(`moto_server on port ${port} did not start:\n${stderr.slice(0, 4000)}`);
  }
  throw lastError ?? new Error('moto_server did not start');
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
