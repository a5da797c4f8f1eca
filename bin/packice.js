#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so `npx packice` works right after `npm ci`.
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../lib/cli/main.ts');
await main(process.argv);
