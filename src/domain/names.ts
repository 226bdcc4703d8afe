import { editDistance } from './typos.js';

/**
 * Entity names are stored lower-cased and unique per dataset; lookups lower-case the name
 * they are given and otherwise match it exactly (a lookup, not a search).
 */
export function entityKey(name: string): string {
  return name.toLowerCase();
}

/**
 * Predicates are compared the same way as names (a fact's history and `replaceExisting`
 * pair facts by subject and predicate, case-insensitively).
 */
export function predicateKey(predicate: string): string {
  return predicate.toLowerCase();
}

export const ENTITY_TYPES = [
  'PERSON',
  'ORG',
  'PLACE',
  'PRODUCT',
  'SKILL',
  'TOPIC',
  'EVENT',
  'FOOD',
  'ROLE',
  'CONCEPT',
  'THING',
  'DATE',
] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** How far (edits) a name may be from another to be suggested for it: 1, or 2 from 5 characters. */
const nearDistance = (length: number) => (length < 5 ? 1 : 2);

/**
 * Names longer than this are suggested only when they differ from the one asked for in
 * case alone: the edit distance of two names costs the product of their lengths.
 */
const MAX_COMPARED_LENGTH = 64;

/**
 * The names among `names` that `name`, which names none of them, may have been meant as:
 * the same but for case, or a typo away (nearDistance), the nearest first, then in name
 * order; at most `max`. Dataset names are exact, so "Alice" is not "alice" (docs/MCP.md).
 */
export function nearestNames(name: string, names: readonly string[], max = 3): string[] {
  const key = name.toLowerCase();
  const length = [...key].length;
  const within = nearDistance(length);
  const near: { name: string; distance: number }[] = [];
  for (const candidate of new Set(names)) {
    if (candidate === name) continue;
    const other = candidate.toLowerCase();
    const otherLength = [...other].length;
    if (other === key) near.push({ name: candidate, distance: 0 });
    else if (
      Math.abs(otherLength - length) <= within &&
      Math.max(length, otherLength) <= MAX_COMPARED_LENGTH
    ) {
      const distance = editDistance(key, other);
      if (distance <= within) near.push({ name: candidate, distance });
    }
  }
  return near
    .sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, max)
    .map((n) => n.name);
}
