import { badInput, GatewayError } from '../errors.js';
import { FactNotFoundError } from '../store/facts.js';
import { MemoryConflictError, MemoryNotFoundError } from '../store/memoryWrites.js';
import { EpisodeConflictError, UnknownFactsError } from '../store/recordEpisode.js';

/** Runs a store write and turns the store's expected refusals into GatewayErrors. */
export async function storeWrite<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof UnknownFactsError) {
      throw badInput(
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
      throw new GatewayError('CONFLICT', error.message);
    }
    if (error instanceof MemoryNotFoundError || error instanceof FactNotFoundError) {
      throw new GatewayError('NOT_FOUND', error.message);
    }
    throw error;
  }
}
