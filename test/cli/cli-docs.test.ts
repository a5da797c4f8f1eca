/**
 * docs/cli.md names every command and every option of the program `packice` runs, each in a table
 * row with Iceberg's equivalent (or why there is none) in its last column, so it stays true as
 * options are added.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../lib/cli/main.js';
import { REPO_ROOT } from '../support/fixtures.js';

interface Row {
  readonly section: string;
  /** The packice cell: the command and option the row is about. */
  readonly first: string;
  /** Iceberg's equivalent. */
  readonly last: string;
}

const DOC = readFileSync(join(REPO_ROOT, 'docs', 'cli.md'), 'utf8');

/** The table rows of docs/cli.md (header and rule rows left out), with the `##` section each is in. */
function rows(): Row[] {
  const out: Row[] = [];
  for (const section of DOC.split(/^## /m).slice(1)) {
    for (const line of section.split('\n')) {
      if (!line.startsWith('|') || /^\|[-| ]+\|$/.test(line)) continue;
      const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
      if (cells[0] === 'packice') continue;
      out.push({ section, first: cells[0], last: cells[cells.length - 1] });
    }
  }
  return out;
}

/** Every command by its path (`step commit`), with its own options' long names. */
function commands(): { path: string; options: string[] }[] {
  const out: { path: string; options: string[] }[] = [];
  const walk = (c: Command, prefix: string): void => {
    for (const sub of c.commands) {
      const path = `${prefix}${sub.name()}`;
      out.push({ path, options: sub.options.map((o) => o.long!).filter((o) => o !== undefined) });
      walk(sub, `${path} `);
    }
  };
  walk(buildProgram(), '');
  return out;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `step plan` in a cell as a command: after a backtick and before a space or backtick. */
const namesCommand = (cell: string, path: string): boolean => new RegExp(`\`${escape(path)}[ \`]`).test(cell);
const namesOption = (cell: string, option: string): boolean => new RegExp(`${escape(option)}(?![a-z-])`).test(cell);

describe('docs/cli.md', () => {
  const all = commands();
  const table = rows();

  it('has a row for every command, with its Iceberg equivalent', () => {
    const missing = all
      .filter((c) => !table.some((r) => namesCommand(r.first, c.path) && r.last !== ''))
      .map((c) => c.path);
    expect(missing).toEqual([]);
  });

  it('has a row for every option of every command, with its Iceberg equivalent or why there is none', () => {
    const paths = all.map((c) => c.path);
    const missing: string[] = [];
    for (const c of all) {
      for (const option of c.options) {
        const found = table.some(
          (r) =>
            namesOption(r.first, option) &&
            r.last !== '' &&
            // a row of this command, or a shared row (no command in it) of a section about it
            (namesCommand(r.first, c.path) ||
              (!paths.some((p) => namesCommand(r.first, p)) && new RegExp(`\`${escape(c.path)}[ \`]`).test(r.section))),
        );
        if (!found) missing.push(`${c.path} ${option}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('has a row for every global option', () => {
    const globals = buildProgram().options.map((o) => o.long!);
    expect(globals.filter((o) => !table.some((r) => namesOption(r.first, o)))).toEqual([]);
  });

  it('is linked from the README, and the README and docs/ link only files that exist', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('docs/cli.md');
    const broken: string[] = [];
    for (const file of ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]) {
      const text = readFileSync(join(REPO_ROOT, file), 'utf8');
      // Markdown links to relative paths, and backticked repository paths of documents.
      const targets = [
        ...[...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]).filter((t) => !/^[a-z]+:/.test(t)).map((t) => join(dirname(file), t)),
        ...[...text.matchAll(/`([A-Za-z0-9_./-]+\.md)`/g)].map((m) => m[1]),
      ];
      // A backticked name may be from the repository root or from the document's folder.
      const exists = (t: string): boolean => existsSync(join(REPO_ROOT, t)) || existsSync(join(REPO_ROOT, dirname(file), t));
      for (const t of targets) if (!exists(t)) broken.push(`${file} -> ${t}`);
    }
    expect(broken).toEqual([]);
  });
});
