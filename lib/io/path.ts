/**
 * String helpers for locations: `/abs/path`, `file:/abs`, `file:///abs`, `s3://bucket/key`,
 * `hdfs://host:port/abs`. They never touch storage.
 */

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

/**
 * Schemes whose authority names a machine rather than a namespace: the same file is reachable as
 * `hdfs://localhost:20500/x` and `/x`, so the authority is dropped when comparing.
 */
const HOST_AUTHORITY_SCHEMES = new Set(['file', 'hdfs', 'viewfs']);

/** The lower-case scheme (`s3`, `file`, …), or undefined for a bare path. */
export function schemeOf(path: string): string | undefined {
  return SCHEME.exec(path)?.[1].toLowerCase();
}

/** True for absolute local paths and `file:` URIs. */
export function isLocalPath(path: string): boolean {
  return path.startsWith('/') || schemeOf(path) === 'file';
}

/** True for `s3://`, `s3a://` and `s3n://` locations. */
export function isS3Path(path: string): boolean {
  const scheme = schemeOf(path);
  return scheme === 's3' || scheme === 's3a' || scheme === 's3n';
}

/**
 * Joins with exactly one `/` between parts: `joinPath('s3://b/t/', 'metadata', 'v1.metadata.json')`
 * is `s3://b/t/metadata/v1.metadata.json`. Slashes inside a part are kept.
 */
export function joinPath(base: string, ...parts: string[]): string {
  let out = base.replace(/\/+$/, '');
  for (const part of parts) {
    const trimmed = part.replace(/^\/+/, '').replace(/\/+$/, '');
    if (trimmed !== '') out = `${out}/${trimmed}`;
  }
  return out;
}

/** Length of `scheme://authority` (or `scheme:`), the part of a location that is never a folder. */
function rootLength(path: string): number {
  const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:(\/\/[^/]*)?/.exec(path);
  return m ? m[0].length : 0;
}

/**
 * The folder that holds `path`: `parentOf('s3://b/t/x.parquet')` is `s3://b/t`; a trailing `/` is
 * ignored. A root (`/`, `s3://bucket`, `file:///`) is its own parent.
 */
export function parentOf(path: string): string {
  const root = rootLength(path);
  const rest = path.slice(root).replace(/\/+$/, '');
  const cut = rest.lastIndexOf('/');
  if (cut < 0) return path;
  if (cut === 0) {
    // `s3://bucket/x` → `s3://bucket`; `/x` → `/`; `file:///x` → `file:///` (empty authority).
    const prefix = path.slice(0, root);
    return /\/\/[^/]+$/.test(prefix) ? prefix : `${prefix}/`;
  }
  return path.slice(0, root) + rest.slice(0, cut);
}

/** The last segment: `baseName('s3://b/t/x.parquet')` is `x.parquet`. */
export function baseName(path: string): string {
  const rest = path.slice(rootLength(path)).replace(/\/+$/, '');
  return rest.slice(rest.lastIndexOf('/') + 1);
}

/**
 * A location reduced to what identifies the file, for comparing paths written by different
 * engines. The rule:
 * - the scheme is dropped, so `s3`, `s3a` and `s3n` compare equal (Java's `equalSchemes` default);
 * - for `file`, `hdfs` and `viewfs` the authority is dropped too, leaving the absolute path
 *   (`hdfs://localhost:20500/x`, `file:///x`, `file:/x` and `/x` all become `/x`);
 * - for every other scheme (s3 and other object stores) the authority is the bucket and is kept
 *   without the `//` (`s3://bucket/x` and `s3a://bucket/x` become `bucket/x`), so it can never
 *   equal a local path, which starts with `/`.
 * Nothing else changes: no case folding, no percent decoding, no collapsing of `//` (a distinct
 * key on S3).
 */
export function normalizePath(path: string): string {
  const scheme = schemeOf(path);
  if (scheme === undefined) return path;
  const afterScheme = path.slice(scheme.length + 1);
  if (!afterScheme.startsWith('//')) return afterScheme; // `file:/x`
  const slash = afterScheme.indexOf('/', 2);
  const authority = slash < 0 ? afterScheme.slice(2) : afterScheme.slice(2, slash);
  const rest = slash < 0 ? '' : afterScheme.slice(slash);
  if (HOST_AUTHORITY_SCHEMES.has(scheme)) return rest === '' ? '/' : rest;
  return authority + rest;
}
