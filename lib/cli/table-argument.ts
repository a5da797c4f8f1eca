/** The `<table>` argument every table command takes, and how a command opens its table. */
import type { OpenOptions } from '../catalog/table.js';

export const TABLE_ARGUMENT =
  'the table: its location, a folder (relative paths and ~ work) or s3://bucket/prefix, or glue://<database>/<table> or s3tables://<table-bucket-arn>/<namespace>/<table>';

/** The open options of the command line: `--s3-endpoint`, and the metadata file when one is named. */
export type OpenOptionsOf = (metadata?: string) => OpenOptions;
