import { resolve } from 'node:path';
import { loadTable } from '../catalog/table.js';
import { LocalFileIO } from '../io/local.js';
import { tableInfo } from '../table/info.js';
import { buildDemoTable } from '../table/demo-table.js';
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


/** Reads every live row once; the time a reader pays for the table's layout. */
export async function timeFullScan(location: string): Promise<ScanTiming> {
  const t = await loadTable(location);
  const start = performance.now();
  let rows = 0;
  for await (const _ of scanRows(t.io, t.metadata)) rows++;
  return { rows, ms: performance.now() - start };
}
