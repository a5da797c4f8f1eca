/**
 * An HTTP hop in front of the moto server that lets a test act at one exact moment of another
 * party's S3 traffic: when a conditional create (`PUT` with `If-None-Match: *`, how commits
 * create `v<N>.metadata.json`) arrives, the test's hook runs to completion first, then the
 * request goes on to moto unchanged. Everything else passes straight through.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';

export type ConditionalCreateHook = (bucket: string, key: string) => Promise<void>;

export interface S3Interposer {
  /** `http://127.0.0.1:<port>`: give it to the code under test as its S3 endpoint (path-style). */
  readonly endpoint: string;
  /** Sets (or, with undefined, clears) the hook run before each conditional create is forwarded. */
  onConditionalCreate(hook: ConditionalCreateHook | undefined): void;
  stop(): Promise<void>;
}

/** Passes a request on to `upstream` unchanged and its answer back. */
export function forwardRequest(upstream: URL, req: IncomingMessage, res: ServerResponse): void {
  const out = request(
    { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  out.on('error', (e) => res.destroy(e));
  req.pipe(out);
}

export async function startS3Interposer(target: string): Promise<S3Interposer> {
  const upstream = new URL(target);
  let hook: ConditionalCreateHook | undefined;

  const forward = (req: IncomingMessage, res: ServerResponse): void => forwardRequest(upstream, req, res);

  const server = createServer((req, res) => {
    const current = hook;
    if (current === undefined || req.method !== 'PUT' || req.headers['if-none-match'] !== '*') {
      forward(req, res);
      return;
    }
    // Path-style: /<bucket>/<key>
    const [bucket, ...key] = new URL(req.url ?? '/', upstream).pathname.slice(1).split('/');
    current(decodeURIComponent(bucket), key.map(decodeURIComponent).join('/')).then(
      () => forward(req, res),
      (e: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`interposer hook failed: ${String(e)}`);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    onConditionalCreate(next) {
      hook = next;
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
