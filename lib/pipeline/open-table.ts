import { loadTable, type Table } from '../catalog/table.js';
import type { TableRef } from '../compaction/messages.js';

/** Loads a table from its reference, with the S3 endpoint the reference names. */
export async function openTable(ref: TableRef): Promise<Table> {
  return loadTable(ref.location, ref.s3Endpoint ? { s3Endpoint: ref.s3Endpoint } : {});
}
