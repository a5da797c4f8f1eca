import { afterEach, beforeAll, expect } from 'vitest';

/** Call inside a describe: each of its tests fails when a promise rejection went unhandled during it. */
export function failOnUnhandledRejections(): void {
  const seen: unknown[] = [];
  const note = (reason: unknown): void => {
    seen.push(reason);
  };
  beforeAll(() => {
    process.on('unhandledRejection', note);
    return () => {
      process.off('unhandledRejection', note);
    };
  });
  afterEach(() => {
    expect(seen.splice(0)).toEqual([]);
  });
}
