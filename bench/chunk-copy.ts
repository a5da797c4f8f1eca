/**
 * Issue 11: does copying column chunks (lib/compaction/chunk-copy.ts) beat decode/encode, and
 * what does a GB compacted cost then? Interleaved in one run on a table of few-MB files with one
 * row group each (default `.cache/bench/cc-200x4mb`: 200 files × 300,000 rows, ~3.9 MB each,
 * built by `npx tsx bench/compaction.ts --phase build <abs path> 200 300000` when missing):
 *
 *   npx tsx bench/chunk-copy.ts [table location] [rounds=3]
 *
 * Each round runs `rewriteGroup` of the table's one group in a fresh process twice: with the
 * row-group floor at 1 byte (every input copied) and above every row group (every input
 * decoded, the path before). CPU seconds are the child's user + system, all threads; the
 * figure is the median round. The outputs of the last round are kept for a read check: pyarrow
 * reads each (`read_table(use_threads=False)`, 3 times) so that the cost a reader pays for the
 * copied file's smaller row groups shows next to the decoded file's. Then the cost per GB on
 * Lambda for both paths (bench/lambda-cost.ts). Prints JSON and Markdown; changes nothing.
 *
 *   npx tsx bench/chunk-copy.ts --phase rewrite <table> <floor bytes> [keep]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { loadTable } from '../lib/catalog/table.js';
import { COPY_MIN_ROW_GROUP_BYTES_PROPERTY, MERGE_MIN_ROW_GROUP_BYTES_PROPERTY } from '../lib/compaction/chunk-copy.js';
import { planCompaction } from '../lib/compaction/planner.js';
import { rewriteGroup } from '../lib/compaction/rewriter.js';
import { readFooter } from '../lib/parquet/footer.js';
import { costRows, lambdaCostPerGb } from './lambda-cost.js';
import { ensurePython, median, nodeChildArgs, REPO_ROOT, runChild, type PhaseResult } from './report.js';

const SCRIPT = fileURLToPath(import.meta.url);
const GB = 1e9;
const MB = 1e6;

/** One rewrite of the table's one group with the floor set to `floor`; prints a PhaseResult. */
async function rewritePhase(location: string, floor: number, keep: boolean): Promise<void> {
  const table = await loadTable(location);
  // The floor for both the copy and the merge: above every row group, every input is decoded (the path before both).
  const metadata = { ...table.metadata, properties: { ...table.metadata.properties, [COPY_MIN_ROW_GROUP_BYTES_PROPERTY]: String(floor), [MERGE_MIN_ROW_GROUP_BYTES_PROPERTY]: String(floor) } };
  // The whole table as one group (the default maxGroupBytes, 700 MiB, would cut a larger one).
  const plan = await planCompaction(table.io, metadata, { table: { location }, policy: { maxGroupBytes: 2 ** 40 } });
  if (plan.groups.length !== 1) throw new Error(`${location}: expected one group, the plan has ${plan.groups.length}`);
  const group = plan.groups[0];
  const t = performance.now();
  const c0 = process.cpuUsage();
  const result = await rewriteGroup(table.io, metadata, plan, group);
  const c = process.cpuUsage(c0);
  const wall = (performance.now() - t) / 1000;
  let rowGroupsOut = 0;
  for (const o of result.outputs) rowGroupsOut += (await readFooter(table.io.newInputFile(o.filePath))).footer.rowGroups.length;
  if (!keep) {
    for (const o of result.outputs) rmSync(o.filePath, { force: true });
  }
  if (result.compactionMap !== undefined) rmSync(result.compactionMap, { force: true });
  console.log(JSON.stringify({
    wallS: [wall], cpuS: [(c.user + c.system) / 1e6], maxRssKiB: process.resourceUsage().maxRSS,
    info: {
      inputs: group.inputs.length,
      bytesIn: group.inputs.reduce((n, i) => n + Number(i.file.fileSizeInBytes), 0),
      bytesOut: result.outputs.reduce((n, o) => n + Number(o.fileSizeInBytes), 0),
      outputs: result.outputs.length,
      copied: result.outputs.filter((o) => o.filePath.includes('-copy-')).length,
      rowGroupsOut,
      rows: Number(result.checksums.rowsOut),
      paths: result.outputs.map((o) => o.filePath).join(','),
    },
  } satisfies PhaseResult));
}

const READ_SCRIPT = `
import json, resource, sys, time
import pyarrow.parquet as pq
paths = sys.argv[1].split(',')
cpu = []
for _ in range(int(sys.argv[2])):
    c0 = time.process_time()
    rows = sum(pq.read_table(p, use_threads=False).num_rows for p in paths)
    cpu.append(time.process_time() - c0)
groups = sum(pq.ParquetFile(p).metadata.num_row_groups for p in paths)
print(json.dumps({"wallS": [], "cpuS": cpu, "maxRssKiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "info": {"rows": rows, "rowGroups": groups}}))
`;

async function main(): Promise<void> {
  const location = process.argv[2] ?? join(REPO_ROOT, '.cache', 'bench', 'cc-200x4mb');
  const rounds = Number(process.argv[3] ?? 3);
  if (!existsSync(join(location, 'metadata'))) {
    const [cmd, args] = nodeChildArgs(join(REPO_ROOT, 'bench', 'compaction.ts'), ['--phase', 'build', location, '200', '300000']);
    if (spawnSync(cmd, args, { stdio: 'inherit', cwd: REPO_ROOT }).status !== 0) throw new Error(`could not build ${location}`);
  }
  const load = (): string => loadavg().map((x) => x.toFixed(1)).join(' ');
  const runs: Record<'copy' | 'decode', { r: PhaseResult; load: string }[]> = { copy: [], decode: [] };
  const kept: Record<'copy' | 'decode', string> = { copy: '', decode: '' };
  try {
    for (let k = 0; k < rounds; k++) {
      for (const path of ['copy', 'decode'] as const) {
        const l = load();
        const last = k === rounds - 1;
        const [cmd, args] = nodeChildArgs(SCRIPT, ['--phase', 'rewrite', location, path === 'copy' ? '1' : String(2 ** 50), ...(last ? ['keep'] : [])]);
        const r = runChild(cmd, args, `${path} rewrite`);
        runs[path].push({ r, load: l });
        if (last) kept[path] = String(r.info?.paths ?? '');
        console.error(`round ${k + 1}: ${path} ${r.cpuS[0].toFixed(2)} CPU-s, ${r.info?.outputs} outputs, ${r.info?.rowGroupsOut} row groups (load ${l})`);
      }
    }
    const python = ensurePython();
    const reads: Record<string, PhaseResult | null> = { copy: null, decode: null };
    if (python) {
      for (const path of ['copy', 'decode'] as const) {
        reads[path] = runChild(python, ['-c', READ_SCRIPT, kept[path], '3'], `pyarrow read of the ${path} output`);
        console.error(`pyarrow read of the ${path} output: ${reads[path]!.cpuS.map((x) => x.toFixed(2)).join(', ')} CPU-s`);
      }
    }
    report(location, runs, reads);
  } finally {
    for (const paths of Object.values(kept)) for (const p of paths.split(',').filter(Boolean)) rmSync(p, { force: true });
  }
}

function report(
  location: string,
  runs: Record<'copy' | 'decode', { r: PhaseResult; load: string }[]>,
  reads: Record<string, PhaseResult | null>,
): void {
  const info = runs.copy[0].r.info!;
  const bytesIn = Number(info.bytesIn);
  const inputs = Number(info.inputs);
  const filesPerGb = GB / (bytesIn / inputs);
  const lines: string[] = [];
  const summary: Record<string, unknown> = { location, inputs, bytesIn, rows: info.rows };
  const costs: [string, ReturnType<typeof lambdaCostPerGb>][] = [];
  lines.push('| path | CPU-s per run (load, 1 min) | median CPU-s | MB in per CPU-second | CPU-s per GB | peak RSS | outputs | row groups out | bytes out |');
  lines.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const path of ['copy', 'decode'] as const) {
    const rs = runs[path];
    const cpu = median(rs.map((x) => x.r.cpuS[0]));
    const mbPerCpuS = bytesIn / MB / cpu;
    const last = rs[rs.length - 1].r.info!;
    const outBytes = Number(last.bytesOut);
    const rowGroupsOut = Number(last.rowGroupsOut);
    const outputs = Number(last.outputs);
    // Each input: the footer's tail and one range read per row group (one here; the first one also
    // holds the leading magic); the proof: the same per output. bench/cost-per-gb.ts counts them on S3.
    const getsPerGb = filesPerGb * 2 + ((outputs + rowGroupsOut) * GB) / bytesIn;
    const workload = { mbPerCpuS, filesPerGb, getsPerGb, outBytesPerGb: (outBytes / bytesIn) * GB };
    costs.push([`${path}, 1,769 MB (1 vCPU)`, lambdaCostPerGb(workload, 1769, 1)], [`${path}, 10,240 MB (6 vCPU), one worker`, lambdaCostPerGb(workload, 10240, 6)]);
    summary[path] = { cpuS: rs.map((x) => +x.r.cpuS[0].toFixed(2)), loads: rs.map((x) => x.load), medianCpuS: +cpu.toFixed(2), mbPerCpuS: +mbPerCpuS.toFixed(2), rssMiB: Math.max(...rs.map((x) => Math.round(x.r.maxRssKiB / 1024))), outputs, rowGroupsOut, outBytes, read: reads[path] };
    lines.push(`| ${path} | ${rs.map((x) => `${x.r.cpuS[0].toFixed(2)} (${x.load.split(' ')[0]})`).join(', ')} | **${cpu.toFixed(2)}** | ${mbPerCpuS.toFixed(2)} | ${(GB / MB / mbPerCpuS).toFixed(1)} | ${Math.max(...rs.map((x) => Math.round(x.r.maxRssKiB / 1024)))} MiB | ${outputs} | ${rowGroupsOut} | ${outBytes.toLocaleString('en-US')} |`);
  }
  console.log(JSON.stringify(summary, null, 2));
  console.log(['', ...lines, '', ...costRows(costs, filesPerGb)].join('\n'));
  if (reads.copy && reads.decode) {
    const row = (p: string, r: PhaseResult): string => `| ${p} output, ${r.info?.rowGroups} row groups | ${r.cpuS.map((x) => x.toFixed(2)).join(', ')} | **${median(r.cpuS).toFixed(2)}** |`;
    console.log(['', '| pyarrow `read_table(use_threads=False)` of | CPU-s per read | median |', '| --- | --- | --- |', row('copy', reads.copy), row('decode', reads.decode)].join('\n'));
  }
}

if (process.argv[2] === '--phase') {
  const [phase, location, floor, keep] = process.argv.slice(3);
  if (phase !== 'rewrite') throw new Error(`unknown phase ${phase}`);
  await rewritePhase(location, Number(floor), keep === 'keep');
} else {
  await main();
}
