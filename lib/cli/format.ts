/**
 * Everything the CLI prints for people, in one place: sizes and durations, and the text forms
 * of `info`, `plan`, `health` and `compact` (their `--json` forms are the messages themselves).
 */
import type { TableHealth } from '../compaction/health.js';
import type { InputPaths, Plan } from '../compaction/messages.js';
import { REWRITE_FAILED } from '../pipeline/group-outcome.js';
import type { RunReport } from '../pipeline/local-runner.js';
import type { RewriteManifestsResult } from '../maintenance/rewrite-manifests.js';
import type { TableInfo } from '../table/info.js';
import type { DeleteCommandResult } from './delete-command.js';

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** Human-readable sizes: 1.5 MiB, 312 B. */
export function formatBytes(n: bigint | number): string {
  const v = Number(n);
  let i = 0;
  let x = v;
  while (Math.abs(x) >= 1024 && i < UNITS.length - 1) {
    x /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${x.toFixed(1)} ${UNITS[i]}`;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/** A size as a flag takes it, exact: 700MiB, 2GiB, 1000 (bytes when no unit divides it). */
export function formatSizeFlag(n: number): string {
  let i = 0;
  let x = n;
  while (i < UNITS.length - 1 && x !== 0 && x % 1024 === 0) {
    x /= 1024;
    i++;
  }
  return i === 0 ? String(n) : `${x}${UNITS[i]}`;
}

export function formatPercent(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

export function formatInfo(info: TableInfo, metadataLocation: string): string {
  const lines = [
    ['location', info.location],
    ['metadata', metadataLocation],
    ['format version', String(info.formatVersion)],
    ['current snapshot', info.currentSnapshotId ?? '(none)'],
    ['sequence number', info.sequenceNumber],
    ['snapshots', String(info.snapshots)],
    ['schema', `id ${info.schemaId}, ${info.columns} columns`],
    ['partitioning', `${info.partitionSpec}${info.partitionSpecs > 1 ? ` (${info.partitionSpecs} specs)` : ''}`],
    ['partitions', String(info.partitions)],
    ['data files', `${info.dataFiles} (${Object.entries(info.fileFormats).map(([f, n]) => `${n} ${f}`).join(', ') || 'none'})`],
    ['records', info.records],
    ['data bytes', formatBytes(BigInt(info.dataBytes))],
    ['delete files', `${info.positionDeleteFiles} position, ${info.deletionVectors} deletion vectors, ${info.equalityDeleteFiles} equality`],
    ['deleted records', info.deleteRecords],
    ['delete bytes', formatBytes(BigInt(info.deleteBytes))],
  ];
  const w = Math.max(...lines.map(([k]) => k.length));
  return `${lines.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n')}\n`;
}

/** Left-aligned text columns (right-aligned where `right[i]`). */
export function columns(rows: readonly (readonly string[])[], right: readonly boolean[] = []): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (right[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd());
}

/**
 * A partition path as people read it: each value URL-decoded (partitionToPath encodes as Java's
 * URLEncoder: space as `+`, `:` as `%3A`), with only `/` and `%` kept encoded so the segments
 * stay unambiguous. JSON output keeps the path as stored.
 */
export function shownPath(p: string): string {
  if (p === '') return '(unpartitioned)';
  return p
    .split('/')
    .map((segment) => {
      const eq = segment.indexOf('=');
      return eq < 0 ? shownPart(segment) : `${shownPart(segment.slice(0, eq))}=${shownPart(segment.slice(eq + 1))}`;
    })
    .join('/');
}

function shownPart(encoded: string): string {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, ' ')).replace(/%/g, '%25').replace(/\//g, '%2F');
  } catch {
    return encoded;
  }
}

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
  if (p.danglingDeletes) lines.push(`dangling      ${danglingText(p.danglingDeletes)}: compaction drops them`);
  for (const k of p.skipped) lines.push(`skipped       ${k.path}: ${k.reason}`);
  return `${lines.join('\n')}\n`;
}

export function formatHealth(h: TableHealth): string {
  const lines: string[] = [];
  lines.push(`table         ${h.location} (v${h.formatVersion}, snapshot ${h.snapshotId ?? '(none)'})`);
  lines.push(`data files    ${h.dataFiles} (${formatBytes(h.dataBytes)}, ${h.records} records, average ${formatBytes(h.averageFileBytes)})`);
  lines.push(`delete files  ${h.deleteFiles} (${formatBytes(h.deleteBytes)}), ~${Math.round(h.deletedRecords)} rows deleted (${formatPercent(h.deletedFraction)})`);
  if (h.danglingDeleteFiles > 0) {
    lines.push(`dangling      ${danglingText({ files: h.danglingDeleteFiles, bytes: h.danglingDeleteBytes })}: compact drops them`);
  }
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
        formatPercent(p.deletedFraction),
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
        `${formatBytes(s.bytesBefore)} -> ${formatBytes(s.bytesAfter)}, rewriting ${formatPercent(s.rewriteRatio)} of the data bytes`,
    );
  }
  for (const k of h.skipped) lines.push(`skipped       ${k.path}: ${k.reason}`);
  return `${lines.join('\n')}\n`;
}

/** "2 delete files (1.2 KiB) no live data file needs". */
function danglingText(d: { readonly files: number; readonly bytes: number }): string {
  return `${d.files} delete file${d.files === 1 ? '' : 's'} (${formatBytes(d.bytes)}) no live data file needs`;
}

/** What `packice compact` prints: a dry run's plan in one line, else what ran and committed. */
export function formatRunReport(r: RunReport, dryRun: boolean): string {
  const lines: string[] = [];
  const p = r.plan;
  const dangling = p.danglingDeletes;
  if (p.groups.length === 0) {
    lines.push(`nothing to compact: no partition crosses the thresholds (${p.summary.dataFilesBefore} data files)`);
    if (dangling && dryRun) lines.push(`dry run: would drop ${danglingText(dangling)}`);
    else if (r.commit?.snapshotId) {
      lines.push(`dropped ${r.commit.filesRemoved} dangling delete file${r.commit.filesRemoved === 1 ? '' : 's'} in snapshot ${r.commit.snapshotId}`);
    }
    return `${lines.join('\n')}\n`;
  }
  if (dryRun) {
    lines.push(
      `dry run: ${p.groups.length} groups would rewrite ${p.groups.reduce((n, g) => n + g.inputs.length, 0)} files ` +
        `(${formatBytes(p.groups.reduce((n, g) => n + g.estimate.bytesToRead, 0))}); data files ${p.summary.dataFilesBefore} -> ~${p.summary.dataFilesAfter}`,
    );
    if (dangling) lines.push(`dry run: the commit would also drop ${danglingText(dangling)}`);
    return `${lines.join('\n')}\n`;
  }
  const s = r.summary;
  const c = r.commit;
  const committed = c?.committedGroups.length ?? 0;
  lines.push(`compacted ${committed} of ${p.groups.length} groups in ${formatDuration(s.durationMs)}`);
  // Totals count committed groups only: a group that failed or was aborted proved nothing.
  if (committed > 0) {
    lines.push(`  files     ${s.filesIn} -> ${s.filesOut}`);
    lines.push(`  bytes     ${formatBytes(s.bytesRead)} read, ${formatBytes(s.bytesWritten)} written`);
    lines.push(`  rows      ${s.rowsIn} live rows in, ${s.rowsOut} out (checksums match)`);
    lines.push(`  write amplification ${s.writeAmplification.toFixed(2)} (bytes written / table bytes)`);
  }
  if (dangling && (c?.committedSnapshotIds.length ?? 0) > 0) lines.push(`  dangling  ${danglingText(dangling)} at the plan, dropped with the groups`);
  if (c) {
    const attempts = `${c.attempts} attempt${c.attempts === 1 ? '' : 's'}`;
    const ids = c.committedSnapshotIds;
    lines.push(
      ids.length === 0
        ? `  commit    nothing committed (${attempts}); the table is at snapshot ${c.snapshotId ?? '(none)'}`
        : `  commit    ${ids.length} snapshot${ids.length === 1 ? '' : 's'} (${ids.join(', ')}) in ${attempts}`,
    );
  }
  if ((c?.deletesRebased ?? 0) > 0) lines.push(`  rebased   ${c!.deletesRebased} concurrent delete file(s) onto the rewritten files`);
  for (const a of c?.abortedGroups ?? []) lines.push(`  aborted   ${a.groupId}: ${a.reason}`);
  return `${lines.join('\n')}\n`;
}

/** `packice delete`: what the row delta committed, and what following the compactions took. */
export function formatDeleteResult(r: DeleteCommandResult): string {
  if (r.matched === 0) return 'no row matched: nothing to delete\n';
  const kind = r.formatVersion >= 3 ? 'deletion vector(s)' : 'position delete file(s)';
  const lines = [
    r.committed
      ? `deleted   ${r.rowsDeleted} row(s) in snapshot ${r.snapshotId}: ${r.filesWritten} ${kind} written`
      : `deleted   0 rows: every matching row was deleted already; nothing committed`,
    `matched   ${r.matched} row(s) in snapshot ${r.preparedSnapshotId}`,
  ];
  if (r.maps > 0) lines.push(`rebased   ${r.rebased} position(s) through ${r.maps} compaction map(s)`);
  if (r.dropped > 0) lines.push(`dropped   ${r.dropped} row(s) a compaction had already removed`);
  if (r.alreadyDeleted > 0) lines.push(`skipped   ${r.alreadyDeleted} row(s) deleted meanwhile`);
  return `${lines.join('\n')}\n`;
}

/** One group in `compact --json`: where, how many files, and what became of it. */
export interface CompactGroupSummary {
  readonly id: string;
  readonly partition: string;
  readonly files: number;
  readonly bytes: number;
  readonly status: 'committed' | 'aborted' | 'failed' | 'not-run';
  readonly reason?: string;
  /** Inputs copied, merged page by page or decoded (a rewritten group). */
  readonly inputPaths?: InputPaths;
}

/**
 * What `compact --json` prints: what automation needs (the outcome of every group, the
 * snapshots committed, the totals), not the plan's per-file statistics (`--verbose` or
 * `plan --json` give those).
 */
export function compactSummary(r: RunReport, dryRun: boolean): object {
  const c = r.commit;
  const committed = new Set(c?.committedGroups ?? []);
  const aborted = new Map((c?.abortedGroups ?? []).map((a) => [a.groupId, a.reason]));
  // A rewrite that failed is an aborted group whose reason says so (lib/pipeline/group-outcome.ts).
  const failed = new Set([...aborted].filter(([, reason]) => reason.startsWith(REWRITE_FAILED)).map(([id]) => id));
  const paths = new Map(r.results.map((x) => [x.groupId, x.inputPaths]));
  const groups: CompactGroupSummary[] = r.plan.groups.map((g) => {
    const reason = aborted.get(g.id);
    const inputPaths = paths.get(g.id);
    return {
      id: g.id,
      partition: g.partitionPath,
      files: g.inputs.length,
      bytes: g.estimate.bytesToRead,
      status: committed.has(g.id) ? 'committed' : failed.has(g.id) ? 'failed' : aborted.has(g.id) ? 'aborted' : 'not-run',
      ...(reason !== undefined ? { reason } : {}),
      ...(inputPaths ? { inputPaths } : {}),
    };
  });
  return {
    table: r.plan.table.location,
    dryRun,
    startingSnapshotId: r.plan.startingSnapshotId,
    policy: r.plan.policy,
    plan: r.plan.summary,
    ...(r.plan.danglingDeletes ? { danglingDeletes: r.plan.danglingDeletes } : {}),
    groups,
    commit: c && {
      committedSnapshotIds: c.committedSnapshotIds,
      tableSnapshotId: c.snapshotId,
      attempts: c.attempts,
      committedGroups: c.committedGroups.length,
      abortedGroups: c.abortedGroups.length,
      filesRemoved: c.filesRemoved,
      filesAdded: c.filesAdded,
      deletesRebased: c.deletesRebased,
    },
    failedGroups: failed.size,
    summary: r.summary,
  };
}

/** What `packice rewrite-manifests` did or, with --dry-run, would do. */
export function formatManifestRewrite(r: RewriteManifestsResult): string {
  const lines = [
    `${r.dryRun ? 'would rewrite' : 'rewrote'} ${r.manifestsReplaced} of ${r.manifestsBefore} manifests into ${r.manifestsWritten}: ` +
      `${r.manifestsBefore} -> ${r.manifestsAfter} manifests`,
  ];
  for (const g of r.groups) {
    lines.push(`  ${g.content} spec ${g.specId}: ${g.manifestsIn} -> ${g.manifestsOut} manifests, ${g.liveEntries} live entries` +
      (g.partitions > 0 ? `, ${g.partitions} partitions` : ''));
  }
  if (!r.dryRun) lines.push(r.snapshotId === null ? 'nothing to rewrite: no snapshot written' : `snapshot ${r.snapshotId} (replace)`);
  return `${lines.join('\n')}\n`;
}
