/**
 * How retention compares a path named by metadata with a path found in storage (Java's
 * actions/FileURI with its equalSchemes/equalAuthorities), by one explicit rule:
 * - `s3`, `s3a` and `s3n` are one scheme; `file:`, `file://`, bare `/paths` are one scheme;
 * - scheme and authority (the bucket) compare case-insensitively, the path exactly;
 * - a path with `.` or `..` segments or empty segments is never "inside" anything: on S3 they are
 *   literal keys, on a disk they climb, and either way a metadata file cannot vouch for them.
 */
import { schemeOf } from '../io/path.js';

const SCHEME_CLASS: Readonly<Record<string, string>> = { s3: 's3', s3a: 's3', s3n: 's3', file: 'file' };

export interface FileUri {
  /** `s3` for the S3 family, `file` for local paths, else the scheme itself. */
  readonly scheme: string;
  /** Lower-case bucket or host; empty for local paths. */
  readonly authority: string;
  /** From the first `/` after the authority. */
  readonly path: string;
}

export function fileUri(location: string): FileUri {
  const scheme = schemeOf(location);
  if (scheme === undefined) return { scheme: 'file', authority: '', path: location };
  const rest = location.slice(scheme.length + 1);
  const cls = SCHEME_CLASS[scheme] ?? scheme;
  if (!rest.startsWith('//')) return { scheme: cls, authority: '', path: rest };
  const slash = rest.indexOf('/', 2);
  const authority = (slash < 0 ? rest.slice(2) : rest.slice(2, slash)).toLowerCase();
  const path = slash < 0 ? '/' : rest.slice(slash);
  return { scheme: cls, authority: cls === 'file' ? '' : authority, path };
}

/** The key two references to one file share: `s3a://B/t/x` and `s3://b/t/x` give the same key. */
export function fileKey(location: string): string {
  const u = fileUri(location);
  return `${u.scheme}://${u.authority}${u.path}`;
}

/** The path alone, for finding references that differ only in scheme or authority. */
export function pathOnlyKey(location: string): string {
  return fileUri(location).path;
}

function hasUnsafeSegment(path: string): boolean {
  return path.split('/').slice(1, -1).some((seg) => seg === '' || seg === '.' || seg === '..') || /\/\.\.?$/.test(path);
}

/** True when `path` is a file strictly under the folder `location`, by the rule above. */
export function isInsideLocation(location: string, path: string): boolean {
  const l = fileUri(location);
  const p = fileUri(path);
  if (l.scheme !== p.scheme || l.authority !== p.authority) return false;
  if (hasUnsafeSegment(p.path)) return false;
  const folder = l.path.replace(/\/+$/, '');
  return p.path.startsWith(`${folder}/`) && p.path.length > folder.length + 1;
}

/** `path` spelt with the table location's scheme (`s3a://b/x` → `s3://b/x`), for the FileIO that serves the table. */
export function inLocationScheme(location: string, path: string): string {
  const ls = schemeOf(location);
  const ps = schemeOf(path);
  if (ls === undefined || ps === undefined || ls === ps) return path;
  if (SCHEME_CLASS[ls] === 's3' && SCHEME_CLASS[ps] === 's3') return `${ls}${path.slice(ps.length)}`;
  return path;
}
