import type { AnyBulkWriteOperation } from 'mongodb';
import { entityKey, predicateKey } from '../domain/names.js';
import { boundedValidUntil, replacedFacts, type TimelineFact } from '../domain/replacement.js';
import { duplicateKeyIndexes } from './bulkErrors.js';
import { appendChanges, invalidationChange } from './changes.js';
import type { Collections } from './database.js';
import { UNPAGED_BATCH_SIZE } from './database.js';
import {
  type FactDoc,
  type InvalidationClaimDoc,
  type InvalidReason,
  invalidationClaim,
  parseInvalidationClaimId,
} from './documents.js';
import { factsByIds, inGeneration } from './facts.js';
import type { Tenant } from './tenant.js';

/**
 * Supersessions in batches: steps 4 and 5 of recording an episode (store/recordEpisode.ts)
 * in a fixed number of database commands, however many facts the episode has and however
 * many facts they supersede.
 *
 * Two kinds of targets:
 * - the facts a new fact lists in `supersedes`: each goes to the first fact of the
 *   episode that names it;
 * - with `replaceExisting`, the believed facts of the same subject and predicate that the
 *   rule of domain/replacement.ts says it replaces: valid time decides, and every writer
 *   applies the rule to what it reads after its own facts are stored, so concurrent
 *   episodes (and an interrupted one completed later) converge on one value.
 * Each invalidation goes through the per-fact claim of store/facts.ts
 * (docs/TEMPORAL_MODEL.md, "Writes without transactions"); here the claims of all targets
 * are inserted by one command and their follow-ups written by two more (after one read of
 * the claims others took first, if any).
 */

/** A new fact of the episode, as far as supersession is concerned. */
export interface SupersedingFact {
  factId: string;
  subject: string;
  predicate: string;
  validAt: Date;
  validUntil: Date | null;
  /** When it was stored (by this attempt, or the earlier one that stored it). */
  recordedAt: Date;
  /** Normalized fact ids listed in `supersedes`. */
  supersedes: readonly string[];
  replaceExisting: boolean;
}

/** What supersession reads of an old fact. */
type TargetDoc = Pick<
  FactDoc,
  | '_id'
  | 'factId'
  | 'episodeId'
  | 'subjectKey'
  | 'predicateKey'
  | 'validAt'
  | 'validUntil'
  | 'recordedAt'
  | 'invalidAt'
  | 'restorations'
  | 'replaceExisting'
>;

const TARGET_FIELDS = {
  _id: 1,
  factId: 1,
  episodeId: 1,
  subjectKey: 1,
  predicateKey: 1,
  validAt: 1,
  validUntil: 1,
  recordedAt: 1,
  invalidAt: 1,
  restorations: 1,
  replaceExisting: 1,
} as const;

const pairKey = (subjectKey: string, predicateKey: string) =>
  JSON.stringify([subjectKey, predicateKey]);
const pairOf = (f: Pick<SupersedingFact, 'subject' | 'predicate'>) =>
  pairKey(entityKey(f.subject), predicateKey(f.predicate));

/** A stored fact as the rule reads it (a fact stored before the flag existed did not replace). */
const onTimeline = (d: TargetDoc): TimelineFact => ({
  factId: d.factId,
  episodeId: d.episodeId,
  validAt: d.validAt,
  validUntil: d.validUntil,
  recordedAt: d.recordedAt,
  replaceExisting: d.replaceExisting === true,
});

const latest = (...instants: Date[]) => new Date(Math.max(...instants.map((d) => d.getTime())));

/**
 * Step 4, before the facts are stored: the `validUntil` each fact of the episode is stored
 * with. A `replaceExisting` fact ends where the next believed fact of its subject and
 * predicate begins, if one begins after it (domain/replacement.ts `boundedValidUntil`),
 * counting the episode's other facts of that pair; the others keep their own. One read,
 * only when the episode has a `replaceExisting` fact.
 */
export async function replacementBounds(
  db: Collections,
  tenant: Tenant,
  facts: readonly SupersedingFact[],
): Promise<(Date | null)[]> {
  const replacing = facts.filter((f) => f.replaceExisting);
  if (replacing.length === 0) return facts.map((f) => f.validUntil);
  const own = new Set(facts.map((f) => f.factId));
  const believed = (await believedFactsOfPairs(db, tenant, replacing)).filter(
    (d) => !own.has(d.factId),
  );
  const byPair = new Map<string, Pick<TimelineFact, 'validAt'>[]>();
  const add = (key: string, fact: Pick<TimelineFact, 'validAt'>) => {
    const pair = byPair.get(key);
    if (pair) pair.push(fact);
    else byPair.set(key, [fact]);
  };
  for (const d of believed) add(pairKey(d.subjectKey, d.predicateKey), d);
  for (const f of facts) add(pairOf(f), f);
  return facts.map((f) =>
    f.replaceExisting ? boundedValidUntil(f, byPair.get(pairOf(f)) ?? []) : f.validUntil,
  );
}

/**
 * Step 5, after the facts are stored: supersedes what the episode's facts replace, at
 * transaction time `now` (never before the recording of either fact): the facts each
 * lists in `supersedes`, then, for every subject and predicate a `replaceExisting` fact of
 * the episode names, what domain/replacement.ts `replacedFacts` decides over the believed
 * facts read now, the episode's own among them. A fact of the episode itself is never a
 * listed target, and never replaced by another of the episode. Idempotent: a re-run
 * finds the targets superseded, or claimed by the interrupted run, whose claims it
 * completes; it writes nothing else.
 *
 * Commands: at most two reads (the replaced subject/predicate pairs in one query, the
 * listed facts in another), then what `invalidateFacts` sends.
 */
export async function supersedeFacts(
  db: Collections,
  tenant: Tenant,
  facts: readonly SupersedingFact[],
  now: Date,
): Promise<void> {
  const own = new Set(facts.map((f) => f.factId));
  const replacing = facts.filter((f) => f.replaceExisting);
  const listed = [...new Set(facts.flatMap((f) => f.supersedes))].filter((id) => !own.has(id));
  const [believed, found] = await Promise.all([
    replacing.length > 0 ? believedFactsOfPairs(db, tenant, replacing) : [],
    listed.length > 0 ? factsByIds(db, tenant, listed) : new Map<string, FactDoc>(),
  ]);
  const docs = new Map<string, TargetDoc>(found);
  for (const d of believed) docs.set(d.factId, d);

  // The listed targets first: each to the first fact that names it.
  const claimedBy = new Map<string, { by: string; at: Date }>();
  for (const f of facts) {
    for (const target of f.supersedes) {
      const doc = docs.get(target);
      if (own.has(target) || claimedBy.has(target) || !doc || doc.invalidAt !== null) continue;
      claimedBy.set(target, { by: f.factId, at: latest(now, doc.recordedAt, f.recordedAt) });
    }
  }
  // Then the rule, pair by pair, over the believed facts as read, less the listed ones
  // (superseded by this episode whatever the rule says: not a successor for another).
  const listedIds = new Set(listed);
  const byPair = new Map<string, TargetDoc[]>();
  for (const d of believed) {
    if (listedIds.has(d.factId)) continue;
    const key = pairKey(d.subjectKey, d.predicateKey);
    const pair = byPair.get(key);
    if (pair) pair.push(d);
    else byPair.set(key, [d]);
  }
  for (const pair of byPair.values()) {
    for (const [target, by] of replacedFacts(pair.map(onTimeline))) {
      if (claimedBy.has(target)) continue;
      const doc = docs.get(target)!;
      const successor = docs.get(by)!;
      claimedBy.set(target, { by, at: latest(now, doc.recordedAt, successor.recordedAt) });
    }
  }

  await invalidateFacts(
    db,
    tenant,
    [...claimedBy].map(([target, { by, at }]) => ({
      fact: docs.get(target)!,
      change: { reason: 'superseded', at, supersededBy: by },
    })),
  );
}

/**
 * The believed facts (not invalidated) of the given subjects and predicates, whatever
 * their valid time, in one query on the stored keys. The query asks for every subject
 * with every predicate (a fixed shape that the subject/predicate index serves, however
 * many pairs there are); the combinations that are not pairs of `facts` are dropped here.
 */
async function believedFactsOfPairs(
  db: Collections,
  tenant: Tenant,
  facts: readonly SupersedingFact[],
): Promise<TargetDoc[]> {
  const pairs = new Set(facts.map(pairOf));
  const subjects = [...new Set(facts.map((f) => entityKey(f.subject)))];
  const predicates = [...new Set(facts.map((f) => predicateKey(f.predicate)))];
  const docs = await db.facts
    .find<TargetDoc>(
      {
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
        subjectKey: { $in: subjects },
        predicateKey: { $in: predicates },
        invalidAt: null,
      },
      { comment: 'store:supersedeFacts', projection: TARGET_FIELDS },
    )
    .batchSize(UNPAGED_BATCH_SIZE)
    .toArray();
  return docs.filter((d) => pairs.has(pairKey(d.subjectKey, d.predicateKey)));
}

/** One invalidation to make: the fact as read, and what to stamp on it. */
interface Invalidation {
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
async function invalidateFacts(
  db: Collections,
  tenant: Tenant,
  invalidations: readonly Invalidation[],
): Promise<string[]> {
  const claims: InvalidationClaimDoc[] = invalidations
    .filter((i) => i.fact.invalidAt === null)
    .map(({ fact, change }) => invalidationClaim(tenant, fact, change, false));
  if (claims.length === 0) return [];

  let lost = new Set<number>();
  try {
    await db.claims.insertMany(claims, { ordered: false, comment: 'store:invalidateFacts' });
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
    const winners = await db.claims
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
  await applyInvalidationClaims(db, tenant, toApply);
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
  db: Collections,
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
  await db.facts.bulkWrite(stamps, { ordered: false, ...tag });
  // In one fixed order, whichever attempt (or repair) applies them and in whatever order
  // it found them, so every run writes the same feed.
  await appendChanges(
    db,
    tenant,
    claims.map(invalidationChange).sort((a, b) => (a.changeId < b.changeId ? -1 : 1)),
  );
  await db.claims.updateMany(
    {
      _id: { $in: claims.map((claim) => claim._id) },
      workspaceId: tenant.workspaceId,
      dataset: tenant.dataset,
    },
    { $set: { applied: true } },
    tag,
  );
}
