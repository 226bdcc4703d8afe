import type { AnyBulkWriteOperation } from 'mongodb';
import { entityKey, predicateKey } from '../domain/names.js';
import { duplicateKeyIndexes } from './bulk.js';
import type { Collections } from './database.js';
import { UNPAGED_BATCH_SIZE } from './database.js';
import {
  type FactDoc,
  type InvalidationClaimDoc,
  type InvalidReason,
  invalidationClaim,
  parseInvalidationClaimId,
} from './documents.js';
import { allOf, bitemporalFilter } from './factFilters.js';
import { factsByIds, inGeneration } from './facts.js';
import type { Tenant } from './tenant.js';

/**
 * Supersessions in batches: step 5 of recording an episode (store/recordEpisode.ts) in a
 * fixed number of database commands, however many facts the episode has and however many
 * facts they supersede.
 *
 * The result is the one a fact-by-fact loop gives (for each new fact in input order: list
 * the live facts of its subject and predicate, then invalidate its targets one by one
 * with `invalidateFact`): the first new fact to claim an old one supersedes it, and a
 * target already invalidated is left as it is. Each invalidation still goes through the
 * per-fact claim of store/facts.ts (docs/TEMPORAL_MODEL.md, "Writes without transactions"); here
 * the claims of all targets are inserted by one command and their follow-ups written by
 * two more (after one read of the claims others took first, if any).
 */

/** A new fact of the episode, as far as supersession is concerned. */
export interface SupersedingFact {
  factId: string;
  subject: string;
  predicate: string;
  /** Normalized fact ids listed in `supersedes`. */
  supersedes: readonly string[];
  replaceExisting: boolean;
}

/**
 * How many facts of one subject and predicate one `replaceExisting` fact supersedes at
 * most: the newest ones (validAt, then factId, descending), the page the fact-by-fact
 * version read per fact.
 */
const REPLACE_LIMIT = 1000;

/** What supersession reads of an old fact. */
type TargetDoc = Pick<
  FactDoc,
  | '_id'
  | 'factId'
  | 'subjectKey'
  | 'predicateKey'
  | 'validAt'
  | 'recordedAt'
  | 'invalidAt'
  | 'restorations'
>;

const TARGET_FIELDS = {
  _id: 1,
  factId: 1,
  subjectKey: 1,
  predicateKey: 1,
  validAt: 1,
  recordedAt: 1,
  invalidAt: 1,
  restorations: 1,
} as const;

const pairKey = (subjectKey: string, predicateKey: string) =>
  JSON.stringify([subjectKey, predicateKey]);

/** validAt descending, then factId descending: the order of every fact list. */
function byFactOrder(a: TargetDoc, b: TargetDoc): number {
  const valid = b.validAt.getTime() - a.validAt.getTime();
  if (valid !== 0) return valid;
  return a.factId < b.factId ? 1 : a.factId > b.factId ? -1 : 0;
}

/**
 * Supersedes what the episode's facts replace, at transaction time `recordedAt`: the facts
 * each one lists in `supersedes`, and with `replaceExisting` the facts with the same
 * subject and predicate live at `recordedAt` on both axes and recorded before it (one
 * recorded at the same instant is a concurrent write, not an older one). A fact of the
 * episode itself is never a target. Idempotent: a re-run finds the targets superseded, or
 * claimed by the interrupted run, whose claims it completes; it writes nothing else.
 *
 * Commands: at most two reads (the replaced subject/predicate pairs in one query, the
 * listed facts in another), then what `invalidateFacts` sends.
 */
export async function supersedeFacts(
  c: Collections,
  tenant: Tenant,
  facts: readonly SupersedingFact[],
  recordedAt: Date,
): Promise<void> {
  const own = new Set(facts.map((f) => f.factId));
  const replacing = facts.filter((f) => f.replaceExisting);
  const listed = [...new Set(facts.flatMap((f) => f.supersedes))].filter((id) => !own.has(id));
  const [live, found] = await Promise.all([
    replacing.length > 0 ? liveFactsOfPairs(c, tenant, replacing, recordedAt) : [],
    listed.length > 0 ? factsByIds(c, tenant, listed) : new Map<string, FactDoc>(),
  ]);

  const byPair = new Map<string, TargetDoc[]>();
  const docs = new Map<string, TargetDoc>(found);
  for (const doc of live.sort(byFactOrder)) {
    const key = pairKey(doc.subjectKey, doc.predicateKey);
    const pair = byPair.get(key);
    if (pair) pair.push(doc);
    else byPair.set(key, [doc]);
    docs.set(doc.factId, doc);
  }

  // The fact-by-fact loop, in memory: a target goes to the first fact that names it. One
  // already invalidated (after `recordedAt`: still live at it) is left as it is, and stays
  // in its pair's list for the next facts, as it stays in a fresh read.
  const claimedBy = new Map<string, string>();
  for (const f of facts) {
    const targets = new Set(f.supersedes);
    if (f.replaceExisting) {
      const pair = byPair.get(pairKey(entityKey(f.subject), predicateKey(f.predicate))) ?? [];
      const page = pair.filter((d) => !claimedBy.has(d.factId)).slice(0, REPLACE_LIMIT);
      for (const d of page) {
        if (d.recordedAt.getTime() < recordedAt.getTime()) targets.add(d.factId);
      }
    }
    for (const target of targets) {
      if (own.has(target) || claimedBy.has(target)) continue;
      const doc = docs.get(target);
      if (!doc || doc.invalidAt !== null) continue;
      claimedBy.set(target, f.factId);
    }
  }

  await invalidateFacts(
    c,
    tenant,
    [...claimedBy].map(([target, by]) => ({
      fact: docs.get(target)!,
      change: { reason: 'superseded', at: recordedAt, supersededBy: by },
    })),
  );
}

/**
 * The facts of the given subjects and predicates live at `at` on both axes, in one query
 * on the stored keys. The query asks for every subject with every predicate (a fixed
 * shape that the subject/predicate index serves, however many pairs there are); the
 * combinations that are not pairs of `facts` are dropped here.
 */
async function liveFactsOfPairs(
  c: Collections,
  tenant: Tenant,
  facts: readonly SupersedingFact[],
  at: Date,
): Promise<TargetDoc[]> {
  const pairs = new Set(facts.map((f) => pairKey(entityKey(f.subject), predicateKey(f.predicate))));
  const subjects = [...new Set(facts.map((f) => entityKey(f.subject)))];
  const predicates = [...new Set(facts.map((f) => predicateKey(f.predicate)))];
  const docs = await c.facts
    .find<TargetDoc>(
      allOf<FactDoc>([
        {
          workspaceId: tenant.workspaceId,
          dataset: tenant.dataset,
          subjectKey: { $in: subjects },
          predicateKey: { $in: predicates },
        },
        ...bitemporalFilter(at, at),
      ]),
      { comment: 'store:supersedeFacts', projection: TARGET_FIELDS },
    )
    .batchSize(UNPAGED_BATCH_SIZE)
    .toArray();
  return docs.filter((d) => pairs.has(pairKey(d.subjectKey, d.predicateKey)));
}

/** One invalidation to make: the fact as read, and what to stamp on it. */
export interface Invalidation {
  fact: Pick<FactDoc, '_id' | 'factId' | 'invalidAt' | 'restorations'>;
  change: { reason: InvalidReason; at: Date; supersededBy: string | null };
}

/**
 * `invalidateFact` (store/facts.ts) for many facts at once, with the same claim documents
 * and the same outcome per fact: a fact already invalidated when read is skipped; for the
 * others the claims are inserted by one unordered command, and a duplicate key means the
 * fact was claimed already (by a racing caller, or by an earlier attempt of this one):
 * that claim's values, not ours, are written if it is not applied yet. Then the facts are
 * stamped by one command and the claims marked applied by one more: at most four commands
 * whatever the number of facts. Returns the ids of the facts whose claim this call won.
 */
export async function invalidateFacts(
  c: Collections,
  tenant: Tenant,
  invalidations: readonly Invalidation[],
): Promise<string[]> {
  const claims: InvalidationClaimDoc[] = invalidations
    .filter((i) => i.fact.invalidAt === null)
    .map(({ fact, change }) => invalidationClaim(tenant, fact, change, false));
  if (claims.length === 0) return [];

  let lost = new Set<number>();
  try {
    await c.claims.insertMany(claims, { ordered: false, comment: 'store:invalidateFacts' });
  } catch (error) {
    // The claims that failed only because their `_id` was taken; any other error (one with
    // no write errors at all, from a lost connection, says nothing about which claims were
    // written) is thrown.
    lost = new Set(duplicateKeyIndexes(error));
  }
  const won = claims.filter((_, i) => !lost.has(i));
  const toApply = [...won];
  if (lost.size > 0) {
    // The tenant as well as the _id: on a sharded cluster the shard key routes the read.
    const winners = await c.claims
      .find(
        {
          _id: { $in: claims.filter((_, i) => lost.has(i)).map((claim) => claim._id) },
          workspaceId: tenant.workspaceId,
          dataset: tenant.dataset,
        },
        { comment: 'store:invalidateFacts' },
      )
      .batchSize(UNPAGED_BATCH_SIZE)
      .toArray();
    toApply.push(...winners.filter((claim) => !claim.applied));
  }
  await applyInvalidationClaims(c, tenant, toApply);
  return won.map((claim) => claim.factId);
}

/**
 * Stamps each claim's fact with the claim's values (only within the claim's generation, so
 * a repeat changes nothing), then marks the claims applied: two commands. The stamps are
 * grouped by what they set, one `updateMany` on the facts' `_id`s per group (a new fact's
 * targets are one group). Multi-document updates also because FerretDB 1.x holds a
 * connection of its pool for every single-document update of a command that finds its
 * document until the command ends, so a command with more than about 100 of them never
 * returns (see UPSERTS_PER_COMMAND); a multi-document update releases it.
 */
async function applyInvalidationClaims(
  c: Collections,
  tenant: Tenant,
  claims: readonly InvalidationClaimDoc[],
): Promise<void> {
  if (claims.length === 0) return;
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
        filter: {
          _id: { $in: ids },
          workspaceId: tenant.workspaceId,
          dataset: tenant.dataset,
          ...inGeneration(restorations),
        },
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
  const tag = { comment: 'store:applyInvalidationClaims' };
  await c.facts.bulkWrite(stamps, { ordered: false, ...tag });
  await c.claims.updateMany(
    {
      _id: { $in: claims.map((claim) => claim._id) },
      workspaceId: tenant.workspaceId,
      dataset: tenant.dataset,
    },
    { $set: { applied: true } },
    tag,
  );
}
