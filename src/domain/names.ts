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
