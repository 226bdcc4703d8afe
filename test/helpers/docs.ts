import { readdirSync, readFileSync } from 'node:fs';

const ROOT = new URL('../../', import.meta.url);

/** A page of the documentation: `README.md`, or a file of `docs/` by its name. */
export function readDoc(name: string): string {
  const path = name === 'README.md' ? name : `docs/${name}`;
  return readFileSync(new URL(path, ROOT), 'utf8');
}

/** The README and every page of `docs/`, each with its name. */
export function everyDoc(): { name: string; text: string }[] {
  const pages = readdirSync(new URL('docs/', ROOT)).filter((f) => f.endsWith('.md'));
  return ['README.md', ...pages].map((name) => ({ name, text: readDoc(name) }));
}

/**
 * The text of a page from the heading `heading` (a whole line) to the next heading of the
 * same or a higher level; throws if the page has no such heading, so a moved section fails
 * the test that runs its examples instead of leaving it with nothing to check.
 */
export function docSection(name: string, heading: string): string {
  const text = readDoc(name);
  const start = text.split('\n').indexOf(heading);
  if (start < 0) throw new Error(`${name} has no heading "${heading}"`);
  const level = heading.split(' ')[0]!.length;
  const lines = text.split('\n').slice(start);
  let fenced = false;
  const end = lines.findIndex((line, i) => {
    if (line.startsWith('```')) fenced = !fenced;
    const m = /^(#+) /.exec(line);
    return i > 0 && !fenced && m !== null && m[1]!.length <= level;
  });
  return lines.slice(0, end < 0 ? undefined : end).join('\n');
}
