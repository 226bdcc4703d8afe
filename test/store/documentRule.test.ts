import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * store/documents.ts's rule: an absent value is stored as `null`, never left out, except in
 * fields added after documents of their kind were first stored, which older documents
 * lack. Each such field is optional (`?:`) in its document's interface and its comment
 * says what its absence means; an optional field without one is a field that can be left
 * out for no stated reason, which the rule forbids.
 */

const STORED_SHAPES = ['src/store/documents.ts', 'src/store/changes.ts'];

/** Each optional field of each stored document's interface (`…Doc`) with no word on its absence. */
function unexplainedOptionalFields(source: string): { fields: string[]; unexplained: string[] } {
  const fields: string[] = [];
  const unexplained: string[] = [];
  // A document's interface, and those it extends (their fields are stored with it).
  const extended = new Set(
    [...source.matchAll(/^export interface \w+Doc extends ([\w, ]+) \{/gm)].flatMap((m) =>
      m[1]!.split(',').map((name) => name.trim()),
    ),
  );
  for (const block of source.matchAll(
    /^export interface (\w+)(?: extends [\w, ]+)? \{\n([\s\S]*?)^\}/gm,
  )) {
    if (!block[1]!.endsWith('Doc') && !extended.has(block[1]!)) continue;
    const lines = block[2]!.split('\n');
    lines.forEach((line, i) => {
      const optional = /^\s+(\w+)\?:/.exec(line);
      if (!optional) return;
      const name = `${block[1]}.${optional[1]}`;
      fields.push(name);
      // The field's own comment: the comment lines right above it.
      const comment: string[] = [];
      for (let j = i - 1; j >= 0 && /^\s+(\/\*\*|\*)/.test(lines[j]!); j--) comment.push(lines[j]!);
      if (!/absent/i.test(comment.join(' '))) unexplained.push(name);
    });
  }
  return { fields, unexplained };
}

describe('stored documents leave a value out only where their comment says why', () => {
  it('every optional field of a stored document says what its absence means', () => {
    const all = STORED_SHAPES.map((file) =>
      unexplainedOptionalFields(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')),
    );
    const fields = all.flatMap((r) => r.fields);
    // FactDoc.replaceExisting, ApiKeyDoc.expiresAt, … : a walk that finds none fails.
    expect(fields.length).toBeGreaterThanOrEqual(10);
    expect(all.flatMap((r) => r.unexplained)).toEqual([]);
  });

  it('the walk reports an optional field whose comment does not', () => {
    const broken = [
      'export interface ThingDoc {',
      '  /** Kept since 1.2; absent on older things: none. */',
      '  since?: string;',
      '  /** A label. */',
      '  label?: string;',
      '  plain: string | null;',
      '}',
    ].join('\n');
    expect(unexplainedOptionalFields(broken)).toEqual({
      fields: ['ThingDoc.since', 'ThingDoc.label'],
      unexplained: ['ThingDoc.label'],
    });
  });
});
