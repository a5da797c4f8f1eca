/**
 * Progress for long commands, on stderr and only when stderr is a terminal: pipes, files and
 * `--json` runs get nothing. cli-progress is loaded on the first bar, not at start-up.
 */
import { createRequire } from 'node:module';
import type { SingleBar } from 'cli-progress';

/** Reports `done` of `total` (undefined while the total is unknown) for the step named `label`. */
export type Progress = (label: string, done: number, total: number | undefined) => void;

const NO_PROGRESS: Progress = () => undefined;

export function progressBar(enabled: boolean, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!enabled || !stream.isTTY) return NO_PROGRESS;
  const cliProgress = createRequire(import.meta.url)('cli-progress') as typeof import('cli-progress');
  let bar: SingleBar | undefined;
  let current = '';
  process.once('beforeExit', () => bar?.stop());
  return (label, done, total) => {
    if (label !== current) {
      bar?.stop();
      current = label;
      const format = total === undefined ? `  ${label} {value}` : `  ${label} {bar} {value}/{total} | {eta_formatted} left`;
      bar = new cliProgress.SingleBar({ format, stream, clearOnComplete: true }, cliProgress.Presets.shades_classic);
      bar.start(total ?? 0, done);
    }
    if (total !== undefined) bar?.setTotal(total);
    bar?.update(done);
    if (total !== undefined && done >= total) {
      bar?.stop();
      bar = undefined;
      current = '';
    }
  };
}
