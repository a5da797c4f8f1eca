/** A value fetched once and shared, unless the fetch fails: then the next `get` asks again. */
export class OnceUntilFailed<T> {
  private pending: Promise<T> | undefined;

  constructor(private readonly fetch: () => Promise<T>) {}

  get(): Promise<T> {
    const pending = (this.pending ??= this.fetch());
    pending.catch(() => {
      if (this.pending === pending) this.pending = undefined;
    });
    return pending;
  }

  /** Forgets the value; `only` when it is still the one given. */
  clear(only?: Promise<T>): void {
    if (only === undefined || this.pending === only) this.pending = undefined;
  }

  /** The value being fetched or fetched, if any. */
  peek(): Promise<T> | undefined {
    return this.pending;
  }
}
