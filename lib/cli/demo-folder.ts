/**
 * The demo's folder: built only where nothing of the user's can be lost. A folder that is
 * absent or empty, or one an earlier demo built (it holds the marker), and nothing else.
 */
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AlreadyExistsError } from '../errors.js';

export const DEMO_MARKER = 'packice-demo.json';
/** What a demo writes into its folder; anything else there is somebody else's. */
const DEMO_ENTRIES = new Set([DEMO_MARKER, 'metadata', 'data']);

/**
 * Makes `location` ready for a fresh demo table and marks it as the demo's. Refuses, touching
 * nothing, a file, or a folder holding anything but an earlier demo's files.
 */
export async function prepareDemoFolder(location: string): Promise<void> {
  const info = await stat(location).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (info && !info.isDirectory()) throw refusal(location, `${location} is a file`);
  const entries = info ? await readdir(location) : [];
  if (entries.length > 0) {
    if (!entries.includes(DEMO_MARKER) || !(await isDemoMarker(join(location, DEMO_MARKER)))) {
      throw refusal(location, `${location} is not empty and holds no ${DEMO_MARKER} (it has ${listed(entries)})`);
    }
    const foreign = entries.filter((e) => !DEMO_ENTRIES.has(e));
    if (foreign.length > 0) {
      throw refusal(location, `${location} holds an earlier demo and also ${listed(foreign)}, which the demo did not write`);
    }
    // Only what an earlier demo wrote goes: its table folders, then its marker.
    for (const e of ['metadata', 'data']) await rm(join(location, e), { recursive: true, force: true });
  }
  await mkdir(location, { recursive: true });
  await writeFile(join(location, DEMO_MARKER), `${JSON.stringify({ packice: 'demo', createdAt: new Date().toISOString() })}\n`);
}

async function isDemoMarker(path: string): Promise<boolean> {
  try {
    const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && (parsed as { packice?: unknown }).packice === 'demo';
  } catch {
    return false;
  }
}

function listed(entries: readonly string[]): string {
  const shown = entries.slice(0, 5).join(', ');
  return entries.length > 5 ? `${shown} and ${entries.length - 5} more` : shown;
}

function refusal(location: string, why: string): AlreadyExistsError {
  return new AlreadyExistsError(
    `demo: refusing to build in ${location}: ${why}. The demo builds only into an absent or empty folder, ` +
      'or one an earlier demo built; name another folder (packice demo <folder>)',
    { path: location },
  );
}
