/**
 * How a table is named on the command line, in messages and in the CDK construct's props — the
 * one place those names are parsed:
 * - a location (a folder, `file:`, `s3://…`): the object-store catalog;
 * - `glue://<database>/<table>`: AWS Glue Data Catalog;
 * - `s3tables://<table-bucket-arn>/<namespace>/<table>`: Amazon S3 Tables;
 * - `rest+https://<endpoint>/<namespace>/<table>` (or `rest+http://`): an Iceberg REST catalog whose
 *   base URI is `https://<endpoint>`, a namespace of several levels separated by `.` (a dot inside a
 *   level written `%2E`).
 */
import { InvalidArgumentError } from '../errors.js';

export type TableName =
  | { readonly kind: 'location'; readonly location: string }
  | { readonly kind: 'glue'; readonly database: string; readonly table: string }
  | { readonly kind: 's3tables'; readonly tableBucketArn: string; readonly namespace: string; readonly table: string }
  | { readonly kind: 'rest'; readonly uri: string; readonly namespace: readonly string[]; readonly table: string };

const TABLE_BUCKET_ARN = /^arn:aws[a-z-]*:s3tables:[a-z0-9-]+:\d{12}:bucket\/[a-z0-9][a-z0-9-]*$/;

export function parseTableName(name: string): TableName {
  const bad = (why: string): never => {
    throw new InvalidArgumentError(`not a table name: ${why}`, { path: name });
  };
  const segments = (rest: string, count: number, shape: string): string[] => {
    const parts = rest.split('/');
    if (parts.length !== count || parts.some((p) => p === '')) bad(`expected ${shape}`);
    return parts.map((p) => decodeURIComponent(p));
  };
  if (name.startsWith('glue://')) {
    const [database, table] = segments(name.slice('glue://'.length), 2, 'glue://<database>/<table>');
    return { kind: 'glue', database, table };
  }
  if (name.startsWith('s3tables://')) {
    const rest = name.slice('s3tables://'.length);
    const m = /^(arn:[^/]+\/[^/]+)\/(.+)$/.exec(rest);
    if (!m || !TABLE_BUCKET_ARN.test(m[1])) return bad('expected s3tables://arn:aws:s3tables:<region>:<account>:bucket/<bucket>/<namespace>/<table>');
    const [namespace, table] = segments(m[2], 2, 's3tables://<table-bucket-arn>/<namespace>/<table>');
    return { kind: 's3tables', tableBucketArn: m[1], namespace, table };
  }
  if (name.startsWith('rest+http://') || name.startsWith('rest+https://')) {
    let url: URL;
    try {
      url = new URL(name.slice('rest+'.length));
    } catch {
      return bad('expected rest+https://<endpoint>/<namespace>/<table>');
    }
    const parts = url.pathname.split('/').filter((p) => p !== '');
    if (parts.length < 2) bad('expected rest+https://<endpoint>/<namespace>/<table>');
    const table = decodeURIComponent(parts.pop()!);
    // Split before decoding: a level with a dot in it is written with %2E.
    const namespace = parts.pop()!.split('.').map((n) => decodeURIComponent(n));
    if (namespace.some((n) => n === '')) bad('an empty namespace level');
    const base = parts.length > 0 ? `/${parts.join('/')}` : '';
    return { kind: 'rest', uri: `${url.protocol}//${url.host}${base}`, namespace, table };
  }
  return { kind: 'location', location: name };
}

/** The name `parseTableName` reads back as `name`. */
export function formatTableName(name: TableName): string {
  const enc = encodeURIComponent;
  switch (name.kind) {
    case 'location':
      return name.location;
    case 'glue':
      return `glue://${enc(name.database)}/${enc(name.table)}`;
    case 's3tables':
      return `s3tables://${name.tableBucketArn}/${enc(name.namespace)}/${enc(name.table)}`;
    case 'rest':
      return `rest+${name.uri}/${name.namespace.map((n) => enc(n).replaceAll('.', '%2E')).join('.')}/${enc(name.table)}`;
  }
}

/** True when `name` is not a location but a table in a catalog service. */
export function isCatalogName(name: string): boolean {
  return /^(glue|s3tables|rest\+https?):\/\//.test(name);
}
