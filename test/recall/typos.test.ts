import { beforeAll, describe, expect, it } from 'vitest';
import { recallTerms } from '../../src/domain/recallTerms.js';
import { TYPO_DISCOUNT } from '../../src/domain/typos.js';
import { eraseEpisode } from '../../src/store/erasure.js';
import { createMemory } from '../../src/store/memoryWrites.js';
import { migrateStore } from '../../src/store/migrations.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { RecallWithTimeDocument, type RecallWithTimeQuery } from '../generated/operations.js';
import { DEMO } from '../helpers/demo.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import { clockFrom, openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { callTool, mcpClient } from '../helpers/mcp.js';
import { memoryInput } from '../helpers/memoryInput.js';

/**
 * A question's word no fact holds is read as the dataset's term within a small edit
 * distance (1 for 5 to 7 characters, 2 for longer; never for shorter words or numbers), at
 * TYPO_DISCOUNT, shown as `correctedFrom`: on GraphQL, Memory Soda's recall route and the
 * MCP tool. The vocabulary it is found in follows the facts: written with them (and by a
 * migration for older stores), and an erased fact's words leave it.
 */

const DATASET = 'user_42';
let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({ gateway: { clock: clockFrom('2026-12-01T00:00:00Z') } });
  key = await t.key('acme', ['read']);
});

type Recalled = NonNullable<RecallWithTimeQuery['dataset']>['recall'];

async function recall(query: string, dataset = DATASET): Promise<Recalled> {
  const { body } = await t.graphql(RecallWithTimeDocument, { dataset, query }, key);
  expect(body.errors).toBeUndefined();
  return body.data!.dataset!.recall;
}
const factIds = (r: Recalled) => r.facts.map((f) => f.fact.factId);
const termOf = (r: Recalled, term: string) =>
  r.facts[0]!.explanation.terms.find((w) => w.term === term);

describe('GraphQL: a typo is read as the term it is near', () => {
  it('one edit in a word of 5 to 7 characters, at a discount, shown as correctedFrom', async () => {
    const typo = await recall('is the user interested in a toyta');
    const right = await recall('is the user interested in a toyota');
    expect(factIds(typo)).toEqual(factIds(right));
    expect(factIds(typo)[0]).toBe(DEMO.facts.toyotaInterest);
    const corrected = termOf(typo, 'toyota')!;
    expect(corrected.correctedFrom).toBe('toyta');
    expect(corrected.weight).toBeCloseTo(termOf(right, 'toyota')!.weight * TYPO_DISCOUNT, 12);
    expect(termOf(right, 'toyota')!.correctedFrom).toBeNull();
    // A swap of two neighbours is one edit too.
    expect(factIds(await recall('hybird'))).toEqual([DEMO.facts.toyotaInterest]);
  });

  it('two edits in a longer word; never more, nor in short words or numbers', async () => {
    await recordEpisode(
      t.database.collections,
      testTenant('acme', 'typos'),
      episodeInput([
        factInput('user', 'plays', 'the saxophone', { sourceQuote: 'sax every evening' }),
        factInput('user', 'owns', 'a car', { sourceQuote: 'code 20000' }),
      ]),
      new Date('2026-11-20T00:00:00Z'),
    );
    // "saxaphonne" is two edits from the stem `saxophon`.
    const two = await recall('saxaphonne', 'typos');
    expect(two.facts).toHaveLength(1);
    expect(two.facts[0]!.explanation.terms[0]).toMatchObject({
      term: 'saxophon',
      correctedFrom: 'saxaphonn',
    });
    expect((await recall('saxxaphonnee', 'typos')).facts).toEqual([]);
    // Four characters or fewer, or a number: never corrected.
    expect((await recall('cat', 'typos')).facts).toEqual([]);
    expect((await recall('20001', 'typos')).facts).toEqual([]);
    // Four letters: "plan" is one edit from `plai` ("plays"), and still not read as it.
    expect((await recall('plan', 'typos')).facts).toEqual([]);
    // A word some fact holds is never read as another.
    const exact = await recall('car', 'typos');
    expect(exact.facts[0]!.explanation.terms.every((w) => w.correctedFrom === null)).toBe(true);
  });
});

describe('memories: a typo of a word only memories hold', () => {
  it('is read as that word: the memory is recalled, its explanation says so', async () => {
    const tenant = testTenant('acme', 'typos');
    const { memory } = await createMemory(
      t.database.collections,
      tenant,
      memoryInput('The user practises the ukulele on Sundays'),
      new Date('2026-11-21T00:00:00Z'),
    );
    const r = await recall('ukelele lessons', 'typos');
    expect(r.facts).toEqual([]);
    expect(r.memories.map((m) => m.memory.memoryId)).toEqual([memory.memoryId]);
    expect(r.memories[0]!.explanation.terms).toEqual([
      { term: recallTerms('ukulele')[0], correctedFrom: recallTerms('ukelele')[0] },
    ]);
    // As written, no correction.
    const right = await recall('ukulele', 'typos');
    expect(right.memories[0]!.explanation.terms[0]!.correctedFrom).toBeNull();
  });
});

describe('the vocabulary follows the facts', () => {
  it("an erased episode's words leave it: its typo recalls nothing", async () => {
    const tenant = testTenant('acme', 'erasable');
    const episode = episodeInput([factInput('user', 'collects', 'old xylophones')]);
    await recordEpisode(t.database.collections, tenant, episode, new Date('2026-11-20T00:00:00Z'));
    expect((await recall('xylophonnes', 'erasable')).facts).toHaveLength(1);
    const vocabulary = () =>
      t.database.collections.vocabulary
        .find({ workspaceId: tenant.workspaceId, dataset: 'erasable' })
        .toArray();
    expect((await vocabulary()).map((v) => v.term)).toContain('xylophon');
    await eraseEpisode(
      t.database.collections,
      tenant,
      episode.episodeId,
      { keyId: 'test' },
      new Date(),
    );
    expect((await vocabulary()).map((v) => v.term)).toEqual([]);
    expect((await recall('xylophonnes', 'erasable')).facts).toEqual([]);
  });

  it('a store written before the vocabulary gets it from a migration', async () => {
    const db = t.database.collections;
    const before = await db.vocabulary.countDocuments({ dataset: DATASET });
    expect(before).toBeGreaterThan(10);
    await db.vocabulary.deleteMany({ dataset: DATASET });
    await db.migrations.deleteOne({ _id: '2026-12-07-vocabulary' } as never);
    expect((await recall('toyta')).facts).toEqual([]);
    const ran = await migrateStore(db, new Date());
    expect(ran.find((m) => m.id === '2026-12-07-vocabulary')?.changed).toBe(before);
    expect(factIds(await recall('toyta'))).toContain(DEMO.facts.toyotaInterest);
  });
});

describe('Memory Soda’s recall route and the MCP tool read typos the same way', () => {
  it('REST: the corrected term, and correctedFrom with explain', async () => {
    const response = await t.request('/v1/memory/recall', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dataset: DATASET, query: 'toyta', explain: true }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      facts: {
        factId: string;
        explanation: { terms: { term: string; correctedFrom: string }[] };
      }[];
    };
    expect(body.facts.map((f) => f.factId)).toContain(DEMO.facts.toyotaInterest);
    expect(body.facts[0]!.explanation.terms[0]).toMatchObject({
      term: 'toyota',
      correctedFrom: 'toyta',
    });
  });

  it('MCP: the recall tool', async () => {
    const client = await mcpClient('http://gateway.test', key, (r) => t.gateway.fetch(r));
    const result = await callTool(client, 'recall', {
      dataset: DATASET,
      query: 'toyta',
      explain: true,
    });
    const answer = result.structuredContent as {
      facts: {
        fact: { factId: string };
        explanation: { terms: { term: string; correctedFrom: string | null }[] };
      }[];
    };
    expect(answer.facts.map((f) => f.fact.factId)).toContain(DEMO.facts.toyotaInterest);
    expect(answer.facts[0]!.explanation.terms[0]!.correctedFrom).toBe('toyta');
    await client.close();
  });
});
