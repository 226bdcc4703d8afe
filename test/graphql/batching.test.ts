import type { CommandStartedEvent } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveTemporalSelection } from '../../src/domain/factState.js';
import { MAX_QUESTION_TERMS } from '../../src/domain/recall.js';
import { entitiesByNames } from '../../src/store/entities.js';
import { episodesByIds } from '../../src/store/episodes.js';
import { factsByIds, factsOfEntities, factsOfEpisodes, listFacts } from '../../src/store/facts.js';
import { workspaceIdFor } from '../../src/store/workspaces.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { EntitiesWithFactsAndSubjectsDocument, FactsDocument } from '../generated/operations.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

let t: TestGateway;
let key: string;
const commands: CommandStartedEvent[] = [];

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [], clientOptions: { monitorCommands: true } });
  key = await t.key('acme', ['read']);
  // 60 entities; entity i is the subject of two facts about entity i+1.
  const lines: string[] = [];
  for (let i = 0; i < 60; i++) {
    lines.push(
      JSON.stringify({
        type: 'entity',
        dataset: 'many',
        name: `Entity ${i}`,
        entityType: 'THING',
        updatedAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
      }),
    );
    for (const n of [0, 1]) {
      lines.push(
        JSON.stringify({
          type: 'fact',
          dataset: 'many',
          factId: uuid(i * 2 + n + 1),
          subject: `entity ${i}`,
          predicate: `relates ${n} to`,
          object: `entity ${i + 1}`,
          objectIsEntity: true,
          confidence: 1,
          validAt: '2026-01-01',
        }),
      );
    }
  }
  // A second dataset with more entities and episodes than the driver's default first batch.
  for (let i = 0; i < 110; i++) {
    lines.push(
      JSON.stringify({ type: 'entity', dataset: 'wide', name: `Wide ${i}`, entityType: 'THING' }),
      JSON.stringify({
        type: 'episode',
        dataset: 'wide',
        episodeId: uuid(1000 + i),
        occurredAt: '2026-01-01T00:00:00.000Z',
        source: 'chat',
        content: `episode ${i}`,
      }),
    );
  }
  // Entities a fact spells in another case than their stored (lower-cased) names.
  lines.push(
    JSON.stringify({ type: 'entity', dataset: 'cased', name: 'Alice', entityType: 'PERSON' }),
    JSON.stringify({ type: 'entity', dataset: 'cased', name: 'Bob', entityType: 'PERSON' }),
    JSON.stringify({
      type: 'fact',
      dataset: 'cased',
      factId: uuid(5000),
      subject: 'ALICE',
      predicate: 'knows',
      object: 'Bob',
      objectIsEntity: true,
      confidence: 1,
      validAt: '2026-01-01',
    }),
  );
  const outcome = await importJsonl(t.database.collections, {
    now: new Date(),
    workspace: 'acme',
    content: lines.join('\n'),
  });
  expect(outcome.ok).toBe(true);
  t.database.client.on('commandStarted', (event) => commands.push(event));
});

async function commandsFor(run: () => Promise<unknown>): Promise<string[]> {
  commands.length = 0;
  await run();
  return commands.map((c) => `${c.commandName}:${String(c.command[c.commandName])}`);
}

describe('DataLoader batching', () => {
  it("entities with their facts and each fact's subject entity cost the same commands for 5 and 50", async () => {
    const run = (first: number) => async () => {
      const { body } = await t.graphql(
        EntitiesWithFactsAndSubjectsDocument,
        { dataset: 'many', first },
        key,
      );
      expect(body.errors).toBeUndefined();
      const entities = body.data!.dataset!.entities.edges;
      expect(entities).toHaveLength(first);
      // Every entity but the first (newest) has facts as object and subject.
      expect(entities.flatMap((e) => e.node.facts).length).toBeGreaterThanOrEqual(first * 2);
      expect(entities[1]!.node.facts[0]!.subjectEntity?.name).toBeTruthy();
    };
    const five = await commandsFor(run(5));
    const fifty = await commandsFor(run(50));
    expect(fifty).toEqual(five);
    // Key, dataset, entities, their facts, the facts' subject entities.
    expect(five.length).toBeLessThanOrEqual(6);
  });

  it("a fact's entities already on the page are answered from it, however the fact spells them", async () => {
    const lookups = () =>
      commands.filter((c) => c.command.comment === 'store:entitiesByNames').map((c) => c.command);
    const query = `query($dataset: String!, $first: Int!) { dataset(name: $dataset) {
      entities(first: $first) { edges { node { name
        facts { subject subjectEntity { name type } objectEntity { name } } } } } } }`;
    const ask = (dataset: string, first: number) => async () => {
      const response = await t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query, variables: { dataset, first } }),
      });
      const body = await response.json();
      expect(body.errors).toBeUndefined();
      return body.data.dataset.entities.edges.map(
        (e: { node: { name: string; facts: unknown[] } }) => e.node,
      );
    };

    let cased: { name: string; facts: unknown[] }[] = [];
    await commandsFor(async () => {
      cased = await ask('cased', 10)();
    });
    expect(lookups()).toEqual([]);
    const alice = cased.find((e) => e.name === 'alice')!;
    expect(alice.facts).toEqual([
      {
        subject: 'ALICE',
        subjectEntity: { name: 'alice', type: 'PERSON' },
        objectEntity: { name: 'bob' },
      },
    ]);

    // The newest five of 'many' (59..55): of the names their facts mention, only entity
    // 54 (the subject of a fact about 55) and entity 60 (the object of 59's, never an
    // entity) are not on the page, and only they are looked up, in one query.
    await commandsFor(ask('many', 5));
    expect(lookups()).toHaveLength(1);
    expect(lookups()[0]!.filter._id.$in).toHaveLength(2);
  });

  it("entities' facts at several selections: one command per selection for 5 and 50 entities, never a shared answer", async () => {
    // The 'many' facts are valid from 2026-01-01 and recorded when imported (before 2100).
    const run = (first: number) => async () => {
      const response = await t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          query: `query($first: Int!) { dataset(name: "many") { entities(first: $first) { edges { node {
            live: facts(first: 10) { factId }
            notYetValid: facts(validAt: "2025-12-01", first: 10) { factId }
            notYetKnown: facts(knownAt: "2000-01-01", first: 10) { factId }
            both: facts(validAt: "2026-06-01", knownAt: "2100-01-01", first: 10) { factId }
            asOf: facts(asOf: "2100-01-01", validAt: "2025-12-01", knownAt: "2000-01-01", first: 10) { factId }
            sameAsNotYetValid: facts(validAt: "2025-12-01", includeInvalidated: true, first: 10) { factId }
          } } } } }`,
          variables: { first },
        }),
      });
      const body = await response.json();
      expect(body.errors).toBeUndefined();
      const entities = body.data.dataset.entities.edges.map(
        (e: { node: Record<string, { factId: string }[]> }) => e.node,
      );
      expect(entities).toHaveLength(first);
      for (const entity of entities) {
        expect(entity.live!.length).toBeGreaterThanOrEqual(2);
        expect(entity.notYetValid).toEqual([]);
        expect(entity.notYetKnown).toEqual([]);
        expect(entity.sameAsNotYetValid).toEqual([]);
        expect(entity.both).toEqual(entity.live);
        expect(entity.asOf).toEqual(entity.live);
      }
    };
    const five = await commandsFor(run(5));
    const fifty = await commandsFor(run(50));
    expect(fifty).toEqual(five);
    // One facts query per distinct selection (live, validAt 2025, knownAt 2000, the point
    // (2026-06, 2100), asOf 2100); the includeInvalidated one resolves to validAt 2025's.
    expect(five.filter((c) => c.startsWith('find:facts'))).toHaveLength(5);
  });

  it('recall costs the same commands for one result and fifty, and two counts a term, at most twelve terms', async () => {
    const run = (query: string, first: number) => async () => {
      const response = await t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          query: `query($q: String!, $first: Int!) { dataset(name: "many") {
            recall(query: $q, first: $first, asOf: "2026-06-01") {
              facts { relevanceScore fact { factId } } memories { relevanceScore } context } } }`,
          variables: { q: query, first },
        }),
      });
      const body = await response.json();
      expect(body.errors).toBeUndefined();
      const { length } = body.data.dataset.recall.facts;
      expect(length).toBeGreaterThan(0);
      expect(length).toBeLessThanOrEqual(first);
    };
    // "relates" alone would recall nothing: every fact of 'many' holds it (a common term).
    // Neither query names an entity ("entity 7" would: below).
    const small = await commandsFor(run('relates 7', 1));
    // The same commands (the facts' and the memories' reads interleave in any order).
    expect((await commandsFor(run('relates 7', 50))).sort()).toEqual([...small].sort());
    const long = `relates to ${Array.from({ length: 40 }, (_, i) => i + 1).join(' ')}`;
    const large = await commandsFor(run(long, 50));
    // The dataset, the entities the question might name, the facts recorded by K and two
    // counts per term (statement, quote), the view's size (up to 100), the candidates;
    // each kind's candidates and the size of its view; replayed at an instant, the memory
    // versions made since (none here, so no memory is read again).
    const counts = (commands: string[]) =>
      commands.filter((c) => c.startsWith('aggregate:facts')).length;
    expect(counts(small)).toBe(1 + 2 * 2 + 1);
    expect(counts(large)).toBe(1 + 2 * MAX_QUESTION_TERMS + 1);
    expect(large.length - small.length).toBe(2 * (MAX_QUESTION_TERMS - 2));
    expect(small.filter((c) => c.startsWith('find:facts'))).toHaveLength(1);
    expect(small.filter((c) => c.startsWith('find:entities'))).toHaveLength(1);
    expect(small.filter((c) => c.startsWith('find:memories'))).toHaveLength(1);
    expect(small.filter((c) => c.startsWith('find:memoryVersions'))).toHaveLength(1);
    // Naming an entity reads its facts (as subject, as object), the entities one hop away,
    // and their facts (as subject, as object): five more.
    const named = await commandsFor(run('entity 7', 1));
    expect(named.length - small.length).toBe(5);
  });

  it('a page of 1 and a page of 100 facts cost the same commands (no cursor left to kill)', async () => {
    const run = (first: number) => async () => {
      const { body } = await t.graphql(FactsDocument, { dataset: 'many', first }, key);
      expect(body.errors).toBeUndefined();
      expect(body.data!.dataset!.facts.edges).toHaveLength(first);
    };
    const one = await commandsFor(run(1));
    const hundred = await commandsFor(run(100));
    expect(hundred).toEqual(one);
    expect(hundred.some((c) => c.startsWith('killCursors') || c.startsWith('getMore'))).toBe(false);
  });

  it('lookups by many keys are one round trip each, past the default first batch of 101', async () => {
    const workspaceId = workspaceIdFor('acme');
    const db = t.database.collections;
    const sent = await commandsFor(async () => {
      const wide = { workspaceId, dataset: 'wide' };
      const [entities, episodes, facts] = await Promise.all([
        entitiesByNames(
          db,
          wide,
          Array.from({ length: 110 }, (_, i) => `Wide ${i}`),
        ),
        episodesByIds(
          db,
          wide,
          Array.from({ length: 110 }, (_, i) => uuid(1000 + i)),
        ),
        factsByIds(
          db,
          { workspaceId, dataset: 'many' },
          Array.from({ length: 120 }, (_, i) => uuid(i + 1)),
        ),
      ]);
      expect([entities.size, episodes.size, facts.size]).toEqual([110, 110, 120]);
    });
    expect(sent.map((c) => c.split(':')[0])).toEqual(['find', 'find', 'find']);
  });

  it('totalCount is counted beside the page, and not at all when not selected', async () => {
    const events: string[] = [];
    const client = t.database.client;
    const started = (e: CommandStartedEvent) => events.push(`start ${e.commandName}`);
    const succeeded = (e: { commandName: string }) => events.push(`done ${e.commandName}`);
    client.on('commandStarted', started);
    client.on('commandSucceeded', succeeded);
    try {
      const { body } = await t.graphql(FactsDocument, { dataset: 'many', first: 5 }, key);
      expect(body.data!.dataset!.facts.totalCount).toBe(120);
      const facts = events.filter((e) => /^(start|done) (find|aggregate)$/.test(e)).slice(-4);
      // The count leaves before the page's answer is back (counted after the page, it
      // would start only once the find is done).
      expect(facts.indexOf('start aggregate')).toBeGreaterThanOrEqual(0);
      expect(facts.indexOf('start aggregate')).toBeLessThan(facts.indexOf('done find'));
      events.length = 0;
      const noCount = await t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query:
            '{ dataset(name: "many") { facts(first: 5) { edges { cursor node { factId } } } } }',
        }),
      });
      expect(noCount.status).toBe(200);
      expect(events.filter((e) => e === 'start aggregate')).toEqual([]);
      // Selected, but left out by @include / @skip for this request's variables: no count
      // either; included by them: counted.
      const directed = (withCount: boolean) =>
        t.request('/graphql', {
          method: 'POST',
          key,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            query:
              'query ($withCount: Boolean!) { dataset(name: "many") { facts(first: 5) { totalCount @include(if: $withCount) a: totalCount @skip(if: true) edges { node { factId } } } } }',
            variables: { withCount },
          }),
        });
      events.length = 0;
      const skipped = await directed(false);
      expect(((await skipped.json()) as { errors?: unknown }).errors).toBeUndefined();
      expect(events.filter((e) => e === 'start aggregate')).toEqual([]);
      const counted = await directed(true);
      expect(await counted.json()).toMatchObject({
        data: { dataset: { facts: { totalCount: 120 } } },
      });
      expect(events.filter((e) => e === 'start aggregate')).toEqual(['start aggregate']);
    } finally {
      client.off('commandStarted', started);
      client.off('commandSucceeded', succeeded);
    }
  });

  it('fact reads that answer clients leave the derived search fields in the database', async () => {
    const tenant = { workspaceId: workspaceIdFor('acme'), dataset: 'many' };
    const db = t.database.collections;
    const all = resolveTemporalSelection({ includeInvalidated: true }, new Date());
    const page = await listFacts(db, tenant, { selection: all }, { first: 5 });
    const ofEntities = await factsOfEntities(db, tenant, ['entity 1'], all, 100);
    const ofEpisodes = await factsOfEpisodes(db, tenant, [uuid(1)], 100);
    const read = [...page.facts, ...ofEntities.get('entity 1')!, ...ofEpisodes.values()].flat();
    expect(read.length).toBeGreaterThan(5);
    for (const fact of read) {
      for (const left of ['_id', 'recallTerms', 'predicateKey', 'restorations']) {
        expect(Object.keys(fact)).not.toContain(left);
      }
      expect(fact.subjectKey).toBeTruthy();
    }
    // Stored all the same (the filters need them).
    expect(
      (await db.facts.findOne({ workspaceId: tenant.workspaceId }))?.recallTerms,
    ).toBeDefined();
  });

  it('bad input never reaches the database', async () => {
    const sent = await commandsFor(async () => {
      const { body } = await t.graphql(
        FactsDocument,
        { dataset: 'many', q: 'x'.repeat(1001) },
        key,
      );
      expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    });
    expect(
      sent.filter((c) => c.startsWith('find:facts') || c.startsWith('aggregate:facts')),
    ).toEqual([]);
  });
});
