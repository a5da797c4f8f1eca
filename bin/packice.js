#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm ci` through the `prepare` script, or `npm run build`).
// Without a build, or with PACKICE_FROM_SOURCE=1, it runs the TypeScript sources through tsx.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/lib/cli/main.js', import.meta.url);
let main;
if (process.env.PACKICE_FROM_SOURCE !== '1' && existsSync(compiled)) {
  ({ main } = await import(compiled.href));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../lib/cli/main.ts'));
}
await main(process.argv);
