import { resolve } from 'node:path';
import { loadTable } from '../catalog/table.js';
import { LocalFileIO } from '../io/local.js';
import { fromBytes } from '../iceberg/bounds.js';
import type { DataFile } from '../iceberg/manifest.js';
import type { Row } from '../iceberg/values.js';
import { tableInfo } from '../table/info.js';
import { appendRows, createNewTable, deleteRows } from '../table/operations.js';
import { scanRows } from '../table/scan.js';
import { tableHealth } from '../compaction/health.js';
import { runCompaction } from '../pipeline/local-runner.js';
import { formatBytes, formatDuration, formatHealth, formatInfo, formatRunReport } from './format.js';
import { prepareDemoFolder } from './demo-folder.js';
import { progressBar } from './progress.js';

export interface DemoOptions {
  readonly json: boolean;
  readonly out: (s: string) => void;
  /** Commits to make (default 240: eight hours of two-minute commits). */
  readonly commits?: number;
  readonly rowsPerCommit?: number;
}

const ACTIONS = ['view', 'click', 'purchase', 'share'] as const;
const START_US = 1_767_225_600_000_000n; // 2026-01-01T00:00:00Z
const TWO_MINUTES_US = 120_000_000n;

/** Rows of one streaming commit: events of the last two minutes, across every action. */
function batch(commit: number, rows: number): Row[] {
  const out: Row[] = [];
  for (let i = 0; i < rows; i++) {
    const id = commit * rows + i;
    out.push({
      event_id: BigInt(id),
      user_id: BigInt((id * 7919) % 5000),
      action: ACTIONS[(id * 31 + commit) % ACTIONS.length],
      ts: START_US + BigInt(commit) * TWO_MINUTES_US + BigInt((i * 397) % 120_000_000),
      amount: BigInt((id * 37) % 100_000),
    });
  }
  return out;
}

export interface DemoTableOptions {
  /** Commits to make (default 240: eight hours of two-minute commits). */
  readonly commits?: number;
  readonly rowsPerCommit?: number;
  readonly onCommit?: (done: number) => void;
}

/**
 * Builds the demo's table the way a streaming job does, in an absent or empty folder: many
 * two-minute commits of a few hundred rows across partitions, every tenth followed by a
 * late correction that deletes a few rows. Returns how many rows the corrections deleted.
 */
export async function buildDemoTable(location: string, options: DemoTableOptions = {}): Promise<{ deleted: number }> {
  const commits = options.commits ?? 240;
  const rowsPerCommit = options.rowsPerCommit ?? 300;
  const io = new LocalFileIO();
  let table = await createNewTable(io, location, {
    formatVersion: 2,
    schema: {
      type: 'struct',
      fields: [
        { id: 1, name: 'event_id', required: true, type: { type: 'long' } },
        { id: 2, name: 'user_id', required: true, type: { type: 'long' } },
        { id: 3, name: 'action', required: true, type: { type: 'string' } },
        { id: 4, name: 'ts', required: true, type: { type: 'timestamptz' } },
        { id: 5, name: 'amount', required: false, type: { type: 'decimal', precision: 12, scale: 2 } },
      ],
    },
    partitionFields: [
      { sourceId: 3, name: 'action', transform: { kind: 'identity' } },
      { sourceId: 4, name: 'ts_hour', transform: { kind: 'hour' } },
    ],
    // As streaming writers are configured: the metadata log stays short and old metadata files go.
    properties: {
      'write.target-file-size-bytes': String(128 * 1024 * 1024),
      'write.metadata.delete-after-commit.enabled': 'true',
      'write.metadata.previous-versions-max': '10',
    },
  });
  let deleted = 0;
  for (let c = 0; c < commits; c++) {
    table = await appendRows(table, batch(c, rowsPerCommit));
    // Every tenth commit, a late correction deletes a few events of the last hour.
    if (c % 10 === 9) {
      const from = BigInt((c - 9) * rowsPerCommit);
      const r = await deleteRows(
        table,
        (row) => {
          const id = row.event_id as bigint;
          return id >= from && id % 13n === 0n;
        },
        // Like a real job, read only the files that can hold the late events.
        { files: (f) => upperEventId(f) >= from },
      );
      table = r.table;
      deleted += r.deleted;
    }
    options.onCommit?.(c + 1);
  }
  return { deleted };
}

/** Builds the demo table (see buildDemoTable), then shows what it looks like and compacts it. */
export async function runDemo(folder: string, options: DemoOptions): Promise<void> {
  const location = resolve(folder);
  const commits = options.commits ?? 240;
  const rowsPerCommit = options.rowsPerCommit ?? 300;
  const io = new LocalFileIO();
  await prepareDemoFolder(location);
  const log = (s: string): void => {
    if (!options.json) options.out(s);
  };
  log(`building a streaming demo table in ${location}: ${commits} commits of ${rowsPerCommit} rows, two minutes apart\n`);
  const progress = progressBar(!options.json);
  const started = Date.now();
  const { deleted } = await buildDemoTable(location, { commits, rowsPerCommit, onCommit: (n) => progress('commits', n, commits) });
  log(`  ${commits} commits and ${Math.floor(commits / 10)} deletes (${deleted} rows) in ${formatDuration(Date.now() - started)}\n\n`);

  let table = await loadTable(location, { io });
  const before = await tableInfo(io, table.metadata);
  const scanBefore = await timeFullScan(location);
  const health = await tableHealth(io, table.metadata);
  if (!options.json) {
    options.out(formatInfo(before, table.metadataLocation));
    options.out(`full scan         ${scanBefore.rows} live rows in ${formatDuration(scanBefore.ms)}\n\n`);
    options.out(`== health\n${formatHealth(health)}\n== compact\n`);
  }
  const report = await runCompaction({ table: { location } }, {});
  if (!options.json) options.out(`${formatRunReport(report, false)}\n`);
  table = await loadTable(location, { io });
  const after = await tableInfo(io, table.metadata);
  const scanAfter = await timeFullScan(location);
  if (options.json) {
    options.out(`${JSON.stringify({ location, before, after, compaction: report.summary, fullScan: { before: scanBefore, after: scanAfter } }, null, 2)}\n`);
    return;
  }
  const rows: [string, string, string][] = [
    ['data files', String(before.dataFiles), String(after.dataFiles)],
    ['delete files', String(before.positionDeleteFiles + before.deletionVectors + before.equalityDeleteFiles), String(after.positionDeleteFiles + after.deletionVectors + after.equalityDeleteFiles)],
    ['bytes', formatBytes(BigInt(before.dataBytes) + BigInt(before.deleteBytes)), formatBytes(BigInt(after.dataBytes) + BigInt(after.deleteBytes))],
    ['live rows', String(scanBefore.rows), String(scanAfter.rows)],
    ['full scan', formatDuration(scanBefore.ms), formatDuration(scanAfter.ms)],
  ];
  options.out(`== before and after\n${rows.map(([k, b, a]) => `${k.padEnd(13)}${b.padStart(12)}  ->  ${a}`).join('\n')}\n`);
}

export interface ScanTiming {
  readonly rows: number;
  readonly ms: number;
}

function upperEventId(f: DataFile): bigint {
  const b = f.upperBounds?.get(1);
  return b ? (fromBytes({ type: 'long' }, b) as bigint) : BigInt(Number.MAX_SAFE_INTEGER);
}

/** Reads every live row once; the time a reader pays for the table's layout. */
export async function timeFullScan(location: string): Promise<ScanTiming> {
  const t = await loadTable(location);
  const start = performance.now();
  let rows = 0;
  for await (const _ of scanRows(t.io, t.metadata)) rows++;
  return { rows, ms: performance.now() - start };
}
