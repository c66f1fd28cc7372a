import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/** The pages a reader walks: the front door, the contributor's guide, docs/ and each project's README. */
function pages(): string[] {
  const found = ['README.md', 'CONTRIBUTING.md'];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(ROOT, dir))) {
      const rel = path.join(dir, entry);
      if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel);
      else if (entry.endsWith('.md')) found.push(rel);
    }
  };
  walk('docs');
  for (const dir of ['apps', 'libs', 'tools']) {
    for (const project of readdirSync(path.join(ROOT, dir))) {
      const readme = path.join(dir, project, 'README.md');
      if (existsSync(path.join(ROOT, readme))) found.push(readme);
    }
  }
  return found;
}

/** Markdown links and images outside code: `[text](target)`. */
function links(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  for (const m of text.matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

describe('links in the documentation', () => {
  const all = pages();

  it('finds the pages', () => {
    expect(all).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', path.join('docs', 'configuration.md'), path.join('docs', 'operations.md')]));
  });

  it.each(all)('every relative link of %s names a file of the repository, and a heading of it', (page) => {
    const broken: string[] = [];
    for (const target of links(readFileSync(path.join(ROOT, page), 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [file, anchor] = target.split('#');
      const resolved = file ? path.resolve(ROOT, path.dirname(page), decodeURI(file)) : path.join(ROOT, page);
      if (!resolved.startsWith(ROOT + path.sep)) broken.push(`${target} (outside the repository)`);
      else if (!existsSync(resolved)) broken.push(`${target} (no such file)`);
      else if (anchor && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) broken.push(`${target} (no such heading)`);
    }
    expect(broken).toEqual([]);
  });

  it('the README, CONTRIBUTING and docs/ name no contract outside the repository (the integrator has only the repository)', () => {
    const outside = all.filter((page) => /\.\.\/shared|\/work\/shared/.test(readFileSync(path.join(ROOT, page), 'utf8')));
    expect(outside).toEqual([]);
  });
});
