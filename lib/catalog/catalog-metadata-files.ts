/**
 * Folders a catalog service writes: Glue, REST catalogs and Trino name metadata files
 * `NNNNN-<uuid>.metadata.json` (Java's `TableMetadataParser` naming, NNNNN the version) and keep
 * the pointer to the current one in the catalog, not in the folder. Such a folder can be read
 * from its newest file, but never committed to: a file written beside the others would never be
 * seen by the catalog's readers.
 */
import type { FileIO } from '../io/file-io.js';
import { baseName } from '../io/path.js';
import { metadataFolder, versionMatched } from './object-store-catalog.js';

const CATALOG_METADATA_FILE = /^(\d+)-[0-9a-fA-F-]{36}\.metadata\.json$/;

/** Why such a folder is read-only, and how to name the table so that it is not. */
export const CATALOG_OWNED_REASON =
  'its metadata files are named NNNNN-<uuid>.metadata.json, as a catalog service (Glue, a REST catalog, Trino) writes them, ' +
  "and that catalog, not the folder, holds which one is current: a metadata file written beside them would never be seen by the catalog's readers. " +
  'Name the table through its catalog to change it: glue://<database>/<table>, rest+https://<endpoint>/<namespace>/<table> or s3tables://<table-bucket-arn>/<namespace>/<table>';

/** NNNNN of a file named `NNNNN-<uuid>.metadata.json`, else undefined. */
export function catalogMetadataVersionOf(fileName: string): number | undefined {
  return versionMatched(CATALOG_METADATA_FILE, fileName);
}

/** The newest `NNNNN-<uuid>.metadata.json` in the table's metadata folder: highest NNNNN, then the latest written. */
export async function newestCatalogMetadataFile(io: FileIO, tableLocation: string): Promise<string | undefined> {
  let best: { path: string; version: number; modified: number } | undefined;
  for await (const f of io.list(metadataFolder(tableLocation))) {
    const m = CATALOG_METADATA_FILE.exec(baseName(f.path));
    if (!m) continue;
    const version = Number(m[1]);
    if (!best || version > best.version || (version === best.version && f.lastModifiedMs > best.modified)) {
      best = { path: f.path, version, modified: f.lastModifiedMs };
    }
  }
  return best?.path;
}
