/**
 * The Lambda bundles the CDK app deploys: each one's zipped size and its cold import time in a
 * fresh Node process, next to a bare `@aws-sdk/client-s3` import measured in the same run.
 *
 *   npx tsx bench/bundles.ts [runs=9] [--write]
 *
 * The bundles are the cloud assembly's assets, synthesized in-process from the example stack
 * (esbuild, as `cdk deploy` would upload them); each is copied alone into an empty folder first.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { App } from 'aws-cdk-lib';
import { buildSync } from 'esbuild';
import { PackiceStack } from '../cdk/packice-stack.js';
import { int, loadAverage, machine, machineLines, markdownTable, median, parseArgs, REPO_ROOT, writeSection } from './report.js';

interface Target {
  readonly name: string;
  /** Folder holding `index.js` (and whatever the bundle reads beside it). */
  readonly dir: string;
  /** Zipped size of the folder, bytes; null for the unbundled SDK. */
  readonly zipBytes: number | null;
  /** An event that makes the handler load everything it loads lazily (rewrite only). */
  readonly warmEvent?: unknown;
  readonly note: string;
}

/** The size of a zip of the folder's files (and its subfolders'), each deflated at level 9 as CDK's asset zips are. */
function zipSize(dir: string): number {
  let bytes = 22; // end of central directory
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  for (const name of files.map((e) => relative(dir, join(e.parentPath, e.name)))) {
    const data = readFileSync(join(dir, name));
    const stored = Math.min(deflateRawSync(data, { level: 9 }).length, data.length);
    const nameBytes = Buffer.byteLength(name);
    bytes += 30 + nameBytes + stored + 46 + nameBytes; // local header + data + central directory entry
  }
  return bytes;
}

/** One cold start: a fresh `node` requiring `index.js`, then (if given) handling one event. */
function coldStart(target: Target): { importMs: number; importCpuMs: number; warmMs: number | null } {
  const script = `
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const m = require(${JSON.stringify(join(target.dir, 'index.js'))});
    const importMs = performance.now() - t0;
    const c1 = process.cpuUsage(c0);
    const importCpuMs = (c1.user + c1.system) / 1000;
    const event = ${JSON.stringify(target.warmEvent ?? null)};
    (async () => {
      let warmMs = null;
      if (event !== null) {
        const t1 = performance.now();
        await m.handler(event).catch(() => undefined);
        warmMs = performance.now() - t1;
      }
      console.log(JSON.stringify({ importMs, importCpuMs, warmMs }));
    })();`;
  const run = spawnSync(process.execPath, ['-e', script], {
    cwd: target.dir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  if (run.status !== 0) throw new Error(`${target.name}: exit ${run.status}\n${run.stderr}`);
  const last = run.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as { importMs: number; importCpuMs: number; warmMs: number | null };
}

function functionBundles(work: string): Target[] {
  const outdir = join(work, 'cdk.out');
  const app = new App({ outdir });
  const stack = new PackiceStack(app, 'Packice');
  const assembly = app.synth();
  const template = assembly.getStackArtifact(stack.artifactId).template as {
    Resources: Record<string, { Type: string; Properties: { Description?: string; Code?: { S3Key?: string } } }>;
  };
  const targets: Target[] = [];
  for (const r of Object.values(template.Resources)) {
    if (r.Type !== 'AWS::Lambda::Function' || !r.Properties.Description?.startsWith('packice')) continue;
    const step = r.Properties.Description.split(': ').pop()!;
    const dir = join(work, step);
    cpSync(join(outdir, `asset.${r.Properties.Code!.S3Key!.replace(/\.zip$/, '')}`), dir, { recursive: true });
    // A rewrite of a table that is not there: the handler loads the rewrite step (and Parquet), then fails to open it.
    const warmEvent =
      step === 'rewrite'
        ? {
            table: { location: join(work, 'no-such-table') },
            policy: {},
            startingSnapshotId: null,
            startingSequenceNumber: '0',
            formatVersion: 2,
            createdAtMs: 0,
            group: { id: 'g', inputs: [] },
          }
        : undefined;
    targets.push({ name: step, dir, zipBytes: zipSize(dir), note: readdirSync(dir).filter((f) => f.endsWith('.wasm')).join(', '), ...(warmEvent ? { warmEvent } : {}) });
  }
  return targets.sort((a, b) => a.name.localeCompare(b.name));
}

/** `require('@aws-sdk/client-s3')`, bundled the way the functions are, and straight from node_modules. */
function sdkBaselines(work: string): Target[] {
  const bundled = join(work, 'client-s3');
  const entry = join(work, 'client-s3-entry.cjs');
  writeFileSync(entry, "module.exports = require('@aws-sdk/client-s3');\n");
  buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: true,
    keepNames: true,
    outfile: join(bundled, 'index.js'),
    nodePaths: [join(REPO_ROOT, 'node_modules')],
    logLevel: 'error',
  });
  const unbundled = join(work, 'client-s3-node-modules');
  mkdirSync(unbundled);
  writeFileSync(join(unbundled, 'index.js'), `module.exports = require(${JSON.stringify(join(REPO_ROOT, 'node_modules', '@aws-sdk', 'client-s3'))});\n`);
  return [
    { name: '@aws-sdk/client-s3 alone, bundled like the functions', dir: bundled, zipBytes: zipSize(bundled), note: '' },
    { name: '@aws-sdk/client-s3 alone, from node_modules', dir: unbundled, zipBytes: null, note: '' },
  ];
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const runs = Number(args.positional[0] ?? 9);
  const m = machine();
  const loadBefore = loadAverage();
  const work = mkdtempSync(join(tmpdir(), 'packice-bench-bundles-'));
  try {
    const targets = [...functionBundles(work), ...sdkBaselines(work)];
    const samples = new Map(targets.map((t) => [t.name, [] as { importMs: number; importCpuMs: number; warmMs: number | null }[]]));
    // Round-robin, so each target sees the same spread of load.
    for (let i = 0; i < runs; i++) for (const t of targets) samples.get(t.name)!.push(coldStart(t));
    const loadAfter = loadAverage();

    const rows = targets.map((t) => {
      const s = samples.get(t.name)!;
      const imports = s.map((x) => x.importMs);
      const warm = s.map((x) => x.warmMs).filter((x): x is number => x !== null);
      const indexBytes = statSync(join(t.dir, 'index.js')).size;
      return [
        t.name,
        t.zipBytes === null ? '' : `**${(t.zipBytes / 1e6).toFixed(2)} MB**`,
        t.zipBytes === null ? '' : `${(indexBytes / 1e6).toFixed(2)} MB`,
        t.note || (t.zipBytes === null ? '' : 'none'),
        `**${int(median(imports))}**`,
        imports.map((x) => int(x)).join(', '),
        int(median(s.map((x) => x.importCpuMs))),
        warm.length > 0 ? int(median(warm)) : '',
      ];
    });
    const table = markdownTable(
      ['bundle', 'zipped', 'index.js', '.wasm beside it', 'median cold import, ms', 'each run, ms', 'median import CPU, ms', 'median first event (lazy loads), ms'],
      rows,
    );
    console.log(`\n${table}\n`);
    console.log(`load average ${loadBefore} → ${loadAfter} (${m.nproc} CPUs)`);

    if (args.write) {
      const command = ['npx tsx bench/bundles.ts', ...process.argv.slice(2)].join(' ');
      writeSection('bundles', [
        '## Lambda bundles: size and cold import',
        '',
        `- **Command:** \`${command}\``,
        ...machineLines(m, [], loadBefore, loadAfter),
        '- **What:** the example stack synthesized in-process; each function\'s asset (esbuild, minified CommonJS, ' +
          'AWS SDK included, the Glue and S3 Tables clients bundled apart in `node_modules/` beside `index.js` and loaded ' +
          'only for catalog tables, source map beside it) copied alone into an empty folder. "Zipped" is the folder zipped ' +
          'with deflate level 9, as CDK uploads it (the Lambda limit is 50 MB zipped).',
        `- **Cold import:** ${runs} fresh \`node\` processes per bundle, round-robin across the bundles; the figure is ` +
          '`require(\'./index.js\')` timed inside the process (wall clock, and the CPU time of the process over it, which ' +
          'a loaded machine stretches less). The SDK rows are the floor every function pays: ' +
          '`@aws-sdk/client-s3` bundled the same way, and loaded from node_modules. "First event" (rewrite) is a ' +
          'handler call that loads the rewrite step and compiles the Parquet and Roaring wasm, then fails to open a ' +
          'table that is not there: the cost the first rewrite in a container pays once.',
        '',
        table,
      ].join('\n'));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
