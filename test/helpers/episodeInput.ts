import { randomUUID } from 'node:crypto';
import type { EpisodeInput, FactInput } from '../../src/store/recordEpisode.js';
import type { Tenant } from '../../src/store/tenant.js';
import { workspaceIdFor } from '../../src/store/workspaces.js';

/**
 * Inputs of the store's `recordEpisode` for tests that call it directly: a fact with
 * plain defaults (not an entity, confidence 0.8, valid from `validAt`), and an episode
 * with a fresh id holding the given facts.
 */
export function factInput(
  subject: string,
  predicate: string,
  object: string,
  more: Partial<FactInput> = {},
): FactInput {
  return {
    subject,
    predicate,
    object,
    objectIsEntity: false,
    confidence: 0.8,
    sourceQuote: null,
    validAt: new Date('2026-11-01T00:00:00.000Z'),
    validUntil: null,
    supersedes: [],
    replaceExisting: false,
    ...more,
  };
}

export function episodeInput(facts: FactInput[], more: Partial<EpisodeInput> = {}): EpisodeInput {
  return {
    episodeId: randomUUID(),
    occurredAt: new Date('2026-11-01T00:00:00.000Z'),
    source: 'chat',
    content: 'user: ...',
    entities: [],
    facts,
    ...more,
  };
}

/** The tenant of a store call: the workspace of that name (created or not) and a dataset. */
export function testTenant(workspace: string, dataset: string): Tenant {
  return { workspaceId: workspaceIdFor(workspace), dataset };
}
