// Compiles lib/ to dist/lib/ (one .js per .ts, same folders) so `bin/packice.js` starts without
// compiling TypeScript on every run. Run by `npm ci`/`npm install` (the `prepare` script), by
// `npm run build`, and by the test setup, so child processes never run a stale build.
// esbuild only strips types; `npx tsc --noEmit` is what checks them.
import { copyFile, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

async function* files(dir) {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else yield p;
  }
}

const sources = [];
const copies = [];
for await (const f of files(join(root, 'lib'))) {
  if (f.endsWith('.ts') && !f.endsWith('.d.ts')) sources.push(f);
  else if (f.endsWith('.mjs') || f.endsWith('.json')) copies.push(f);
}

// Built beside dist and swapped in: a run started meanwhile sees the old build or the new one.
const out = join(root, `dist.building-${process.pid}`);
await rm(out, { recursive: true, force: true });
await build({
  entryPoints: sources,
  outdir: join(out, 'lib'),
  outbase: join(root, 'lib'),
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
});
for (const f of copies) {
  const to = join(out, relative(root, f));
  await mkdir(dirname(to), { recursive: true });
  await copyFile(f, to);
}
// Only dist/lib is swapped: `npm run build` also writes the construct (dist/cdk) and the Lambda
// bundles (dist/bundles) beside it.
const lib = join(root, 'dist', 'lib');
const old = join(root, `dist.old-${process.pid}`);
await mkdir(join(root, 'dist'), { recursive: true });
await rename(lib, old).catch((e) => {
  if (e.code !== 'ENOENT') throw e;
});
await rename(join(out, 'lib'), lib);
await rm(old, { recursive: true, force: true });
await rm(out, { recursive: true, force: true });
