/**
 * How the CLI's modules depend on each other, read from their import lines: no cycle among
 * lib/cli's modules (the demo once imported main, which imports the demo), and bench/ imports
 * no CLI code (it runs `bin/packice.js` as a child process where it needs the CLI).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Repository-relative paths of the .ts files a file imports (relative imports only). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)) {
    out.push(relative(ROOT, resolve(ROOT, dirname(file), m[1].replace(/\.js$/, '.ts'))));
  }
  return out;
}

const tsFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.ts')).map((f) => join(dir, f));

describe('CLI imports', () => {
  it('lib/cli has no import cycle', () => {
    const files = tsFiles('lib/cli');
    const edges = new Map(files.map((f) => [f, importsOf(f).filter((i) => i.startsWith('lib/cli/'))]));
    expect(edges.get('lib/cli/demo.ts')).not.toContain('lib/cli/main.ts');
    const cycles: string[] = [];
    const visit = (f: string, path: string[]): void => {
      if (path.includes(f)) {
        cycles.push([...path.slice(path.indexOf(f)), f].join(' -> '));
        return;
      }
      for (const next of edges.get(f) ?? []) visit(next, [...path, f]);
    };
    for (const f of files) visit(f, []);
    expect(cycles).toEqual([]);
  });

  it('bench/ imports no CLI code', () => {
    const cli = tsFiles('bench').flatMap((f) => importsOf(f).filter((i) => i.startsWith('lib/cli/')).map((i) => `${f} -> ${i}`));
    expect(cli).toEqual([]);
  });
});
