/**
 * `packice plan` and `packice health`, and the policy flags `compact` shares with them.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { loadTable, type OpenOptions } from '../catalog/table.js';
import { stringifyJson } from '../iceberg/json.js';
import { tableHealth, type TableHealth } from '../compaction/health.js';
import type { CompactionPolicy, Plan } from '../compaction/messages.js';
import { planCompaction } from '../compaction/planner.js';
import { formatBytes } from './format.js';

const UNITS: Readonly<Record<string, number>> = {
  '': 1, b: 1,
  k: 1024, kb: 1024, kib: 1024,
  m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2,
  g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3,
  t: 1024 ** 4, tb: 1024 ** 4, tib: 1024 ** 4,
};

/**
 * A byte size: plain bytes, or a number with a unit (128MB, 512MiB, 1.5GiB). Units are binary
 * whichever way they are spelt, as in Spark and Iceberg's docs: 512MB is Iceberg's 536870912.
 */
export function parseByteSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m ? UNITS[m[2].toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new InvalidArgumentError(`"${text}" is not a size (e.g. 134217728, 128MB, 512MiB, 1GiB)`);
  const n = Math.round(Number(m[1]) * unit);
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`"${text}" is too large`);
  return n;
}

function parseCount(text: string): number {
  if (!/^\s*\d+\s*$/.test(text)) throw new InvalidArgumentError(`"${text}" is not a whole number`);
  return Number(text);
}

function parseRatio(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`"${text}" is not a number`);
  return n;
}

function parseMinutes(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`"${text}" is not a number of minutes`);
  return n;
}

/** The policy flags, shared by plan, health and compact. Defaults are in lib/compaction/policy.ts. */
export function addPolicyOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--target-file-size <size>', 'target output file size (default: write.target-file-size-bytes or 512MiB)').argParser(parseByteSize))
    .addOption(new Option('--min-file-size <size>', 'files below this are rewritten (default: 75% of the target)').argParser(parseByteSize))
    .addOption(new Option('--max-file-size <size>', 'files above this are rewritten (default: 180% of the target)').argParser(parseByteSize))
    .addOption(new Option('--min-input-files <n>', 'fewest files worth a group (default: 5)').argParser(parseCount))
    .addOption(new Option('--delete-file-threshold <n>', 'rewrite a file that has this many delete files (default: 1)').argParser(parseCount))
    .addOption(new Option('--delete-ratio-threshold <r>', 'rewrite a file with this fraction of rows deleted (default: 0.3)').argParser(parseRatio))
    .addOption(new Option('--quiet-minutes <n>', 'leave partitions written in the last n minutes (default: 0, off)').argParser(parseMinutes))
    .addOption(new Option('--where <filter>', `partition filter, e.g. "action = 'click' and ts_hour >= 10"`))
    .addOption(new Option('--mode <mode>', 'major applies every delete; minor leaves equality deletes').choices(['major', 'minor']))
    .addOption(new Option('--strategy <strategy>', 'binpack or sort (by the table sort order)').choices(['binpack', 'sort']))
    .addOption(new Option('--max-group-bytes <size>', 'most input bytes in one group (default: 2GiB)').argParser(parseByteSize))
    .addOption(new Option('--max-groups <n>', 'most groups in one run (default: 1000)').argParser(parseCount));
}

/** The policy the flags ask for; values may be already parsed (commander) or raw strings. */
export function policyFromOptions(opts: Readonly<Record<string, unknown>>): CompactionPolicy {
  const get = <T>(name: string, parse: (s: string) => T): T | undefined => {
    const v = opts[name];
    if (v === undefined || v === null) return undefined;
    return typeof v === 'string' ? parse(v) : (v as T);
  };
  const policy: { -readonly [K in keyof CompactionPolicy]: CompactionPolicy[K] } = {};
  const set = <K extends keyof CompactionPolicy>(k: K, v: CompactionPolicy[K] | undefined): void => {
    if (v !== undefined) policy[k] = v;
  };
  set('targetFileSizeBytes', get('targetFileSize', parseByteSize));
  set('minFileSizeBytes', get('minFileSize', parseByteSize));
  set('maxFileSizeBytes', get('maxFileSize', parseByteSize));
  set('minInputFiles', get('minInputFiles', parseCount));
  set('deleteFileThreshold', get('deleteFileThreshold', parseCount));
  set('deleteRatioThreshold', get('deleteRatioThreshold', parseRatio));
  set('quietMinutes', get('quietMinutes', parseMinutes));
  set('where', get('where', (s) => s));
  set('mode', get('mode', (s) => s as CompactionPolicy['mode']));
  set('strategy', get('strategy', (s) => s as CompactionPolicy['strategy']));
  set('maxGroupBytes', get('maxGroupBytes', parseByteSize));
  set('maxGroups', get('maxGroups', parseCount));
  return policy;
}

export function registerPlanCommands(program: Command, out: (s: string) => void, openOptions: (metadata?: string) => OpenOptions): void {
  const plan = program
    .command('plan')
    .description('show which files a compaction would rewrite, in which groups, at what cost (reads metadata only)')
    .argument('<table>', 'table location: a folder or s3://bucket/prefix')
    .option('--metadata <file>', 'read this metadata file instead of the current one')
    .option('--json', 'print the Plan message');
  addPolicyOptions(plan).action(async (location: string, o: Record<string, unknown>) => {
    const open = openOptions(o.metadata as string | undefined);
    const table = await loadTable(location, open);
    const request = { table: { location, ...(open.s3Endpoint ? { s3Endpoint: open.s3Endpoint } : {}) }, policy: policyFromOptions(o) };
    const p = await planCompaction(table.io, table.metadata, request);
    out(o.json ? `${stringifyJson(p, 2)}\n` : formatPlan(p));
  });

  const health = program
    .command('health')
    .description('file sizes, delete files and deleted rows per partition, and what compaction would fix')
    .argument('<table>', 'table location: a folder or s3://bucket/prefix')
    .option('--metadata <file>', 'read this metadata file instead of the current one')
    .option('--json', 'print JSON');
  addPolicyOptions(health).action(async (location: string, o: Record<string, unknown>) => {
    const table = await loadTable(location, openOptions(o.metadata as string | undefined));
    const h = await tableHealth(table.io, table.metadata, policyFromOptions(o));
    out(o.json ? `${stringifyJson(h, 2)}\n` : formatHealth(h));
  });
}

/** Left-aligned text columns (right-aligned where `right[i]`). */
function columns(rows: readonly (readonly string[])[], right: readonly boolean[] = []): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (right[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd());
}

const shownPath = (p: string): string => p || '(unpartitioned)';
const percent = (x: number): string => `${(x * 100).toFixed(1)}%`;

export function formatPlan(p: Plan): string {
  const lines: string[] = [];
  const s = p.summary;
  const pol = p.policy;
  lines.push(
    `plan of ${p.table.location} at snapshot ${p.startingSnapshotId ?? '(none)'} (sequence ${p.startingSequenceNumber}): ` +
      `${pol.mode} ${pol.strategy}, target ${formatBytes(pol.targetFileSizeBytes)}`,
  );
  if (p.groups.length === 0) {
    lines.push(`nothing to compact: no partition crosses the thresholds (${s.dataFilesBefore} data files)`);
  } else {
    const rows = [['GROUP', 'PARTITION', 'FILES', 'READ', 'WRITTEN', 'REASONS']];
    const specs = new Set(p.groups.map((g) => g.specId)).size > 1;
    for (const g of p.groups) {
      rows.push([
        g.id.slice(0, 12),
        `${specs ? `spec ${g.specId}: ` : ''}${shownPath(g.partitionPath)}`,
        `${g.estimate.filesIn} -> ${g.estimate.filesOut}`,
        formatBytes(g.estimate.bytesToRead),
        formatBytes(g.estimate.bytesToWrite),
        g.reasons.join(', '),
      ]);
    }
    lines.push(...columns(rows, [false, false, true, true, true, false]));
    lines.push('');
    lines.push(`${p.groups.length} group${p.groups.length === 1 ? '' : 's'}`);
  }
  lines.push(`data files    ${s.dataFilesBefore} -> ${s.dataFilesAfter}`);
  lines.push(`delete files  ${s.deleteFilesBefore} -> ${s.deleteFilesAfter}`);
  lines.push(`bytes         ${formatBytes(s.bytesBefore)} -> ${formatBytes(s.bytesAfter)}`);
  lines.push(`rewrite ratio ${s.rewriteRatio.toFixed(3)} (data bytes rewritten / data bytes)`);
  for (const k of p.skipped) lines.push(`skipped       ${k.path}: ${k.reason}`);
  return `${lines.join('\n')}\n`;
}

export function formatHealth(h: TableHealth): string {
  const lines: string[] = [];
  lines.push(`table         ${h.location} (v${h.formatVersion}, snapshot ${h.snapshotId ?? '(none)'})`);
  lines.push(`data files    ${h.dataFiles} (${formatBytes(h.dataBytes)}, ${h.records} records, average ${formatBytes(h.averageFileBytes)})`);
  lines.push(`delete files  ${h.deleteFiles} (${formatBytes(h.deleteBytes)}), ~${Math.round(h.deletedRecords)} rows deleted (${percent(h.deletedFraction)})`);
  lines.push(
    `policy        target ${formatBytes(h.policy.targetFileSizeBytes)}, small < ${formatBytes(h.policy.minFileSizeBytes)}, ` +
      `large > ${formatBytes(h.policy.maxFileSizeBytes)}, ${h.policy.mode}${h.policy.where ? `, where ${h.policy.where}` : ''}`,
  );
  lines.push('');
  lines.push('file sizes');
  lines.push(...columns(h.histogram.map((b) => [`  ${b.label}`, `${b.files} files`, formatBytes(b.bytes)]), [false, true, true]));
  lines.push('');
  if (h.partitions.length > 0) {
    const rows = [['PARTITION', 'FILES', 'BYTES', 'SMALL', 'LARGE', 'DELETES', 'DELETED', 'FIX']];
    const specs = new Set(h.partitions.map((p) => p.specId)).size > 1;
    for (const p of h.partitions) {
      rows.push([
        `${specs ? `spec ${p.specId}: ` : ''}${shownPath(p.partitionPath)}`,
        String(p.dataFiles),
        formatBytes(p.dataBytes),
        String(p.smallFiles),
        String(p.largeFiles),
        `${p.deleteFiles}${p.equalityDeleteFiles > 0 ? ` (${p.equalityDeleteFiles} eq)` : ''}`,
        percent(p.deletedFraction),
        p.fix ? `${p.fix.filesBefore} -> ${p.fix.filesAfter} files, ${formatBytes(p.fix.bytesToRead)} read: ${p.reasons.join(', ')}` : '-',
      ]);
    }
    lines.push(...columns(rows, [false, true, true, true, true, true, true, false]));
    lines.push('');
  }
  const s = h.summary;
  if (h.groups === 0) {
    lines.push('healthy: no partition crosses the thresholds');
  } else {
    lines.push(
      `${h.partitionsNeedingCompaction} partition${h.partitionsNeedingCompaction === 1 ? ' needs' : 's need'} compaction ` +
        `(${h.groups} group${h.groups === 1 ? '' : 's'}): ` +
        `data files ${s.dataFilesBefore} -> ${s.dataFilesAfter}, delete files ${s.deleteFilesBefore} -> ${s.deleteFilesAfter}, ` +
        `${formatBytes(s.bytesBefore)} -> ${formatBytes(s.bytesAfter)}, rewriting ${percent(s.rewriteRatio)} of the data bytes`,
    );
  }
  for (const k of h.skipped) lines.push(`skipped       ${k.path}: ${k.reason}`);
  return `${lines.join('\n')}\n`;
}
