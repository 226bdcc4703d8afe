import { badInput, GatewayError } from '../errors.js';
import type { Collections } from '../store/database.js';
import { FactNotFoundError } from '../store/facts.js';
import { MemoryConflictError, MemoryNotFoundError } from '../store/memoryWrites.js';
import { EpisodeConflictError, UnknownFactsError } from '../store/recordEpisode.js';
import { watchWrites } from '../store/writeOutcome.js';

/**
 * Runs a mutation's store write on the collections, watched (store/writeOutcome.ts), and
 * turns the store's expected refusals into GatewayErrors. A lost database after a write
 * command went out is a WriteOutcomeUnknownError (WRITE_OUTCOME_UNKNOWN, by maskError),
 * never a plain DATABASE_UNAVAILABLE: the write may have been done.
 */
export async function storeWrite<T>(
  store: Collections,
  write: (store: Collections) => Promise<T>,
): Promise<T> {
  const watched = watchWrites(store);
  try {
    return await write(watched.collections);
  } catch (error) {
    throw refusal(watched.failure(error));
  }
}

function refusal(error: unknown): unknown {
  if (error instanceof UnknownFactsError) {
    return badInput(
      error.unknown
        .map(
          (u) =>
            `input.facts.${u.fact}.supersedes.${u.position}: no fact ${u.factId} in this dataset`,
        )
        .join('; '),
      {
        issues: error.unknown.map((u) => ({
          path: ['input', 'facts', u.fact, 'supersedes', u.position],
          message: `no fact ${u.factId} in this dataset`,
        })),
      },
    );
  }
  if (error instanceof EpisodeConflictError || error instanceof MemoryConflictError) {
    return new GatewayError('CONFLICT', error.message);
  }
  if (error instanceof MemoryNotFoundError || error instanceof FactNotFoundError) {
    return new GatewayError('NOT_FOUND', error.message);
  }
  return error;
}
