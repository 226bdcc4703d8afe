import type { Collection, OptionalUnlessRequiredId } from 'mongodb';
import { isDuplicateKey } from './database.js';

/**
 * The store's two ways of writing a document at most once, the only atomic "someone else
 * got there first" that both MongoDB and the embedded FerretDB give: inserting a document
 * whose `_id` is taken fails (docs/TEMPORAL_MODEL.md, "Writes without transactions").
 */

/** A claim or a once-only document: its `_id` is the natural key of what it records. */
interface TenantDocument {
  _id: string;
  workspaceId: string;
  dataset: string;
}

/** What a claim came to: this call's insert won, or another's did (`winner`, if still there). */
export type ClaimOutcome<D> = { won: true } | { won: false; winner: D | null };

/**
 * Claim-or-find-the-winner: inserts `claim`; if its `_id` is taken, reads the document
 * that took it, so the caller can complete the winner's work (a claim whose follow-ups a
 * crash cut short) and answer as the loser. Read by `_id` and tenant: on a sharded cluster
 * the shard key routes the read. `winner` is null only if the winner was erased since.
 */
export async function claimOnce<D extends TenantDocument>(
  collection: Collection<D>,
  claim: NoInfer<D>,
  comment: string,
): Promise<ClaimOutcome<D>> {
  try {
    await collection.insertOne(claim as OptionalUnlessRequiredId<D>, { comment });
    return { won: true };
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    const winner = await collection.findOne(
      { _id: claim._id, workspaceId: claim.workspaceId, dataset: claim.dataset } as never,
      { comment },
    );
    return { won: false, winner: winner as D | null };
  }
}

/**
 * Inserts a document that only has to exist (a dataset's registration, a change owed to
 * the feed, a memory a version creates): if its `_id` is taken, it already does.
 * Resolves true when this call inserted it.
 */
export async function insertOnce<D extends { _id: string }>(
  collection: Collection<D>,
  document: NoInfer<D>,
  comment: string,
): Promise<boolean> {
  try {
    await collection.insertOne(document as OptionalUnlessRequiredId<D>, { comment });
    return true;
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    return false;
  }
}
