/**
 * Issue 11: the page-level row-group merge (lib/parquet/row-group-merge.ts) against the decode
 * path, by input file size: what each costs and how large its output is. Tables of 200 files × N
 * rows each (the t3m layout: long, int, double, string, timestamptz, decimal; one row group per
 * file), built under `.cache/bench/rgm-200x<N>` by `bench/compaction.ts --phase build` when missing:
 *
 *   npx tsx bench/row-group-merge.ts [rows per file, comma-separated = 250,500,1000,2000,8000] [rounds=3]
 *
 * Each round rewrites each table's one group in a fresh process twice: merged (copy floor above
 * every row group, merge floor 1 byte) and decoded (merge floor above every row group). CPU
 * seconds are the child's user + system, all threads; the figure is the median round. The output
 * bytes are what a query reads after: the merge floor's default is where the merged output stops
 * being markedly larger. Prints JSON and Markdown; changes nothing.
 *
 *   npx tsx bench/row-group-merge.ts --phase rewrite <table> merge|decode
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTable } from '../lib/catalog/table.js';
import { COPY_MIN_ROW_GROUP_BYTES_PROPERTY, MERGE_MIN_ROW_GROUP_BYTES_PROPERTY } from '../lib/compaction/chunk-copy.js';
import { planCompaction } from '../lib/compaction/planner.js';
import { rewriteGroup } from '../lib/compaction/rewriter.js';
import { median, nodeChildArgs, REPO_ROOT, runChild, type PhaseResult } from './report.js';

const SCRIPT = fileURLToPath(import.meta.url);
const FILES = 200;

async function rewritePhase(location: string, path: 'merge' | 'decode'): Promise<void> {
  const table = await loadTable(location);
  const floors: Record<string, string> = path === 'merge'
    ? { [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: String(2 ** 50), [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: '1' }
    : { [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: String(2 ** 50) };
  const metadata = { ...table.metadata, properties: { ...table.metadata.properties, ...floors } };
  const plan = await planCompaction(table.io, metadata, { table: { location }, policy: { maxGroupBytes: 2 ** 40 } });
  if (plan.groups.length !== 1) throw new Error(`${location}: expected one group, the plan has ${plan.groups.length}`);
  const group = plan.groups[0];
  const c0 = process.cpuUsage();
  const result = await rewriteGroup(table.io, metadata, plan, group);
  const c = process.cpuUsage(c0);
  const merged = result.outputs.filter((o) => o.filePath.includes('-merge-')).length;
  for (const o of result.outputs) rmSync(o.filePath, { force: true });
  if (result.compactionMap !== undefined) rmSync(result.compactionMap, { force: true });
  console.log(JSON.stringify({
    wallS: [], cpuS: [(c.user + c.system) / 1e6], maxRssKiB: process.resourceUsage().maxRSS,
    info: {
      bytesIn: group.inputs.reduce((n, i) => n + Number(i.file.fileSizeInBytes), 0),
      bytesOut: result.outputs.reduce((n, o) => n + Number(o.fileSizeInBytes), 0),
      merged,
      rows: Number(result.checksums.rowsOut),
    },
  } satisfies PhaseResult));
}

async function main(): Promise<void> {
  const sizes = (process.argv[2] ?? '250,500,1000,2000,8000').split(',').map(Number);
  const rounds = Number(process.argv[3] ?? 3);
  const tables = sizes.map((rows) => {
    const location = join(REPO_ROOT, '.cache', 'bench', `rgm-${FILES}x${rows}`);
    if (!existsSync(join(location, 'metadata'))) {
      const [cmd, args] = nodeChildArgs(join(REPO_ROOT, 'bench', 'compaction.ts'), ['--phase', 'build', location, String(FILES), String(rows)]);
      if (spawnSync(cmd, args, { stdio: 'inherit', cwd: REPO_ROOT }).status !== 0) throw new Error(`could not build ${location}`);
    }
    return { rows, location };
  });
  const runs = new Map<string, { r: PhaseResult; load: number }[]>();
  for (let k = 0; k < rounds; k++) {
    for (const { rows, location } of tables) {
      for (const path of ['merge', 'decode'] as const) {
        const load = loadavg()[0];
        const [cmd, args] = nodeChildArgs(SCRIPT, ['--phase', 'rewrite', location, path]);
        const r = runChild(cmd, args, `${path} rewrite of ${location}`);
        const key = `${rows} ${path}`;
        runs.set(key, [...(runs.get(key) ?? []), { r, load }]);
        console.error(`round ${k + 1}: ${rows} rows/file, ${path}: ${r.cpuS[0].toFixed(2)} CPU-s, ${Number(r.info?.bytesOut).toLocaleString('en-US')} B out (load ${load.toFixed(1)})`);
      }
    }
  }
  const lines = [
    '| rows per input | input file | row group (compressed) | merged: median CPU-s (per round) | decoded: median CPU-s (per round) | merged ÷ decoded CPU | bytes out merged | bytes out decoded | merged ÷ decoded bytes |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const summary: Record<string, unknown>[] = [];
  for (const { rows, location } of tables) {
    const m = runs.get(`${rows} merge`)!;
    const d = runs.get(`${rows} decode`)!;
    const info = m[0].r.info!;
    if (Number(info.merged) === 0) throw new Error(`${location}: nothing was merged`);
    const bytesIn = Number(info.bytesIn);
    const fileBytes = Math.round(bytesIn / FILES);
    const cm = median(m.map((x) => x.r.cpuS[0]));
    const cd = median(d.map((x) => x.r.cpuS[0]));
    const bm = Number(m[0].r.info!.bytesOut);
    const bd = Number(d[0].r.info!.bytesOut);
    summary.push({ rows, fileBytes, merge: m.map((x) => x.r.cpuS[0]), decode: d.map((x) => x.r.cpuS[0]), bytesOutMerged: bm, bytesOutDecoded: bd });
    const per = (xs: { r: PhaseResult }[]): string => xs.map((x) => x.r.cpuS[0].toFixed(2)).join(', ');
    lines.push(`| ${rows.toLocaleString('en-US')} | ${(fileBytes / 1024).toFixed(1)} KiB | ~${((fileBytes - 2000) / 1024).toFixed(1)} KiB | **${cm.toFixed(2)}** (${per(m)}) | **${cd.toFixed(2)}** (${per(d)}) | ${(cm / cd).toFixed(2)} | ${bm.toLocaleString('en-US')} | ${bd.toLocaleString('en-US')} | ${(bm / bd).toFixed(3)} |`);
  }
  console.log(JSON.stringify(summary, null, 2));
  console.log(['', ...lines].join('\n'));
}

if (process.argv[2] === '--phase') {
  const [phase, location, path] = process.argv.slice(3);
  if (phase !== 'rewrite' || (path !== 'merge' && path !== 'decode')) throw new Error(`unknown phase ${phase} ${path}`);
  await rewritePhase(location, path);
} else {
  await main();
}
