/**
 * `packice step` on files that are not what it needs: a missing file, a JSON file that is not a
 * Plan, results that are not GroupResults. One line naming the file, exit code 1, no stack.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../support/cli.js';
import { tempDir } from '../support/fixtures.js';

describe('packice step with the wrong files', () => {
  const dir = tempDir('packice-step-errors-');
  const notPlan = join(dir, 'report.json');
  writeFileSync(notPlan, JSON.stringify({ command: 'expire', files: [] }));
  const plan = join(dir, 'plan.json');
  writeFileSync(plan, JSON.stringify({ table: { location: join(dir, 't') }, groups: [] }));
  const badResults = join(dir, 'results.jsonl');
  writeFileSync(badResults, '{"files": 3}\n');

  it.each([
    [['step', 'rewrite', join(dir, 'nosuch.json')], /nosuch\.json: cannot read the plan: no such file/],
    [['step', 'commit', plan, join(dir, 'nosuch.jsonl')], /nosuch\.jsonl: cannot read the results: no such file/],
    [['step', 'rewrite', notPlan], /report\.json: not a Plan message/],
    [['step', 'commit', notPlan, badResults], /report\.json: not a Plan message/],
    [['step', 'commit', plan, badResults], /results\.jsonl: line 1 is not a GroupResult/],
  ])('%j', async (args, message) => {
    const r = await runMain(args);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
