/**
 * Starting a server process on a free loopback port and waiting until it answers; the servers the
 * tests start (moto, the Iceberg REST fixture) differ only in their command line and readiness probe.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

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

/** Whether a GET of `url` answers 2xx within a second. */
export async function answersGet(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly port: number;
  readonly pid: number;
  /** SIGTERM, then SIGKILL after 5 s; resolves when the process is gone. */
  stop(): Promise<void>;
}

export interface LoopbackServerSpec {
  /** Names the server in errors. */
  readonly name: string;
  readonly command: string;
  readonly args: (port: number, attempt: number) => readonly string[];
  readonly env: (port: number, attempt: number) => NodeJS.ProcessEnv;
  /** Readiness probe, e.g. a GET that answers once the server serves. */
  readonly ready: (endpoint: string) => Promise<boolean>;
  readonly timeoutMs: number;
  readonly pollMs?: number;
}

/** Spawns the server on a free port and waits until `ready` says so; retries on another port if it dies. */
export async function startLoopbackServer(spec: LoopbackServerSpec): Promise<LoopbackServer> {
  // Another process may take the free port before the server binds it; then try another one.
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const child = spawn(spec.command, [...spec.args(port, attempt)], { stdio: ['ignore', 'ignore', 'pipe'], env: spec.env(port, attempt) });
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

    const deadline = Date.now() + spec.timeoutMs;
    while (!dead && Date.now() < deadline && !(await spec.ready(endpoint))) {
      await new Promise((r) => setTimeout(r, spec.pollMs ?? 100));
    }
    if (!dead && (await spec.ready(endpoint))) {
      return {
        endpoint,
        port,
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
    lastError = new Error(`${spec.name} on port ${port} did not start:\n${stderr.slice(0, 4000)}`);
  }
  throw lastError ?? new Error(`${spec.name} did not start`);
}
