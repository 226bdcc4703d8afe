import { beforeAll, describe, expect, it } from 'vitest';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The gateway's clock: each request reads it once, and every read and write of that
 * request uses that instant (GraphQL and REST alike). Here the clock is set, so what is
 * "now" is known whatever the date the suite runs on.
 */
let at = new Date('2026-06-01T12:00:00.000Z');
let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({ gateway: { clock: () => at } });
  key = await t.key('acme');
});

const gql = async (query: string, variables: Record<string, unknown> = {}) => {
  const response = await t.request('/graphql', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = await response.json();
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data;
};

const liveNow = async () =>
  (
    await gql(
      '{ dataset(name: "user_42") { facts(first: 100) { edges { node { object state } } } } }',
    )
  ).dataset.facts.edges.map((e: { node: { object: string; state: string } }) => e.node);

describe('one clock per request', () => {
  it("reads answer for the clock's instant, in GraphQL and REST", async () => {
    at = new Date('2026-06-01T12:00:00.000Z');
    // On 1 June 2026 the user lived in Berlin (deleted in July), the Honda was still the
    // car of interest and the budget still held.
    const june = await liveNow();
    expect(june.map((f: { object: string }) => f.object).sort()).toEqual(
      ['20000 euros', 'a family car', 'berlin', 'honda', 'honda civic'].sort(),
    );
    expect(june.every((f: { state: string }) => f.state === 'LIVE')).toBe(true);
    const rest = await t.request('/v1/memory/semantic/datasets/user_42/facts', { key });
    expect((await rest.json()).total).toBe(5);

    at = new Date('2034-12-31T00:00:00.000Z');
    const later = await liveNow();
    expect(later.map((f: { object: string }) => f.object).sort()).toEqual(
      ['a family car', 'honda', 'toyota corolla hybrid'].sort(),
    );
    at = new Date('2035-02-01T00:00:00.000Z');
    expect((await liveNow()).map((f: { object: string }) => f.object)).toContain(
      'toyota corolla hybrid',
    );
    expect((await liveNow()).length).toBe(4);
  });

  it("writes stamp the clock's instant", async () => {
    at = new Date('2031-06-01T08:00:00.000Z');
    const recorded = await gql(
      `mutation ($input: RecordEpisodeInput!) {
        recordEpisode(dataset: "clocked", input: $input) {
          episode { recordedAt } facts { factId recordedAt validAt state }
        }
      }`,
      {
        input: {
          episode: {
            episodeId: '11111111-2222-4333-8444-555555555555',
            occurredAt: '2031-05-31T00:00:00Z',
            source: 'chat',
            content: 'user: I moved to Lisbon',
          },
          facts: [{ subject: 'user', predicate: 'lives in', object: 'lisbon', confidence: 0.9 }],
        },
      },
    );
    expect(recorded.recordEpisode.episode.recordedAt).toBe('2031-06-01T08:00:00.000Z');
    expect(recorded.recordEpisode.facts[0]).toMatchObject({
      recordedAt: '2031-06-01T08:00:00.000Z',
      state: 'LIVE',
    });
    const factId = recorded.recordEpisode.facts[0].factId;

    at = new Date('2031-06-02T09:00:00.000Z');
    const deleted = await gql(
      'mutation ($id: ID!) { deleteFact(dataset: "clocked", id: $id) { fact { invalidAt state } } }',
      { id: factId },
    );
    expect(deleted.deleteFact.fact).toEqual({
      invalidAt: '2031-06-02T09:00:00.000Z',
      state: 'SUPERSEDED',
    });

    at = new Date('2031-06-03T10:00:00.000Z');
    const created = await gql(
      `mutation { createMemory(dataset: "clocked", input: {
        text: "Lives in Lisbon", memoryKind: "fact", scope: "user", sourceType: "chat"
      }) { memoryId createdAt updatedAt validFrom } }`,
    );
    expect(created.createMemory).toMatchObject({
      createdAt: '2031-06-03T10:00:00.000Z',
      updatedAt: '2031-06-03T10:00:00.000Z',
      validFrom: '2031-06-03T10:00:00.000Z',
    });

    at = new Date('2031-06-04T11:00:00.000Z');
    const archived = await gql(
      'mutation ($id: ID!) { archiveMemory(dataset: "clocked", memoryId: $id) { archivedAt updatedAt } }',
      { id: created.createMemory.memoryId },
    );
    expect(archived.archiveMemory).toEqual({
      archivedAt: '2031-06-04T11:00:00.000Z',
      updatedAt: '2031-06-04T11:00:00.000Z',
    });
  });
});
