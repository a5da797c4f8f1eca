export interface DemoOptions {
  readonly json: boolean;
  readonly out: (s: string) => void;
}

export async function runDemo(_folder: string, _options: DemoOptions): Promise<void> {
  throw new Error('demo: not built yet');
}
