import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendChanges } from '../../src/store/changes.js';
import { openDatabase } from '../../src/store/database.js';
import { memoryDocument } from '../../src/store/documents.js';
import { lifecycleRecord } from '../../src/store/factRecords.js';
import { repairFactHistories } from '../../src/store/materialise.js';
import { repairMemoryWrites } from '../../src/store/memoryWrites.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import {
  ChangeArchiveMemoryDocument,
  ChangeCreateMemoryDocument,
  ChangeDeleteFactDocument,
  ChangeEraseDatasetDocument,
  ChangeEraseEpisodeDocument,
  ChangeFeedDocument,
  type ChangeFeedQuery,
  ChangeRecordEpisodeDocument,
  ChangeRestoreFactDocument,
  ChangeSupersedeMemoryDocument,
  type RecordEpisodeInput,
} from '../generated/operations.js';
import { testServerUri } from '../helpers/database.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import { type GraphqlError, openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The change feed (Dataset.changes, docs/LIVE_UPDATES.md): every write appends what it
 * changed, once, at the next number of its dataset's feed; a reader resuming after any
 * cursor misses nothing, however writers race; erased content leaves the feed.
 */

let t: TestGateway;
let writer: string;
let admin: string;
let reader: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
  writer = await t.key('acme', ['read', 'write']);
  admin = await t.key('acme', ['read', 'write', 'admin']);
  reader = await t.key('acme', ['read']);
});

type Result<T> = { status: number; body: { data?: T | null; errors?: GraphqlError[] } };
function data<T>(result: Result<T>): T {
  expect(result.body.errors).toBeUndefined();
  return result.body.data!;
}

type Change = NonNullable<ChangeFeedQuery['dataset']>['changes']['edges'][number]['node'];

/** Every change of the dataset after `after`, read in pages of `first`. */
async function feed(dataset: string, after: string | null = null, first = 3): Promise<Change[]> {
  const all: Change[] = [];
  let cursor = after;
  for (;;) {
    const page = data(
      await t.graphql(ChangeFeedDocument, { dataset, after: cursor, first }, reader),
    ).dataset!.changes;
    all.push(...page.edges.map((e) => e.node));
    for (const e of page.edges) expect(e.cursor).toBe(e.node.cursor);
    if (!page.pageInfo.hasNextPage) return all;
    cursor = page.pageInfo.endCursor!;
  }
}

const episode = (facts: RecordEpisodeInput['facts'], episodeId = randomUUID()) => ({
  episode: {
    episodeId,
    occurredAt: '2026-11-01T00:00:00.000Z',
    source: 'chat',
    content: 'user: my car is a Honda Civic',
  },
  facts,
});
const fact = (subject: string, object: string, more: Record<string, unknown> = {}) => ({
  subject,
  predicate: 'drives',
  object,
  confidence: 0.9,
  validAt: '2026-10-01T00:00:00.000Z',
  ...more,
});

async function record(dataset: string, input: RecordEpisodeInput) {
  return data(await t.graphql(ChangeRecordEpisodeDocument, { dataset, input }, writer))
    .recordEpisode;
}

describe('Dataset.changes: every write, once, in order', () => {
  it('an episode: EPISODE_RECORDED, its facts, then what they superseded; a retry adds nothing', async () => {
    const ds = 'feed-episodes';
    const first = await record(ds, episode([fact('user', 'a Honda Civic')]));
    const old = first.facts[0]!.factId;
    const input = episode([fact('user', 'a Toyota', { supersedes: [old] }), fact('user', 'x')]);
    const second = await record(ds, input);
    await record(ds, input);

    const changes = await feed(ds);
    expect(changes.map((c) => [c.kind, c.fact?.factId ?? c.episode?.episodeId])).toEqual([
      ['EPISODE_RECORDED', first.episode.episodeId],
      ['FACT_RECORDED', old],
      ['EPISODE_RECORDED', second.episode.episodeId],
      ['FACT_RECORDED', second.facts[0]!.factId],
      ['FACT_RECORDED', second.facts[1]!.factId],
      ['FACT_SUPERSEDED', old],
    ]);
    // Each fact as it is now; the ids are distinct and stable.
    expect(changes[1]!.fact!.state).toBe('SUPERSEDED');
    expect(new Set(changes.map((c) => c.id)).size).toBe(changes.length);
    expect((await feed(ds)).map((c) => c.id)).toEqual(changes.map((c) => c.id));
    // Resuming after any cursor gives exactly the rest.
    for (let i = 0; i < changes.length; i++) {
      expect((await feed(ds, changes[i]!.cursor)).map((c) => c.id)).toEqual(
        changes.slice(i + 1).map((c) => c.id),
      );
    }
    const page = data(await t.graphql(ChangeFeedDocument, { dataset: ds, first: 2 }, reader))
      .dataset!.changes;
    expect(page.totalCount).toBe(6);
  });

  it('delete and restore: FACT_DELETED, FACT_RESTORED, and again after a second delete', async () => {
    const ds = 'feed-deletes';
    const { facts } = await record(ds, episode([fact('user', 'a bike')]));
    const id = facts[0]!.factId;
    const start = (await feed(ds)).at(-1)!.cursor;
    data(await t.graphql(ChangeDeleteFactDocument, { dataset: ds, id }, writer));
    data(await t.graphql(ChangeRestoreFactDocument, { dataset: ds, id }, admin));
    data(await t.graphql(ChangeDeleteFactDocument, { dataset: ds, id }, writer));
    const changes = await feed(ds, start);
    expect(changes.map((c) => [c.kind, c.fact?.factId])).toEqual([
      ['FACT_DELETED', id],
      ['FACT_RESTORED', id],
      ['FACT_DELETED', id],
    ]);
    expect(new Set(changes.map((c) => c.id)).size).toBe(3);
  });

  it('memories: MEMORY_CREATED, MEMORY_CHANGED per version, a supersede changes one and creates one', async () => {
    const ds = 'feed-memories';
    const input = {
      text: 'Prefers short answers',
      memoryKind: 'preference',
      scope: 'user',
      sourceType: 'chat',
    };
    const memoryId = randomUUID();
    const created = data(
      await t.graphql(
        ChangeCreateMemoryDocument,
        { dataset: ds, input: { ...input, memoryId } },
        writer,
      ),
    ).createMemory;
    // A retried create adds nothing.
    data(
      await t.graphql(
        ChangeCreateMemoryDocument,
        { dataset: ds, input: { ...input, memoryId } },
        writer,
      ),
    );
    data(await t.graphql(ChangeArchiveMemoryDocument, { dataset: ds, memoryId }, writer));
    const successor = data(
      await t.graphql(
        ChangeSupersedeMemoryDocument,
        { dataset: ds, memoryId, input: { ...input, text: 'Prefers long answers' } },
        writer,
      ),
    ).supersedeMemory.memory.memoryId;
    const changes = await feed(ds);
    expect(changes.map((c) => [c.kind, c.memory?.memoryId])).toEqual([
      ['MEMORY_CREATED', created.memoryId],
      ['MEMORY_CHANGED', memoryId],
      ['MEMORY_CHANGED', memoryId],
      ['MEMORY_CREATED', successor],
    ]);
  });

  it('a bad cursor is BAD_USER_INPUT, a key without read is FORBIDDEN, another workspace sees nothing', async () => {
    const ds = 'feed-episodes';
    const bad = await t.graphql(ChangeFeedDocument, { dataset: ds, after: 'nope' }, reader);
    expect(bad.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const noRead = await t.graphql(
      ChangeFeedDocument,
      { dataset: ds },
      await t.key('acme', ['write']),
    );
    expect(noRead.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const other = await t.graphql(
      ChangeFeedDocument,
      { dataset: ds },
      await t.key('globex', ['read']),
    );
    expect(data(other).dataset).toBeNull();
  });
});

describe('erasure leaves no trace of the erased content in the feed', () => {
  it('eraseEpisode: its changes go, and so does what they made of others (history as if never recorded), EPISODE_ERASED says what went', async () => {
    const ds = 'feed-erase-episode';
    const kept = await record(ds, episode([fact('user', 'a Honda Civic')]));
    const old = kept.facts[0]!.factId;
    const erased = await record(ds, episode([fact('user', 'a Toyota', { supersedes: [old] })]));
    const erasedId = erased.episode.episodeId;
    data(await t.graphql(ChangeEraseEpisodeDocument, { dataset: ds, id: erasedId }, admin));
    // A repeat removes nothing and says nothing more.
    data(await t.graphql(ChangeEraseEpisodeDocument, { dataset: ds, id: erasedId }, admin));

    const changes = await feed(ds);
    // The Honda's supersession by the erased Toyota is redacted too: the history is now as
    // if the Toyota had never been recorded, so the Honda was never superseded.
    expect(changes.map((c) => c.kind)).toEqual([
      'EPISODE_RECORDED',
      'FACT_RECORDED',
      'EPISODE_ERASED',
    ]);
    const json = JSON.stringify(changes);
    expect(json).not.toContain(erased.facts[0]!.factId);
    expect(changes.filter((c) => c.episode?.episodeId === erasedId)).toEqual([]);
    expect(changes.at(-1)).toMatchObject({
      episode: null,
      fact: null,
      erased: { facts: 1, episodes: 1, restoredFacts: 1 },
    });
    expect(json).not.toContain(erasedId);
    // In the database too: the erased fact's changes keep their numbers and nothing else.
    const stored = await t.database.collections.changes.find({ dataset: ds }).toArray();
    expect(JSON.stringify(stored)).not.toContain(erased.facts[0]!.factId);
    expect(JSON.stringify(stored)).not.toContain(erasedId);
    expect(stored.map((c) => c.seq)).toEqual(stored.map((_, i) => i + 1));
  });

  it('eraseDataset: the feed goes with the dataset; a cursor into it resumes with DATASET_ERASED', async () => {
    const ds = 'feed-erase-dataset';
    await record(ds, episode([fact('user', 'a Honda Civic')]));
    const before = (await feed(ds)).at(-1)!.cursor;
    data(await t.graphql(ChangeEraseDatasetDocument, { name: ds }, admin));
    // Nothing of the dataset is left in the feed, its name included; the dataset is gone
    // (a silent feed) until it is written again.
    expect(await t.database.collections.changes.countDocuments({ dataset: ds })).toBe(0);
    expect(data(await t.graphql(ChangeFeedDocument, { dataset: ds }, reader)).dataset).toBeNull();
    const later = await record(ds, episode([fact('user', 'a Vespa')]));
    // A client that had read up to the erasure resumes: the erasure, with its counts, then
    // everything since; the notice's cursor continues in today's feed.
    const resumed = await feed(ds, before);
    expect(resumed.map((c) => [c.kind, c.fact?.factId ?? null])).toEqual([
      ['DATASET_ERASED', null],
      ['EPISODE_RECORDED', null],
      ['FACT_RECORDED', later.facts[0]!.factId],
    ]);
    expect(resumed[0]!.erased).toMatchObject({ facts: 1, episodes: 1 });
    expect((await feed(ds, resumed[0]!.cursor)).map((c) => c.id)).toEqual(
      resumed.slice(1).map((c) => c.id),
    );
    // A client that starts today sees only today's feed.
    expect((await feed(ds)).map((c) => c.kind)).toEqual(['EPISODE_RECORDED', 'FACT_RECORDED']);
  });
});

describe('no gaps, however writers race', () => {
  it('episodes recorded at once over separate connections: every change once, numbers 1..n', async () => {
    const connections = await Promise.all(
      Array.from({ length: 4 }, () => openDatabase(testServerUri(), t.database.db.databaseName)),
    );
    try {
      const tenant = testTenant('acme', 'feed-race');
      const inputs = Array.from({ length: 12 }, (_, i) =>
        episodeInput([
          factInput(`person ${i}`, 'likes', 'tea'),
          factInput(`person ${i}`, 'has', 'a cat'),
        ]),
      );
      await Promise.all(
        inputs.map((input, i) =>
          recordEpisode(connections[i % 4]!.collections, tenant, input, new Date()),
        ),
      );
      const stored = await t.database.collections.changes
        .find({ workspaceId: tenant.workspaceId, dataset: tenant.dataset })
        .sort({ seq: 1 })
        .toArray();
      expect(stored.map((c) => c.seq)).toEqual(stored.map((_, i) => i + 1));
      expect(stored).toHaveLength(12 * 3);
      expect(new Set(stored.map((c) => c.changeId)).size).toBe(36);
      expect((await feed('feed-race', null, 7)).map((c) => c.id)).toEqual(
        stored.map((c) => c.changeId),
      );
    } finally {
      await Promise.all(connections.map((c) => c.close()));
    }
  });

  it('each change once: 20 deliveries of one episode and 10 replacing episodes, racing over four connections', async () => {
    const connections = await Promise.all(
      Array.from({ length: 4 }, () => openDatabase(testServerUri(), t.database.db.databaseName)),
    );
    try {
      const ds = 'feed-once';
      const tenant = testTenant('acme', ds);
      const delivered = episodeInput([
        factInput('user', 'likes', 'green tea'),
        factInput('user', 'has', 'a cat'),
      ]);
      const replacing = Array.from({ length: 10 }, (_, i) =>
        episodeInput([
          factInput('user', 'drives', `car ${i}`, {
            replaceExisting: true,
            validAt: new Date(Date.UTC(2026, 0, 1 + i)),
          }),
        ]),
      );
      // Each call's instant fixed and distinct (the replacing ones in valid-time order, so
      // each supersedes the one before: the records' instants decide the history, and calls
      // within one millisecond would record them at once); the calls themselves race.
      const base = Date.now();
      const writes = [...Array.from({ length: 20 }, () => delivered), ...replacing].map(
        (input, i) => () =>
          recordEpisode(connections[i % 4]!.collections, tenant, input, new Date(base + i)),
      );
      // Interleaved: the deliveries and the replacements start together.
      const order = writes.map((_, i) => i).sort((a, b) => ((a * 7) % 31) - ((b * 7) % 31));
      await Promise.all(order.map((i) => writes[i]!()));

      const changes = await feed(ds, null, 7);
      const ids = changes.map((c) => c.id);
      expect(ids.length, 'no change twice').toBe(new Set(ids).size);
      const count = (kind: string) => changes.filter((c) => c.kind === kind).length;
      expect(count('EPISODE_RECORDED')).toBe(11);
      expect(count('FACT_RECORDED')).toBe(2 + 10);
      const facts = await t.database.collections.facts
        .find({ workspaceId: tenant.workspaceId, dataset: ds, predicateKey: 'drives' })
        .toArray();
      // Each of the ten values is believed once (as recorded, or as a corrected version
      // recorded when a later value superseded it), true until the next began; the latest
      // is open-ended.
      const believed = facts
        .filter((f) => f.invalidAt === null)
        .map((f) => [f.object, f.validUntil?.getUTCDate() ?? null]);
      expect(believed.sort()).toEqual(
        Array.from({ length: 10 }, (_, i) => [`car ${i}`, i === 9 ? null : i + 2]).sort(),
      );
      const superseded = facts.filter((f) => f.invalidAt !== null).length;
      expect(superseded).toBeGreaterThan(0);
      expect(count('FACT_SUPERSEDED')).toBe(superseded);
      expect(count('FACT_CORRECTED')).toBe(facts.filter((f) => f.correctionOf).length);
      const supersededFacts = changes
        .filter((c) => c.kind === 'FACT_SUPERSEDED')
        .map((c) => c.fact!.factId);
      expect(new Set(supersededFacts).size).toBe(superseded);
      const page = data(await t.graphql(ChangeFeedDocument, { dataset: ds, first: 1 }, reader))
        .dataset!.changes;
      expect(page.totalCount).toBe(changes.length);
    } finally {
      await Promise.all(connections.map((c) => c.close()));
    }
  });

  it('a change whose write was slow arrives after later ones, and a reader past those still gets it', async () => {
    const ds = 'feed-slow';
    const tenant = testTenant('acme', ds);
    await record(ds, episode([fact('user', 'a Honda Civic')]));
    const seen = (await feed(ds)).at(-1)!.cursor;
    // A write that took its instant long ago appends only now (a slow write, or one its
    // retry completed): it comes next, with its own earlier `at`.
    const slowAt = new Date('2026-01-01T00:00:00.000Z');
    await appendChanges(t.database.collections, tenant, [
      { changeId: `slow:${randomUUID()}`, kind: 'FACT_DELETED', at: slowAt },
    ]);
    const after = await feed(ds, seen);
    expect(after).toHaveLength(1);
    expect(after[0]!.at).toBe(slowAt.toISOString());
  });
});

describe('an import is not told by the feed, then or later', () => {
  it('a write to an imported pair tells what it did, not the imported history', async () => {
    const ds = 'feed-import';
    const id = (n: number) => `00000000-0000-4000-8000-0000000000${String(n).padStart(2, '0')}`;
    const line = (n: number, object: string, validAt: string, more = {}) =>
      JSON.stringify({
        type: 'fact',
        dataset: ds,
        factId: id(n),
        subject: 'user',
        predicate: 'drives',
        object,
        confidence: 0.9,
        validAt,
        recordedAt: validAt,
        replaceExisting: true,
        ...more,
      });
    const outcome = await importJsonl(t.database.collections, {
      workspace: 'acme',
      now: new Date('2026-11-01T00:00:00.000Z'),
      content: [
        line(1, 'a bicycle', '2026-01-01T00:00:00.000Z', {
          invalidAt: '2026-02-01T00:00:00.000Z',
          invalidReason: 'deleted',
        }),
        line(2, 'a Honda', '2026-03-01T00:00:00.000Z'),
        line(3, 'a Fiat', '2026-05-01T00:00:00.000Z'),
      ].join('\n'),
    });
    expect(outcome.ok).toBe(true);
    expect(await feed(ds)).toEqual([]);

    const later = await record(
      ds,
      episode([
        fact('user', 'a Toyota', { validAt: '2026-09-01T00:00:00.000Z', replaceExisting: true }),
      ]),
    );
    const changes = await feed(ds);
    // The Toyota, and the Fiat it superseded (with its corrected version); nothing of the
    // bicycle's delete or of the Honda's end at the Fiat, which the import wrote.
    expect(changes.map((c) => c.kind)).toEqual([
      'EPISODE_RECORDED',
      'FACT_RECORDED',
      'FACT_CORRECTED',
      'FACT_SUPERSEDED',
    ]);
    expect(changes[1]!.fact!.factId).toBe(later.facts[0]!.factId);
    expect(changes[3]!.fact!.factId).toBe(id(3));
  });
});

describe('a write a crash cut short enters the feed when it is completed', () => {
  it('a delete and a restore recorded but not materialised: the start-up repair derives them and appends their changes, once', async () => {
    const ds = 'feed-repair';
    const tenant = testTenant('acme', ds);
    const db = t.database.collections;
    const { facts } = await record(ds, episode([fact('user', 'a bike'), fact('user', 'a car')]));
    const [restored, deleted] = facts.map((f) => f.factId) as [string, string];
    data(await t.graphql(ChangeDeleteFactDocument, { dataset: ds, id: restored }, writer));
    const seen = (await feed(ds)).at(-1)!.cursor;

    // As a crash right after each record leaves them: recorded, nothing more done.
    const doc = (await db.facts.findOne({ ...tenant, factId: restored }))!;
    const pair = { subjectKey: doc.subjectKey, predicateKey: doc.predicateKey };
    await db.factRecords.insertMany([
      lifecycleRecord(tenant, pair, 'restored', restored, 0, new Date('2026-11-30T00:00:00.000Z')),
      lifecycleRecord(tenant, pair, 'deleted', deleted, 0, new Date('2026-11-30T00:00:01.000Z')),
    ]);
    expect(await feed(ds, seen)).toEqual([]);

    expect(await repairFactHistories(db)).toBeGreaterThanOrEqual(2);
    const changes = await feed(ds, seen);
    expect(changes.map((c) => c.kind)).toEqual(['FACT_RESTORED', 'FACT_DELETED']);
    expect(changes.map((c) => c.fact?.factId)).toEqual([restored, deleted]);
    // Done once: the repair finds nothing more, and the feed stays as it is.
    expect(await repairFactHistories(db)).toBe(0);
    expect((await feed(ds, seen)).map((c) => c.id)).toEqual(changes.map((c) => c.id));
  });
});

describe('memory writes a crash cut short enter the feed at the start-up repair', () => {
  it('an owed creation whose memory was written, an unapplied version: announced once; an owed creation never written: dropped', async () => {
    const ds = 'feed-memory-repair';
    const tenant = testTenant('acme', ds);
    const db = t.database.collections;
    const long = new Date('2026-11-01T00:00:00.000Z');
    const now = new Date('2026-11-01T00:10:00.000Z');
    const input = {
      text: 'Likes tea',
      memoryKind: 'preference',
      scope: 'user',
      sourceType: 'chat',
    };
    // A memory created and then changed through the API: two changes.
    const memoryId = data(
      await t.graphql(ChangeCreateMemoryDocument, { dataset: ds, input }, writer),
    ).createMemory.memoryId;
    data(await t.graphql(ChangeArchiveMemoryDocument, { dataset: ds, memoryId }, writer));
    expect(await db.memoryCreations.countDocuments({ dataset: ds })).toBe(0);

    // As a crash leaves them: a memory written whose creation was still owed, one owed
    // whose memory never got written, and a version applied but not marked (its change not
    // appended).
    const written = memoryDocument(tenant, {
      memoryId: randomUUID(),
      text: 'Has a cat',
      memoryKind: 'fact',
      scope: 'user',
      sourceType: 'chat',
      sourceId: null,
      projectId: null,
      userId: null,
      importance: 0.5,
      salience: 0.5,
      pinned: false,
      version: 1,
      archivedAt: null,
      createdAt: long,
      updatedAt: long,
      lastUsedAt: null,
      validFrom: long,
      validUntil: null,
      supersededBy: null,
    });
    await db.memories.insertOne(written);
    const owed = (id: string, memory: string) => ({
      _id: id,
      ...tenant,
      memoryId: memory,
      pending: true as const,
      at: long,
    });
    await db.memoryCreations.insertMany([
      owed(written._id, written.memoryId),
      owed('never-written', randomUUID()),
    ]);
    const version = (await db.memoryVersions.findOne({ ...tenant, memoryId }))!;
    await db.memoryVersions.updateOne({ _id: version._id }, { $set: { applied: false, at: long } });
    // (Its change never appended: the last of the feed, so its number is free again.)
    await db.changes.deleteOne({
      ...tenant,
      changeId: `${version._id}@${version.at.toISOString()}`,
    });
    const seen = (await feed(ds)).at(-1)!.cursor;

    expect(await repairMemoryWrites(db, now)).toBe(3);
    expect((await feed(ds, seen)).map((c) => [c.kind, c.memory?.memoryId])).toEqual([
      ['MEMORY_CREATED', written.memoryId],
      ['MEMORY_CHANGED', memoryId],
    ]);
    expect(await db.memoryCreations.countDocuments({ dataset: ds })).toBe(0);
    expect((await db.memoryVersions.findOne({ _id: version._id }))!.applied).toBe(true);
    // Once: nothing is owed any more.
    expect(await repairMemoryWrites(db, now)).toBe(0);
  });
});
