/**
 * `npm run build`'s second half: the six Lambda bundles the compiled construct (dist/cdk) deploys,
 * built once here with the same esbuild options as the construct's own bundling, each with its
 * `.wasm` files, worker bundles (WORKER_BUNDLES) and lazy SDK clients (LAZY_MODULES) beside it, into dist/bundles/<step>/. A user's CDK app then needs neither esbuild
 * nor this repository's layout.
 */
import { chmodSync, copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { ESBUILD_OPTIONS, EXEC_WRAPPER, LAZY_MODULES, lazyModuleFile, NATIVE_MODULES, STEPS, WASM_FILES, WASM_STEPS, WORKER_BUNDLES } from '../cdk/iceberg-maintenance.js';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const out = join(REPO_ROOT, 'dist', 'bundles');
rmSync(out, { recursive: true, force: true });
for (const step of STEPS) {
  const dir = join(out, step);
  mkdirSync(dir, { recursive: true });
  const common = { ...ESBUILD_OPTIONS, bundle: true, logLevel: 'warning' } as const;
  buildSync({ ...common, entryPoints: [join(REPO_ROOT, 'functions', `${step}.ts`)], external: [...LAZY_MODULES, ...NATIVE_MODULES], outfile: join(dir, 'index.js') });
  for (const m of LAZY_MODULES) buildSync({ ...common, sourcemap: false, entryPoints: [require.resolve(m)], outfile: join(dir, lazyModuleFile(m)) });
  for (const w of WORKER_BUNDLES.filter((x) => x.step === step)) buildSync({ ...common, sourcemap: false, external: [...NATIVE_MODULES], entryPoints: [join(REPO_ROOT, w.entry)], outfile: join(dir, w.fileName) });
  if (WASM_STEPS.includes(step)) for (const w of WASM_FILES) copyFileSync(require.resolve(w.module), join(dir, w.fileName));
  if (step === EXEC_WRAPPER.step) {
    copyFileSync(join(REPO_ROOT, EXEC_WRAPPER.source), join(dir, EXEC_WRAPPER.fileName));
    chmodSync(join(dir, EXEC_WRAPPER.fileName), 0o755);
  }
  console.log(`dist/bundles/${step}`);
}
