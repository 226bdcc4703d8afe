import type { AnyBulkWriteOperation, Filter } from 'mongodb';
import { isOnlyDuplicateKeys } from './bulkErrors.js';
import { appendChanges, invalidationChange, type NewChange } from './changes.js';
import type { Collections } from './collections.js';
import { UNPAGED_BATCH_SIZE } from './database.js';
import {
  correctedFactDocument,
  type FactDoc,
  type InvalidationClaimDoc,
  parseInvalidationClaimId,
} from './documents.js';
import type { Tenant } from './tenant.js';

/**
 * The follow-up of invalidation claims (docs/TEMPORAL_MODEL.md, "Writes without
 * transactions"): what a claim fixes, written the same way by the caller that won it, a
 * racing caller, a retry and the start-up repair.
 */

/** Matches a fact still in the given restoration generation (absent counts as 0). */
export function inGeneration(restorations: number): Filter<FactDoc> {
  return restorations === 0
    ? ({ restorations: { $in: [null, 0] } } as Filter<FactDoc>)
    : { restorations };
}

/**
 * Applies claims of one tenant, in this order, each step repeatable:
 *   1. the corrected versions the replacements among them record (inserted; one already
 *      there is the same document), each only while its fact is still in the claim's
 *      generation, so a fact restored meanwhile gets none;
 *   2. the stamps on the facts, only within each claim's generation, grouped by what they
 *      set (one `updateMany` per group: FerretDB 1.x holds a connection of its pool for
 *      every single-document update of a command until the command ends, so a command
 *      with more than about 100 of them never returns; see UPSERTS_PER_COMMAND);
 *   3. their changes in the feed (FACT_SUPERSEDED or FACT_DELETED, and FACT_CORRECTED for
 *      each version), in one fixed order, so every run writes the same feed;
 *   4. the claims marked applied.
 * The version goes in before its fact is stamped: a reader at any instant sees the fact,
 * or its version from the stamp's instant on (both carry it), never neither for long.
 */
export async function applyInvalidationClaims(
  db: Collections,
  tenant: Tenant,
  claims: readonly InvalidationClaimDoc[],
): Promise<void> {
  if (claims.length === 0) return;
  const tag = { comment: 'store:applyInvalidationClaims' };
  const scope = { workspaceId: tenant.workspaceId, dataset: tenant.dataset };

  // 1. Corrected versions.
  const correcting = claims.filter((c) => c.correctedUntil && c.supersededBy);
  const versions: FactDoc[] = [];
  if (correcting.length > 0) {
    const parents = await db.facts
      .find(
        {
          _id: { $in: correcting.map((c) => parseInvalidationClaimId(c._id).factDocId) },
          ...scope,
        },
        tag,
      )
      .batchSize(UNPAGED_BATCH_SIZE)
      .toArray();
    const byId = new Map(parents.map((p) => [p._id, p]));
    for (const claim of correcting) {
      const { factDocId, restorations } = parseInvalidationClaimId(claim._id);
      const parent = byId.get(factDocId);
      if (!parent || (parent.restorations ?? 0) !== restorations) continue;
      versions.push(
        correctedFactDocument(tenant, parent, {
          by: claim.supersededBy!,
          until: claim.correctedUntil!,
          at: claim.invalidAt,
        }),
      );
    }
    if (versions.length > 0) {
      try {
        await db.facts.insertMany(versions, { ordered: false, ...tag });
      } catch (error) {
        // Recorded already by an earlier attempt or a racing writer: the same documents.
        if (!isOnlyDuplicateKeys(error)) throw error;
      }
    }
  }

  // 2. Stamps.
  const groups = new Map<
    string,
    { claim: InvalidationClaimDoc; restorations: number; ids: string[] }
  >();
  for (const claim of claims) {
    const { factDocId, restorations } = parseInvalidationClaimId(claim._id);
    const key = JSON.stringify([
      restorations,
      claim.invalidAt.getTime(),
      claim.reason,
      claim.supersededBy,
    ]);
    const group = groups.get(key);
    if (group) group.ids.push(factDocId);
    else groups.set(key, { claim, restorations, ids: [factDocId] });
  }
  const stamps: AnyBulkWriteOperation<FactDoc>[] = [...groups.values()].map(
    ({ claim, restorations, ids }) => ({
      updateMany: {
        filter: { _id: { $in: ids }, ...scope, ...inGeneration(restorations) },
        update: {
          $set: {
            invalidAt: claim.invalidAt,
            invalidReason: claim.reason,
            supersededBy: claim.supersededBy,
          },
        },
      },
    }),
  );
  await db.facts.bulkWrite(stamps, { ordered: false, ...tag });

  // 3. The feed.
  const changes: NewChange[] = [
    ...claims.map(invalidationChange),
    ...versions.map((v) => correctionChange(v)),
  ];
  await appendChanges(
    db,
    tenant,
    changes.sort((a, b) => (a.changeId < b.changeId ? -1 : 1)),
  );

  // 4. Done.
  await db.claims.updateMany(
    { _id: { $in: claims.map((claim) => claim._id) }, ...scope },
    { $set: { applied: true } },
    tag,
  );
}

/** The change that tells a corrected version was recorded. */
export function correctionChange(
  version: Pick<FactDoc, 'factId' | 'recordedAt' | 'episodeId'>,
): NewChange {
  return {
    changeId: `fact-corrected:${version.factId}@${version.recordedAt.toISOString()}`,
    kind: 'FACT_CORRECTED',
    at: version.recordedAt,
    factId: version.factId,
    episodeId: version.episodeId,
  };
}

/** Completes claims whose follow-up did not finish (a crash mid-way; run at start-up). */
export async function repairInvalidationClaims(db: Collections): Promise<number> {
  const pending = await db.claims
    .find({ applied: false }, { comment: 'store:repairInvalidationClaims' })
    .toArray();
  const byTenant = new Map<string, InvalidationClaimDoc[]>();
  for (const claim of pending) {
    const key = JSON.stringify([claim.workspaceId, claim.dataset]);
    const list = byTenant.get(key);
    if (list) list.push(claim);
    else byTenant.set(key, [claim]);
  }
  for (const list of byTenant.values()) {
    const { workspaceId, dataset } = list[0]!;
    await applyInvalidationClaims(db, { workspaceId, dataset }, list);
  }
  return pending.length;
}
