/**
 * A loopback Glue endpoint in front of moto that does what moto does not: UpdateTable with a
 * stale `VersionId` is answered with ConcurrentModificationException, as AWS Glue answers it.
 * Every other call is passed to moto unchanged. Checks and updates run one at a time, so the
 * check and the update are atomic, as in Glue.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';

export interface GlueVersionCheck {
  readonly endpoint: string;
  /** UpdateTable calls refused for a stale VersionId. */
  readonly refused: number;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function startGlueVersionCheck(moto: string): Promise<GlueVersionCheck> {
  let queue: Promise<unknown> = Promise.resolve();
  const state = { refused: 0 };
  const forward = async (req: IncomingMessage, data: Buffer): Promise<Response> => {
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers.set(k, v);
    return fetch(`${moto}${req.url ?? '/'}`, { method: req.method ?? 'POST', headers, ...(data.length > 0 ? { body: data } : {}) });
  };
  const server: Server = createServer((req, res) => {
    const run = async (): Promise<void> => {
      const data = await body(req);
      if (req.headers['x-amz-target'] === 'AWSGlue.UpdateTable') {
        const input = JSON.parse(data.toString('utf8')) as { DatabaseName: string; TableInput: { Name: string }; VersionId?: string };
        if (input.VersionId !== undefined) {
          const current = await fetch(moto, {
            method: 'POST',
            headers: {
              'x-amz-target': 'AWSGlue.GetTable',
              'content-type': 'application/x-amz-json-1.1',
              authorization: req.headers.authorization ?? '',
            },
            body: JSON.stringify({ DatabaseName: input.DatabaseName, Name: input.TableInput.Name }),
          });
          const table = ((await current.json()) as { Table?: { VersionId?: string } }).Table;
          if (table?.VersionId !== input.VersionId) {
            state.refused++;
            res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': 'ConcurrentModificationException' });
            res.end(JSON.stringify({ __type: 'ConcurrentModificationException', Message: `VersionId ${input.VersionId} is not the current ${table?.VersionId}` }));
            return;
          }
        }
      }
      const answer = await forward(req, data);
      const out: Record<string, string> = {};
      answer.headers.forEach((v, k) => {
        if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'content-encoding') out[k] = v;
      });
      res.writeHead(answer.status, out);
      res.end(Buffer.from(await answer.arrayBuffer()));
    };
    queue = queue.then(run).catch((e: unknown) => {
      res.writeHead(500);
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get refused() {
      return state.refused;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
