/** Environment variables a test changes, put back as they were by `restore`. */
export function savedEnv(names: readonly string[]): { restore(): void } {
  const saved = new Map(names.map((k) => [k, process.env[k]]));
  return {
    restore() {
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    },
  };
}
