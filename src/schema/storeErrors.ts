import { GatewayError } from '../errors.js';
import type { Collections } from '../store/collections.js';
import { StoreRefusal } from '../store/refusals.js';
import { watchWrites } from '../store/writeOutcome.js';

/**
 * Runs a mutation's store write on the collections, watched (store/writeOutcome.ts), and
 * maps what it throws: a store refusal (store/refusals.ts) becomes a GatewayError with the
 * refusal's own code, message and details; a lost database after a write command went
 * out becomes a WriteOutcomeUnknownError (WRITE_OUTCOME_UNKNOWN, by maskError), never a
 * plain DATABASE_UNAVAILABLE: the write may have been done.
 */
export async function runStoreWrite<T>(
  store: Collections,
  write: (store: Collections) => Promise<T>,
): Promise<T> {
  const watched = watchWrites(store);
  try {
    return await write(watched.collections);
  } catch (error) {
    const failure = watched.failure(error);
    if (failure instanceof StoreRefusal) {
      throw new GatewayError(failure.code, failure.message, failure.details);
    }
    throw failure;
  }
}
