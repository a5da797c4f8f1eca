/**
 * `packice describe`, `snapshots` and `files`: the inspection commands of PyIceberg's CLI
 * (`describe`, `schema`, `spec`, `properties`, `files`) and Iceberg's `snapshots` and `files`
 * metadata tables, each with `--json`.
 */
import type { Command } from 'commander';
import { resolveLocation } from '../io/index.js';
import type { FileRow, SnapshotRow, TableDescription } from '../table/metadata-tables.js';
import { columns, formatBytes } from './format.js';
import { TABLE_ARGUMENT, type OpenOptionsOf } from './table-argument.js';

interface InspectFlags {
  metadata?: string;
  json?: boolean;
  snapshot?: string;
  deletes?: boolean;
}

export function formatDescription(d: TableDescription): string {
  const lines = [`table          ${d.location} (format v${d.formatVersion}, uuid ${d.tableUuid})`, `snapshot       ${d.currentSnapshotId ?? '(none)'}`, ''];
  lines.push(`schema ${d.schemaId}`);
  lines.push(...columns([['  ID', 'NAME', 'TYPE', ''], ...d.columns.map((c) => [`  ${c.id}`, c.name, c.type, c.required ? 'required' : 'optional'])]));
  for (const s of d.partitionSpecs) {
    lines.push('', `partition spec ${s.specId}${s.isDefault ? ' (default)' : ''}${s.fields.length === 0 ? ': unpartitioned' : ''}`);
    if (s.fields.length > 0) lines.push(...columns(s.fields.map((f) => [`  ${f.fieldId}`, f.name, `${f.transform}(${f.source})`])));
  }
  for (const o of d.sortOrders) {
    const fields = o.fields.map((f) => `${f.transform === 'identity' ? f.source : `${f.transform}(${f.source})`} ${f.direction.toUpperCase()} ${f.nullOrder.replace('-', ' ').toUpperCase()}`);
    lines.push('', `sort order ${o.orderId}${o.isDefault ? ' (default)' : ''}: ${fields.length === 0 ? 'unsorted' : fields.join(', ')}`);
  }
  const props = Object.entries(d.properties).sort(([a], [b]) => a.localeCompare(b));
  lines.push('', `properties${props.length === 0 ? ' (none)' : ''}`, ...props.map(([k, v]) => `  ${k}=${v}`));
  lines.push('', `refs${d.refs.length === 0 ? ' (none)' : ''}`);
  if (d.refs.length > 0) lines.push(...columns(d.refs.map((r) => [`  ${r.name}`, r.type, r.snapshotId])));
  return `${lines.join('\n')}\n`;
}

export function formatSnapshots(rows: readonly SnapshotRow[]): string {
  if (rows.length === 0) return 'no snapshots\n';
  const n = (r: SnapshotRow, key: string): string => r.summary[key] ?? '-';
  const table = [['COMMITTED AT', 'SNAPSHOT', 'PARENT', 'OPERATION', '+FILES', '-FILES', '+DELETES', '+RECORDS', '-RECORDS', 'TOTAL RECORDS']];
  for (const r of rows) {
    table.push([
      `${r.isCurrent ? '*' : ' '}${r.committedAt}`, r.snapshotId, r.parentId ?? '-', r.operation,
      n(r, 'added-data-files'), n(r, 'deleted-data-files'), n(r, 'added-delete-files'), n(r, 'added-records'), n(r, 'deleted-records'), n(r, 'total-records'),
    ]);
  }
  return `${columns(table, [false, false, false, false, true, true, true, true, true, true]).join('\n')}\n(* current)\n`;
}

export function formatFiles(rows: readonly FileRow[]): string {
  if (rows.length === 0) return 'no live files\n';
  const table = [['CONTENT', 'PATH', 'PARTITION', 'RECORDS', 'SIZE', 'DELETES']];
  for (const r of rows) {
    const deletes = r.deleteFiles !== undefined ? String(r.deleteFiles) : r.referencedDataFile ? `for ${r.referencedDataFile}` : '-';
    table.push([r.content.toLowerCase().replace('_', ' '), r.filePath, r.partition || '-', r.recordCount, formatBytes(BigInt(r.fileSizeInBytes)), deletes]);
  }
  return `${columns(table, [false, false, false, true, true, false]).join('\n')}\n`;
}

const asJson = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

export function registerInspectCommands(program: Command, out: (s: string) => void, open: OpenOptionsOf): void {
  const inspect = (name: string, description: string): Command =>
    program
      .command(name)
      .description(description)
      .argument('<table>', TABLE_ARGUMENT)
      .option('--metadata <file>', 'read this metadata file instead of the current one')
      .option('--json', 'print JSON');
  const load = async (location: string, o: InspectFlags) => {
    const { loadTable } = await import('../catalog/table.js');
    return loadTable(resolveLocation(location), open(o.metadata));
  };

  inspect('describe', 'schema with types and field ids, partition specs, sort orders, properties and refs').action(async (location: string, o: InspectFlags) => {
    const { describeTable } = await import('../table/metadata-tables.js');
    const d = describeTable((await load(location, o)).metadata);
    out(o.json ? asJson(d) : formatDescription(d));
  });

  inspect('snapshots', "the table's history (Iceberg's snapshots metadata table): id, parent, time, operation, summary counts").action(
    async (location: string, o: InspectFlags) => {
      const { snapshotsTable } = await import('../table/metadata-tables.js');
      const rows = snapshotsTable((await load(location, o)).metadata);
      out(o.json ? asJson(rows) : formatSnapshots(rows));
    },
  );

  inspect('files', "live data files of a snapshot (Iceberg's files metadata table): path, partition, records, size, deletes applied")
    .option('--snapshot <id>', 'the files of this snapshot instead of the current one')
    .option('--deletes', 'list the live delete files too')
    .action(async (location: string, o: InspectFlags) => {
      const { filesTable } = await import('../table/metadata-tables.js');
      const table = await load(location, o);
      if (o.snapshot !== undefined && !/^-?\d+$/.test(o.snapshot)) {
        const { InvalidArgumentError } = await import('../errors.js');
        throw new InvalidArgumentError(`--snapshot must be a snapshot id, got "${o.snapshot}"`);
      }
      const rows = await filesTable(table.io, table.metadata, {
        ...(o.snapshot !== undefined ? { snapshotId: BigInt(o.snapshot) } : {}),
        deletes: o.deletes === true,
      });
      out(o.json ? asJson(rows) : formatFiles(rows));
    });
}
