import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterMongo,
  RLWrapperTimeouts,
} from 'rate-limiter-flexible';
import type { Database } from './database.js';

/**
 * Rate limits shared by every gateway process of one database (docs/OPERATIONS.md, "Limits"): each
 * limit counts in the `rateLimits` collection (rate-limiter-flexible's MongoDB store: one
 * document per limited key and window, its points incremented by an upsert), so N
 * replicas allow the configured rate together, not N times it.
 *
 * When the database does not answer a count within `timeoutMs` (or fails), the request is
 * counted by this process's own limiter instead, at the same rate: the limit stays on,
 * per process, for as long as the database is slow (N replicas then allow up to N times the
 * rate), rather than refusing every request (failing closed) or none (failing open).
 *
 * On the embedded FerretDB 1.x, an upsert is a read and a write-back, not one atomic step:
 * two replicas counting the same key at the same instant can both write the same count, so
 * under such races a limit can let a few more requests through than configured (never
 * fewer). On MongoDB the count is exact.
 */
export function sharedRateLimiter(
  database: Database,
  options: { name: string; points: number; durationSeconds: number; timeoutMs: number },
): RateLimiterAbstract {
  const local = new RateLimiterMemory({
    points: options.points,
    duration: options.durationSeconds,
    keyPrefix: options.name,
  });
  const shared = new RateLimiterMongo({
    storeClient: database.db,
    tableName: 'rateLimits',
    keyPrefix: options.name,
    points: options.points,
    duration: options.durationSeconds,
    // The store creates them (collections.ts INDEXES: a unique `key`, and `expire` for the
    // removal of ended windows, which `removeEndedRateLimits` does: FerretDB 1.x has no TTL).
    disableIndexesCreation: true,
  });
  return new RLWrapperTimeouts({
    limiter: shared,
    timeoutMs: options.timeoutMs,
    insuranceLimiter: local,
  }) as unknown as RateLimiterAbstract;
}

/** Removes the counters of windows that have ended (each process, now and then). */
export async function removeEndedRateLimits(database: Database, now: Date): Promise<number> {
  const { deletedCount } = await database.collections.rateLimits.deleteMany(
    { expire: { $lt: now } },
    { comment: 'store:removeEndedRateLimits' },
  );
  return deletedCount;
}
