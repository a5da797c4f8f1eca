/** The `<table>` argument every table command takes, and how a command opens its table. */
import type { OpenOptions, Table } from '../catalog/table.js';

export const TABLE_ARGUMENT =
  'the table: its location, a folder (relative paths and ~ work) or s3://bucket/prefix, or glue://<database>/<table> or s3tables://<table-bucket-arn>/<namespace>/<table>';

/** The open options of the command line: `--s3-endpoint`, and the metadata file when one is named. */
export type OpenOptionsOf = (metadata?: string) => OpenOptions;

/**
 * Refuses, before anything is written, a table this command could not commit to: one opened from
 * a metadata file (named, or the newest in a catalog service's folder), saying why.
 */
export async function refuseReadOnly(table: Table, command: string): Promise<void> {
  if (table.catalog.readOnly !== true) return;
  const { MetadataFileCatalog } = await import('../catalog/metadata-file-catalog.js');
  const { ReadOnlyTableError } = await import('../errors.js');
  const why = table.catalog instanceof MetadataFileCatalog ? table.catalog.readOnlyReason : 'its catalog is read-only';
  throw new ReadOnlyTableError(`${command} refused, nothing written: ${why}`, { path: table.location });
}
