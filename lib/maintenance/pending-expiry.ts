/**
 * The record an expiry leaves before it commits: the snapshots it is about to remove (their
 * manifest lists, inline manifests and summaries) and their statistics files. Deleting comes
 * after the commit, so a crash in between would otherwise forget what to delete; the next run
 * reads every record, finishes it, and deletes the record last. A record whose commit never
 * happened names snapshots the table still has, and those are never treated as expired.
 *
 * File: `metadata/packice-pending-expiry/<ms>-<uuid>.json` (packice's own, no spec names it).
 */
import { randomUUID } from 'node:crypto';
import { InvalidFileError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { joinPath } from '../io/path.js';
import { isJsonObject, parseJson, stringifyJson, type JsonObject } from '../iceberg/json.js';
import { snapshotFromJson, snapshotToJson, type Snapshot } from '../iceberg/snapshot.js';
import { metadataFolder } from '../catalog/object-store-catalog.js';
import type { ReachableFile } from './reachable-files.js';

export const PENDING_EXPIRY_FOLDER = 'packice-pending-expiry';

export interface PendingExpiry {
  readonly path: string;
  readonly snapshots: readonly Snapshot[];
  readonly statistics: readonly ReachableFile[];
}

export function pendingExpiryFolder(tableLocation: string): string {
  return joinPath(metadataFolder(tableLocation), PENDING_EXPIRY_FOLDER);
}

export async function writePendingExpiry(
  io: FileIO,
  tableLocation: string,
  snapshots: readonly Snapshot[],
  statistics: readonly ReachableFile[],
  nowMs: number,
): Promise<string> {
  const path = joinPath(pendingExpiryFolder(tableLocation), `${nowMs}-${randomUUID()}.json`);
  const body = { 'packice-pending-expiry': 1, snapshots: snapshots.map((s) => snapshotToJson(s, 2)), statistics };
  await io.write(path, new TextEncoder().encode(stringifyJson(body)));
  return path;
}

export async function readPendingExpiries(io: FileIO, tableLocation: string): Promise<PendingExpiry[]> {
  const out: PendingExpiry[] = [];
  for await (const f of io.list(pendingExpiryFolder(tableLocation))) {
    if (!f.path.endsWith('.json')) continue;
    const json = parseJson(new TextDecoder().decode(await io.read(f.path)));
    if (!isJsonObject(json) || !Array.isArray(json.snapshots) || !Array.isArray(json.statistics)) {
      throw new InvalidFileError('not a packice pending-expiry record (expected snapshots and statistics arrays)', { path: f.path });
    }
    out.push({
      path: f.path,
      snapshots: json.snapshots.filter(isJsonObject).map((s) => snapshotFromJson(s)),
      statistics: json.statistics.filter(isJsonObject).map((s: JsonObject) => ({
        path: String(s.path),
        kind: s.kind === 'partition-statistics' ? 'partition-statistics' : 'statistics',
        ...(s.size !== undefined && s.size !== null ? { size: Number(s.size) } : {}),
      })),
    });
  }
  return out;
}
