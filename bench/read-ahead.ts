/**
 * Reading ahead (lib/io/read-ahead.ts) against S3's first-byte latency: one group of many small
 * files (bench/compaction-tables.ts's data table, `files` × 2,000 rows) copied onto a moto S3
 * server on loopback, reached through a proxy that holds every request `delay` ms before passing
 * it on (S3's first-byte latency is ~20-60 ms; moto on loopback answers in ~1-5 ms). rewriteGroup
 * runs with read-ahead off and on, `runs` times each, interleaved, each run in a child process of
 * its own (the proxy's CPU is not the rewrite's). Then the cost per GB on Lambda arm64 of each
 * (bench/lambda-cost.ts): Lambda bills wall time, not CPU time.
 *
 *   npx tsx bench/read-ahead.ts [runs=3] [files=300] [delay=30] [--write]
 *
 * --write replaces the read-ahead section of BENCHMARKS.md. The local table is cached in
 * .cache/bench/read-ahead/; the S3 copy is made again each run. Nothing here is imported by lib/
 * or by the tests.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { loadTable } from '../lib/catalog/table.js';
import type { GroupResult } from '../lib/compaction/messages.js';
import { planCompaction } from '../lib/compaction/planner.js';
import { rewriteGroup } from '../lib/compaction/rewriter.js';
import { DEFAULT_READ_AHEAD_BYTES, DEFAULT_READ_AHEAD_FILES } from '../lib/io/read-ahead.js';
import { relocateTable } from '../lib/table/relocate.js';
import { createBucket, startMoto, TEST_AWS_ENV } from '../test/support/moto.js';
import { forwardRequest } from '../test/support/s3-interposer.js';
import { buildDataTable, DATA_COLUMNS } from './compaction-tables.js';
import { costRows, lambdaCostPerGb, type LambdaCost } from './lambda-cost.js';
import {
  loadAverage, machine, machineLines, markdownTable, median, nodeChildArgs, parseArgs, REPO_ROOT, writeSection,
  type PhaseResult,
} from './report.js';

const SCRIPT = fileURLToPath(import.meta.url);
const CACHE = join(REPO_ROOT, '.cache', 'bench', 'read-ahead');
const ROWS_PER_FILE = 2000;
const GB = 1e9;
const MB = 1e6;
const execFileAsync = promisify(execFile);

/** A proxy in front of `target` that holds each request `delayMs` before forwarding it, and counts requests by method. */
async function startDelayProxy(target: string, delayMs: number): Promise<{ endpoint: string; counts: Map<string, number>; server: Server }> {
  const upstream = new URL(target);
  const counts = new Map<string, number>();
  const server = createServer((req, res) => {
    counts.set(req.method ?? '?', (counts.get(req.method ?? '?') ?? 0) + 1);
    req.pause();
    setTimeout(() => {
      forwardRequest(upstream, req, res);
      req.resume();
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { endpoint: `http://127.0.0.1:${port}`, counts, server };
}

/** One rewriteGroup of the table's largest group, read-ahead on or off; outputs deleted after. */
async function rewritePhase(location: string, endpoint: string, readAhead: boolean): Promise<void> {
  const table = await loadTable(location, { s3Endpoint: endpoint });
  const plan = await planCompaction(table.io, table.metadata, { table: { location }, policy: {} });
  const group = [...plan.groups].sort((a, b) => b.inputs.length - a.inputs.length)[0];
  const t = performance.now();
  const c0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const result: GroupResult = await rewriteGroup(table.io, table.metadata, plan, group, readAhead ? {} : { readAhead: false });
  const c = process.cpuUsage(c0);
  // Idle: the event loop had nothing to run, i.e. it waited for S3. Time this thread was runnable
  // but off a CPU (this machine is shared) counts as active, not idle.
  const idleS = performance.eventLoopUtilization(elu0).idle / 1000;
  const wallS = (performance.now() - t) / 1000;
  await table.io.deleteMany([...result.outputs.map((o) => o.filePath), ...(result.compactionMap ? [result.compactionMap] : [])]);
  const out: PhaseResult = {
    wallS: [wallS],
    cpuS: [(c.user + c.system) / 1e6],
    maxRssKiB: process.resourceUsage().maxRSS,
    info: {
      inputs: group.inputs.length,
      bytesIn: group.inputs.reduce((n, i) => n + Number(i.file.fileSizeInBytes), 0),
      bytesOut: result.outputs.reduce((n, o) => n + Number(o.fileSizeInBytes), 0),
      rows: Number(result.checksums.rowsOut),
      hashOut: result.checksums.hashOut,
      idleS,
    },
  };
  console.log(JSON.stringify(out));
}

interface Run {
  readonly readAhead: boolean;
  readonly result: PhaseResult;
  /** Requests the proxy saw during the run (whole child: table load and plan included). */
  readonly gets: number;
  readonly requests: number;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const [runs = 3, files = 300, delay = 30] = args.positional.map(Number);
  const m = machine();
  const loadBefore = loadAverage();
  const local = join(CACHE, `small-${files}x${ROWS_PER_FILE}`);
  console.log(`table: ${files} files × ${ROWS_PER_FILE} rows at ${local}`);
  await buildDataTable(local, { files, rowsPerFile: ROWS_PER_FILE, log: (s) => console.log(s) });

  Object.assign(process.env, TEST_AWS_ENV);
  const moto = await startMoto();
  const proxy = await startDelayProxy(moto.endpoint, delay);
  const runsDone: Run[] = [];
  try {
    const bucket = `read-ahead-${process.pid}`;
    await createBucket(moto.endpoint, bucket);
    const location = `s3://${bucket}/bench/small`;
    const t = performance.now();
    await relocateTable(local, location, { s3Endpoint: moto.endpoint, concurrency: 16 });
    console.log(`copied to ${location} on moto in ${((performance.now() - t) / 1000).toFixed(1)} s; proxy ${proxy.endpoint} holds each request ${delay} ms`);

    for (let r = 0; r < runs; r++) {
      for (const readAhead of r % 2 === 0 ? [false, true] : [true, false]) {
        proxy.counts.clear();
        const [cmd, rest] = nodeChildArgs(SCRIPT, ['--phase', location, proxy.endpoint, readAhead ? 'on' : 'off']);
        // Not spawnSync: the proxy in this process has to keep serving the child.
        const child = await execFileAsync(cmd, rest, { cwd: REPO_ROOT, maxBuffer: 64 * MB }).catch((e: unknown) => {
          throw new Error(`rewrite (read-ahead ${readAhead ? 'on' : 'off'}) failed: ${String(e)}`);
        });
        const result = JSON.parse(child.stdout.trim().split('\n').pop() ?? '') as PhaseResult;
        const gets = proxy.counts.get('GET') ?? 0;
        const requests = [...proxy.counts.values()].reduce((a, b) => a + b, 0);
        runsDone.push({ readAhead, result, gets, requests });
        console.log(
          `  read-ahead ${readAhead ? 'on ' : 'off'}: ${result.wallS[0].toFixed(2)} s wall, ${result.cpuS[0].toFixed(2)} CPU-s, ` +
            `${Math.round(result.maxRssKiB / 1024)} MiB, ${gets} GETs of ${requests} requests, load ${loadAverage()}`,
        );
      }
    }
  } finally {
    await new Promise<void>((resolve) => {
      proxy.server.closeAllConnections();
      proxy.server.close(() => resolve());
    });
    await moto.stop();
  }
  const loadAfter = loadAverage();

  const hashes = new Set(runsDone.map((r) => r.result.info?.hashOut));
  if (hashes.size !== 1) throw new Error(`the runs disagree on the output rows: ${[...hashes].join(', ')}`);
  const info = runsDone[0].result.info!;
  const bytesIn = Number(info.bytesIn);
  const summary = (on: boolean) => {
    const rs = runsDone.filter((r) => r.readAhead === on);
    const wall = median(rs.map((r) => r.result.wallS[0]));
    const cpu = median(rs.map((r) => r.result.cpuS[0]));
    const gets = median(rs.map((r) => r.gets));
    const rss = median(rs.map((r) => r.result.maxRssKiB)) / 1024;
    const idle = median(rs.map((r) => Number(r.result.info?.idleS)));
    // A Lambda's vCPU is its own: its wall time is the CPU time plus the time spent waiting for S3.
    const lambdaWall = cpu + idle;
    const cost = (memoryMb: number, vcpus: number, speedup = cpu / lambdaWall): LambdaCost =>
      lambdaCostPerGb(
        {
          mbPerCpuS: bytesIn / MB / cpu,
          filesPerGb: (Number(info.inputs) / bytesIn) * GB,
          getsPerGb: (gets / bytesIn) * GB,
          outBytesPerGb: (Number(info.bytesOut) / bytesIn) * GB,
        },
        memoryMb,
        vcpus,
        // Billed time is wall time: CPU-s over wall-s is the share of it spent working.
        speedup,
      );
    return { rs, wall, cpu, gets, rss, idle, lambdaWall, cost };
  };
  const off = summary(false);
  const on = summary(true);
  const fmt = (x: number): string => x.toFixed(2);
  const body = [
    '## Reading ahead against S3 latency',
    '',
    `Command: \`npx tsx bench/read-ahead.ts ${runs} ${files} ${delay}${args.write ? ' --write' : ''}\``,
    '',
    ...machineLines(m, [`moto on loopback behind a proxy holding each request ${delay} ms`], loadBefore, loadAfter),
    '',
    `One \`rewriteGroup\` of one group: ${info.inputs} files × ${ROWS_PER_FILE.toLocaleString('en-US')} rows (${DATA_COLUMNS}, ZSTD), ` +
      `${(bytesIn / MB).toFixed(1)} MB in, ${(Number(info.bytesOut) / MB).toFixed(1)} MB out, ${Number(info.rows).toLocaleString('en-US')} rows, ` +
      `from moto S3 on loopback through a proxy that holds every request ${delay} ms before passing it on (S3's first-byte latency is ` +
      `~20-60 ms). Read-ahead off and on, ${runs} runs each, interleaved, each run a fresh child process (the proxy runs in the parent: ` +
      `its CPU is not counted); medians. Read-ahead defaults: ${DEFAULT_READ_AHEAD_FILES} files, ${DEFAULT_READ_AHEAD_BYTES / 2 ** 20} MiB, ` +
      `inputs up to 1 MiB fetched whole (lib/io/read-ahead.ts, rewriter.ts). Same output rows (proof hash) in every run.`,
    '',
    markdownTable(
      ['read-ahead', 'wall s (runs)', 'CPU-s (runs)', 'waiting for S3, s (runs)', 'CPU-s + waiting', 'GETs (whole child)', 'peak RSS'],
      [off, on].map((s, k) => [
        k === 0 ? 'off' : '**on**',
        `${fmt(s.wall)} (${s.rs.map((r) => fmt(r.result.wallS[0])).join(', ')})`,
        `${fmt(s.cpu)} (${s.rs.map((r) => fmt(r.result.cpuS[0])).join(', ')})`,
        `${fmt(s.idle)} (${s.rs.map((r) => fmt(Number(r.result.info?.idleS))).join(', ')})`,
        fmt(s.lambdaWall),
        String(s.gets),
        `${Math.round(s.rss)} MiB`,
      ]),
    ),
    '',
    '*Waiting for S3* is the time the event loop sat idle during the rewrite (`performance.eventLoopUtilization`): nothing to run ' +
      'until a response came. On this shared, loaded machine the wall time also holds the time the process was ready to run but ' +
      'had no CPU (the load average is many times the 2 CPUs), which a Lambda does not have: its vCPU is its own. So the ' +
      'Lambda estimate of wall time is *CPU-s + waiting*.',
    '',
    `Waiting for S3 ${fmt(off.idle)} → ${fmt(on.idle)} s (${fmt(off.idle - on.idle)} s less, ${fmt(((off.idle - on.idle) / Number(info.inputs)) * 1000)} ms per input file); ` +
      `CPU-s + waiting ${fmt(off.lambdaWall)} → ${fmt(on.lambdaWall)} s (${fmt(off.lambdaWall / on.lambdaWall)}× faster). ` +
      `What that does to the price of a GB on Lambda arm64 (bench/lambda-cost.ts, prices lib/pipeline/prices.ts; billed duration = ` +
      `CPU-s + waiting per GB, one worker; files per GB, GETs per GB and output bytes from this run):`,
    '',
    ...costRows(
      [
        ['1,769 MB (1 vCPU), read-ahead off', off.cost(1769, 1)],
        ['1,769 MB (1 vCPU), **read-ahead on**', on.cost(1769, 1)],
        ['1,769 MB, no waiting at all (the on runs\' CPU-s)', on.cost(1769, 1, 1)],
      ],
      (Number(info.inputs) / bytesIn) * GB,
    ),
    '',
    'A 10,240 MB Lambda is left out: rewriteGroup is one thread, so its six vCPUs would cost six times as much for the same wall time.',
    '',
    'Caveats: moto answers from a Python process on the same 2 CPUs, slower than S3 under load; the waiting left with read-ahead ' +
      'on is mostly the outputs\' PUTs and the proof\'s re-read, which are not read ahead. A response that arrives while the ' +
      'process waits for a CPU counts as waiting until it runs, so under load both waiting figures are somewhat high.',
  ].join('\n');
  console.log(`\n${body}\n`);
  if (args.write) writeSection('read-ahead', body);
}

if (process.argv[2] === '--phase') {
  const [location, endpoint, mode] = process.argv.slice(3);
  await rewritePhase(location, endpoint, mode === 'on');
} else {
  await main();
}
