/**
 * A measured S3 link (bench/cost-per-gb.ts LINK=measured): an HTTPS proxy in front of moto on loopback
 * that behaves, per connection, like one connection to S3 as bench/lambda-cost.ts S3_LINK describes it
 * (first-byte latency, bandwidth cap each way), so that a rewrite's wall time holds the S3 wait it
 * really has, overlap with its CPU included, instead of a model of it.
 *
 * - TLS with a certificate for 127.0.0.1/localhost made by the `openssl` CLI into a temporary
 *   directory; a client trusts it through `NODE_EXTRA_CA_CERTS=<certPath>` (read at process start,
 *   so children only). Over https lib/io/s3.ts createS3Client sends file bodies as UNSIGNED-PAYLOAD,
 *   as on AWS, and the client pays TLS as it does on AWS.
 * - Each request (method, path, query, headers but hop-by-hop ones, Host included) goes to moto with
 *   its body streamed; the answer streams back.
 * - Per client connection: request bodies and response bodies are paced to `mbPerS` each way (no credit
 *   for idle time); the response headers go out no earlier than `firstByteMs` after the request was
 *   received whole. moto's own time is inside that latency when shorter; when longer it adds to the
 *   wall time (stats.late says how much).
 *
 *   npx tsx bench/s3-link.ts     (self-check: a 32 MiB PUT and a 4 MB GET through the link and unpaced, to an
 *                                 upstream that answers at once instead of moto)
 *
 * Nothing here is imported by lib/ or the tests.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, createServer as createHttpServer, request, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createS3Client } from '../lib/io/s3.js';
import { TEST_AWS_ENV } from '../test/support/moto.js';
import { S3_LINK, type S3Link } from './lambda-cost.js';
import { median, nodeChildArgs, REPO_ROOT } from './report.js';

export interface LinkStats {
  /** TLS connections the clients opened. */
  connections: number;
  requests: number;
  /** Requests that arrived over TLS: all of them, unless a client bypassed the link. */
  tlsRequests: number;
  /** Request and response body bytes. */
  bytesUp: number;
  bytesDown: number;
  /** Requests by method and SigV4 payload hash (x-amz-content-sha256): 'PUT UNSIGNED-PAYLOAD', 'POST sha256', 'GET empty', … */
  payloads: Record<string, number>;
  /**
   * By method: answers moto gave only after the first-byte latency had passed, and the seconds beyond
   * it, summed over requests that may overlap (then in the wall time).
   */
  late: Record<string, { answers: number; s: number }>;
  /** Requests the proxy failed to carry (moto unreachable, a client gone). */
  errors: number;
}

export interface S3LinkProxy {
  /** `https://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** The certificate a client must trust (NODE_EXTRA_CA_CERTS). */
  readonly certPath: string;
  readonly link: S3Link;
  /** Counts since start (live). */
  readonly stats: LinkStats;
  stop(): Promise<void>;
}

/** Pieces a body is paced in: ~0.8 ms each at 85 MB/s. */
const SLICE = 64 * 1024;
/** Shorter waits are carried into the next slice's (timers are not finer than ~1 ms). */
const MIN_SLEEP_MS = 2;
/** Per hop, not forwarded: the proxy's own connections and framing carry them. `expect`: the proxy has answered 100-continue itself. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'expect']);
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** One direction of one connection: bytes leave no faster than `bytesPerMs`, idle time earns no credit. */
class Pacer {
  private idleAt = 0;

  constructor(private readonly bytesPerMs: number) {}

  async take(bytes: number): Promise<void> {
    const now = performance.now();
    this.idleAt = Math.max(this.idleAt, now) + bytes / this.bytesPerMs;
    if (this.idleAt - now >= MIN_SLEEP_MS) await sleep(this.idleAt - now);
  }
}

function paced(pacer: Pacer, count: (bytes: number) => void): (source: AsyncIterable<Buffer>) => AsyncGenerator<Buffer> {
  return async function* (source) {
    for await (const chunk of source) {
      for (let at = 0; at < chunk.length; at += SLICE) {
        const slice = chunk.subarray(at, at + SLICE);
        await pacer.take(slice.length);
        count(slice.length);
        yield slice;
      }
    }
  };
}

function forwarded(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([k, v]) => v !== undefined && !HOP_BY_HOP.has(k)));
}

function payloadLabel(value: string | string[] | undefined): string {
  if (typeof value !== 'string') return 'none';
  if (value === EMPTY_SHA256) return 'empty';
  return /^[0-9a-f]{64}$/.test(value) ? 'sha256' : value;
}

/** A self-signed certificate for 127.0.0.1 and localhost, made by the openssl CLI. */
function makeCertificate(dir: string): { key: string; cert: string } {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  return { key, cert };
}

/** Starts the link on a free loopback port in front of `upstream` (moto's `http://127.0.0.1:<port>`). */
export async function startS3Link(upstream: string, link: S3Link = S3_LINK): Promise<S3LinkProxy> {
  const target = new URL(upstream);
  if (target.protocol !== 'http:') throw new Error(`the link forwards to plain http, got ${upstream}`);
  const dir = mkdtempSync(join(tmpdir(), 'packice-s3-link-'));
  let files: { key: string; cert: string };
  try {
    files = makeCertificate(dir);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`s3-link: openssl could not make a certificate: ${String(e)}`);
  }
  const stats: LinkStats = { connections: 0, requests: 0, tlsRequests: 0, bytesUp: 0, bytesDown: 0, payloads: {}, late: {}, errors: 0 };
  const bytesPerMs = (link.mbPerS * 1e6) / 1000;
  const pacers = new WeakMap<object, { up: Pacer; down: Pacer }>();
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

  async function carry(req: IncomingMessage, res: ServerResponse): Promise<void> {
    stats.requests++;
    if ((req.socket as TLSSocket).encrypted) stats.tlsRequests++;
    const label = `${req.method} ${payloadLabel(req.headers['x-amz-content-sha256'])}`;
    stats.payloads[label] = (stats.payloads[label] ?? 0) + 1;
    let pacer = pacers.get(req.socket);
    if (!pacer) pacers.set(req.socket, (pacer = { up: new Pacer(bytesPerMs), down: new Pacer(bytesPerMs) }));
    const out = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: forwarded(req.headers), agent });
    const answered = new Promise<IncomingMessage>((resolve, reject) => out.once('response', resolve).once('error', reject));
    answered.catch(() => undefined); // handled below; not an unhandled rejection while the body still goes up
    await pipeline(req, paced(pacer.up, (n) => (stats.bytesUp += n)), out);
    const firstByteAt = performance.now() + link.firstByteMs;
    const answer = await answered;
    const late = performance.now() - firstByteAt;
    if (late > 0) {
      const m = (stats.late[req.method ?? ''] ??= { answers: 0, s: 0 });
      m.answers++;
      m.s += late / 1000;
    } else {
      await sleep(-late);
    }
    res.writeHead(answer.statusCode ?? 502, forwarded(answer.headers));
    await pipeline(answer, paced(pacer.down, (n) => (stats.bytesDown += n)), res);
  }

  const server = createServer({ key: readFileSync(files.key), cert: readFileSync(files.cert) }, (req, res) => {
    carry(req, res).catch((e: unknown) => {
      stats.errors++;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`s3-link: ${String(e)}`);
      else res.destroy();
    });
  });
  server.on('secureConnection', () => stats.connections++);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `https://127.0.0.1:${port}`,
    certPath: files.cert,
    link,
    stats,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Seconds moto answered past the first-byte latency, all methods (requests may overlap). */
export function lateSeconds(stats: LinkStats): number {
  return Object.values(stats.late).reduce((n, m) => n + m.s, 0);
}

/** `after` minus `before`: one run's share of the counts. */
export function linkStatsSince(after: LinkStats, before: LinkStats): LinkStats {
  const payloads: Record<string, number> = {};
  for (const [k, n] of Object.entries(after.payloads)) if (n - (before.payloads[k] ?? 0) > 0) payloads[k] = n - (before.payloads[k] ?? 0);
  const late: LinkStats['late'] = {};
  for (const [k, { answers, s }] of Object.entries(after.late)) {
    const was = before.late[k] ?? { answers: 0, s: 0 };
    if (answers > was.answers) late[k] = { answers: answers - was.answers, s: s - was.s };
  }
  return {
    connections: after.connections - before.connections,
    requests: after.requests - before.requests,
    tlsRequests: after.tlsRequests - before.tlsRequests,
    bytesUp: after.bytesUp - before.bytesUp,
    bytesDown: after.bytesDown - before.bytesDown,
    payloads,
    late,
    errors: after.errors - before.errors,
  };
}

// ---------------------------------------------------------------------------------------------
// Self-check: is the pacing what S3_LINK says?

const SCRIPT = fileURLToPath(import.meta.url);
const PUT_BYTES = 32 * 2 ** 20;
const GET_BYTES = 4e6;
const TIMES = 3;

interface CheckTimes {
  readonly putS: readonly number[];
  readonly getS: readonly number[];
}

/** Child: through `endpoint` with lib/'s client, as a rewrite's child talks to it; one request at a time. */
async function checkClient(endpoint: string, bucket: string): Promise<void> {
  const client = createS3Client({ endpoint });
  const body = randomBytes(PUT_BYTES);
  // The first request opens the connection (TCP + TLS handshake), outside the timings.
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'get', Body: body.subarray(0, GET_BYTES) }));
  const time = async (f: () => Promise<unknown>): Promise<number> => {
    const t = performance.now();
    await f();
    return (performance.now() - t) / 1000;
  };
  const putS: number[] = [];
  const getS: number[] = [];
  for (let i = 0; i < TIMES; i++) {
    putS.push(await time(() => client.send(new PutObjectCommand({ Bucket: bucket, Key: 'put', Body: body }))));
    getS.push(await time(async () => {
      const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'get' }));
      const got = await r.Body!.transformToByteArray();
      if (got.length !== GET_BYTES) throw new Error(`GET returned ${got.length} bytes`);
    }));
  }
  client.destroy();
  console.log(JSON.stringify({ putS, getS } satisfies CheckTimes));
}

/**
 * Stands in for moto in the check: answers at once (a PUT once its body is in, a GET with GET_BYTES),
 * so that what the link adds is all there is to time.
 */
async function instantUpstream(): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const body = Buffer.alloc(GET_BYTES, 1);
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'GET') res.writeHead(200, { 'content-length': GET_BYTES, etag: '"x"' }).end(body);
      else res.writeHead(200, { 'content-length': 0, etag: '"x"' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function selfCheck(): Promise<void> {
  const upstream = await instantUpstream();
  const execFileAsync = promisify(execFile);
  const s = (xs: readonly number[]): string => `${xs.map((x) => x.toFixed(3)).join(', ')} s (median ${median(xs).toFixed(3)})`;
  const times: CheckTimes[] = [];
  try {
    for (const link of [S3_LINK, { mbPerS: Infinity, firstByteMs: 0 }]) {
      const proxy = await startS3Link(upstream.endpoint, link);
      try {
        const [cmd, args] = nodeChildArgs(SCRIPT, ['--client', proxy.endpoint, 'check']);
        // Not execFileSync: this process serves the link while the child runs.
        const child = await execFileAsync(cmd, args, { cwd: REPO_ROOT, env: { ...process.env, ...TEST_AWS_ENV, NODE_EXTRA_CA_CERTS: proxy.certPath } });
        const r = JSON.parse(child.stdout.trim().split('\n').pop() ?? '') as CheckTimes;
        times.push(r);
        console.log(Number.isFinite(link.mbPerS) ? `link ${link.mbPerS} MB/s, ${link.firstByteMs} ms first byte:` : 'unpaced (client, TLS and proxy alone):');
        console.log(`  PUT 32 MiB: ${s(r.putS)}\n  GET 4 MB:   ${s(r.getS)}\n  stats: ${JSON.stringify(proxy.stats)}`);
      } finally {
        await proxy.stop();
      }
    }
  } finally {
    await upstream.stop();
  }
  const expected = (bytes: number): string => (S3_LINK.firstByteMs / 1000 + bytes / (S3_LINK.mbPerS * 1e6)).toFixed(3);
  const [paced, bare] = times;
  console.log(`paced - unpaced (medians): PUT 32 MiB ${(median(paced.putS) - median(bare.putS)).toFixed(3)} s (S3_LINK: ${expected(PUT_BYTES)} s), GET 4 MB ${(median(paced.getS) - median(bare.getS)).toFixed(3)} s (S3_LINK: ${expected(GET_BYTES)} s)`);
}

if (process.argv[1] === SCRIPT) {
  if (process.argv[2] === '--client') await checkClient(process.argv[3], process.argv[4]);
  else await selfCheck();
}
