import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** A committed file made from the code: written by `npm run docs`, compared by `--check`. */
export interface GeneratedFile {
  /** Relative to the repository's root. */
  file: string;
  render: () => Promise<string> | string;
}

/** Writes the file, or with `check` only compares it; true when it was current. */
export async function generate(root: string, g: GeneratedFile, check: boolean): Promise<boolean> {
  const target = path.join(root, g.file);
  const wanted = await g.render();
  const current = await readFile(target, 'utf8').catch(() => undefined);
  if (!check && current !== wanted) await writeFile(target, wanted);
  return current === wanted;
}
