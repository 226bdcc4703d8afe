import { beforeAll, describe, expect, it } from 'vitest';
import { MEANING_MARGIN } from '../../src/domain/recall.js';
import { EMBEDDING_DIMENSIONS } from '../../src/embeddings/embedder.js';
import { createGateway } from '../../src/http/app.js';
import { vectorOf } from '../../src/store/embeddings.js';
import { workspaceIdFor } from '../../src/store/workspaces.js';
import { testEmbedder } from '../helpers/embedder.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { ONE_USER_FACTS, PARAPHRASED } from './oneUser.js';

/**
 * Recall by meaning on a real store (docs/RECALL.md, "Recall by meaning"): a question that
 * shares no word with its fact finds it, a trap that shares a word does not outrank it, a
 * replay at an earlier knownAt does not find what was recorded later, another process's
 * index finds what this one wrote, and EMBEDDINGS=off answers by words alone, as before.
 */

const DATASET = 'one-user';
let clockMs = Date.parse('2026-06-01T12:00:00.000Z');
let t: TestGateway;
let key: string;
/** A second gateway on the same store: another process, with its own vector index. */
let other: ReturnType<typeof createGateway>;
/** A gateway with recall by meaning off (EMBEDDINGS=off). */
let wordsOnly: ReturnType<typeof createGateway>;

const RECALL = `query Recall($dataset: String!, $query: String!, $knownAt: DateTime) {
  dataset(name: $dataset) {
    recall(query: $query, first: 5, knownAt: $knownAt) {
      facts {
        relevanceScore
        fact { subject predicate object }
        explanation { score foundBy similarity fusedScore }
      }
      memories { memory { text } explanation { foundBy similarity } }
    }
  }
}`;

interface Recalled {
  facts: {
    relevanceScore: number;
    fact: { subject: string; predicate: string; object: string };
    explanation: {
      score: number;
      foundBy: string[];
      similarity: number | null;
      fusedScore: number | null;
    };
  }[];
  memories: {
    memory: { text: string };
    explanation: { foundBy: string[]; similarity: number | null };
  }[];
}

async function post(
  gateway: { fetch: (r: Request) => Response | Promise<Response> },
  query: string,
  variables: Record<string, unknown>,
) {
  const response = await gateway.fetch(
    new Request('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify({ query, variables }),
    }),
  );
  const body = await response.json();
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data;
}

const recall = async (
  query: string,
  { gateway = t.gateway, knownAt }: { gateway?: typeof other; knownAt?: string } = {},
): Promise<Recalled> =>
  (await post(gateway, RECALL, { dataset: DATASET, query, knownAt })).dataset.recall;

const statement = (f: { fact: { subject: string; predicate: string; object: string } }) =>
  `${f.fact.subject} | ${f.fact.predicate} | ${f.fact.object}`;

async function recordFacts(statements: readonly string[], occurredAt: string) {
  await post(
    t.gateway,
    `mutation($input: RecordEpisodeInput!) { recordEpisode(dataset: "${DATASET}", input: $input) { outcome } }`,
    {
      input: {
        episode: { occurredAt, source: 'chat', content: statements.join('. ') },
        facts: statements.map((s) => {
          const [subject, predicate, object] = s.split(' | ');
          return { subject, predicate, object, confidence: 0.9 };
        }),
      },
    },
  );
}

beforeAll(async () => {
  const embedder = await testEmbedder();
  t = await openTestGateway({
    demoWorkspaces: [],
    gateway: { embedder, clock: () => new Date(clockMs) },
  });
  key = await t.key('acme', ['read', 'write']);
  other = createGateway({ database: t.database, embedder, keyUseFlushMs: 0 });
  wordsOnly = createGateway({ database: t.database, keyUseFlushMs: 0 });
  await recordFacts(ONE_USER_FACTS, '2026-05-01T00:00:00.000Z');
});

describe('vectors at write time', () => {
  it('stores each fact with its vector when the episode is recorded', async () => {
    const facts = await t.database.collections.facts
      .find({ workspaceId: workspaceIdFor('acme'), dataset: DATASET })
      .toArray();
    expect(facts).toHaveLength(ONE_USER_FACTS.length);
    for (const f of facts) {
      expect(f.embedded).toBe(true);
      expect(vectorOf(f.embedding!)).toHaveLength(EMBEDDING_DIMENSIONS);
    }
  });
});

describe('a question in other words', () => {
  for (const { question, answer } of PARAPHRASED) {
    it(`"${question}" finds "${answer}" first or second`, async () => {
      const { facts } = await recall(question);
      const place = facts.findIndex((f) => statement(f) === answer);
      expect(place, JSON.stringify(facts.map(statement))).toBeGreaterThanOrEqual(0);
      expect(place).toBeLessThan(2);
      const found = facts[place]!.explanation;
      expect(found.foundBy).toContain('MEANING');
      expect(found.similarity).toBeGreaterThanOrEqual(MEANING_MARGIN);
      expect(found.fusedScore).toBeGreaterThan(0);
    });
  }

  it('answers a question about nothing stored with nothing', async () => {
    const { facts } = await recall('quantum chromodynamics on a lattice');
    expect(facts).toEqual([]);
  });
});

describe('EMBEDDINGS=off', () => {
  it('recalls by words alone, as before: no paraphrase found, nothing fused', async () => {
    const bike = await recall('does the user have a bike', { gateway: wordsOnly });
    expect(bike.facts.map(statement)).not.toContain('user | owns | a bicycle');
    const home = await recall('which city is home', { gateway: wordsOnly });
    expect(home.facts.map(statement)[0]).toBe('user | works from | a home office on fridays');
    for (const f of home.facts) {
      expect(f.explanation.similarity).toBeNull();
      expect(f.explanation.fusedScore).toBeNull();
      expect(f.explanation.foundBy).toEqual(['WORDS']);
    }
  });
});

describe('replayed and shared', () => {
  it('a replay at an earlier knownAt does not find a fact recorded later; now finds it', async () => {
    const before = new Date(clockMs).toISOString();
    // Another process reads the dataset first: its index is built now, before the write.
    await recall('what pets does the user have', { gateway: other });
    clockMs += 86_400_000;
    await recordFacts(['user | adopted | a kitten called mia'], '2026-06-02T00:00:00.000Z');
    clockMs += 86_400_000;
    const kitten = 'user | adopted | a kitten called mia';
    const then = await recall('which cat does the user have', { knownAt: before });
    expect(then.facts.map(statement)).not.toContain(kitten);
    const now = await recall('which cat does the user have');
    expect(now.facts.map(statement).slice(0, 2)).toContain(kitten);
    // The other process's index learns the new vector from the store.
    const elsewhere = await recall('which cat does the user have', { gateway: other });
    expect(elsewhere.facts.map(statement).slice(0, 2)).toContain(kitten);
  });
});

describe('memories by meaning', () => {
  it('finds a memory that shares no word with the question', async () => {
    await post(
      t.gateway,
      `mutation($input: MemoryInput!) { createMemory(dataset: "${DATASET}", input: $input) { memoryId } }`,
      {
        input: {
          text: 'The user is married to Joana, a software engineer.',
          memoryKind: 'fact',
          scope: 'user',
          sourceType: 'chat',
        },
      },
    );
    const { memories } = await recall('who is their spouse');
    expect(memories.map((m) => m.memory.text)).toContain(
      'The user is married to Joana, a software engineer.',
    );
    expect(memories[0]!.explanation.foundBy).toContain('MEANING');
  });
});
