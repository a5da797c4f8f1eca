/**
 * readChunks (lib/parquet/chunk-copy.ts): a row group's column chunks read in ranges of at most
 * 8 MiB, several at once, a larger chunk's ranges joined; the bytes are the file's.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidFileError } from '../../lib/errors.js';
import type { InputFile } from '../../lib/io/file-io.js';
import { LocalFileIO } from '../../lib/io/local.js';
import { readChunks, type ChunkSpan } from '../../lib/parquet/chunk-copy.js';

const MiB = 2 ** 20;

function file(bytes: Uint8Array): { input: InputFile; reads: [number, number][]; peak: () => number } {
  const path = join(mkdtempSync(join(tmpdir(), 'read-chunks-')), 'f.parquet');
  writeFileSync(path, bytes);
  const inner = new LocalFileIO().newInputFile(path, bytes.length);
  const reads: [number, number][] = [];
  let inFlight = 0;
  let peak = 0;
  const input: InputFile = {
    path,
    length: () => inner.length(),
    async read(start, end) {
      reads.push([start, end]);
      peak = Math.max(peak, ++inFlight);
      try {
        return await inner.read(start, end);
      } finally {
        inFlight--;
      }
    },
  };
  return { input, reads, peak: () => peak };
}

const span = (start: number, end: number): ChunkSpan => ({ chunk: [], meta: [], start, end });

describe('readChunks', () => {
  const bytes = new Uint8Array(100 * MiB + 17);
  for (let i = 0; i < bytes.length; i += 4093) bytes[i] = (i * 31) & 0xff;
  bytes.set([0x50, 0x41, 0x52, 0x31], 0);

  it('reads small chunks of one row group together, a large one in parallel 8 MiB ranges, the bytes exact', async () => {
    const f = file(bytes);
    // Out of file order, as a footer may list them: a 70 MiB chunk between small ones, one past it.
    const spans = [span(4 + 3 * MiB, 73 * MiB + 4), span(4, 4 + MiB), span(4 + MiB, 4 + 3 * MiB), span(73 * MiB + 4, 100 * MiB + 17)];
    const out = await readChunks(f.input, spans);
    spans.forEach((s, k) => expect(Buffer.from(out[k]).equals(Buffer.from(bytes.subarray(s.start, s.end)))).toBe(true));
    expect(f.reads.every(([a, b]) => b - a <= 8 * MiB)).toBe(true);
    // The first piece starts at byte 0: the magic comes with it.
    expect(f.reads[0][0]).toBe(0);
    expect(f.peak()).toBeGreaterThan(1);
    expect(f.peak()).toBeLessThanOrEqual(8);
    // Every byte from 0 to the end read once.
    const covered = f.reads.reduce((n, [a, b]) => n + (b - a), 0);
    expect(covered).toBe(bytes.length);
  });

  it('an empty chunk reads nothing and takes no other chunk\'s bytes', async () => {
    const f = file(bytes);
    const spans = [span(4, 4 + 10 * MiB), span(10 * MiB + 4, 10 * MiB + 4), span(30 * MiB, 31 * MiB)];
    const out = await readChunks(f.input, spans);
    expect(out.map((b) => b.length)).toEqual([10 * MiB, 0, MiB]);
    expect(Buffer.from(out[2]).equals(Buffer.from(bytes.subarray(30 * MiB, 31 * MiB)))).toBe(true);
  });

  it('one request for a few-MB row group', async () => {
    const f = file(bytes);
    const out = await readChunks(f.input, [span(10 * MiB, 11 * MiB), span(11 * MiB, 13 * MiB)]);
    expect(f.reads).toEqual([[10 * MiB, 13 * MiB]]);
    expect(out[1].length).toBe(2 * MiB);
  });

  it('a short read or no magic fails naming the file', async () => {
    const f = file(bytes.subarray(0, 20 * MiB));
    await expect(readChunks(f.input, [span(4, 30 * MiB)])).rejects.toThrow(InvalidFileError);
    const g = file(new Uint8Array(9 * MiB));
    await expect(readChunks(g.input, [span(4, 9 * MiB)])).rejects.toThrow(/PAR1/);
  });
});
