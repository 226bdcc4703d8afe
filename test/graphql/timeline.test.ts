import type { CommandStartedEvent } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  FactsDocument,
  type FactsQueryVariables,
  MemoriesDocument,
  type MemoriesQueryVariables,
  WorkspaceMemoriesDocument,
} from '../generated/operations.js';
import { DEMO } from '../helpers/demo.js';
import { clockFrom, openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Reading the store's history: the transaction-time windows of Dataset.facts (what the
 * store learned, and stopped believing, between two instants), Fact.state on each axis,
 * and memories whose validity has ended. The demo dataset (src/demo/user_42.jsonl): the
 * Berlin fact recorded 2026-04-01T08:00:05Z and deleted 2026-07-01T10:00:00Z; the four May
 * facts recorded 2026-05-10T18:30:04Z, the Honda Civic interest among them superseded
 * 2026-08-16T09:14:06Z by the Corolla fact, recorded then with the test drive.
 */

const DATASET = 'user_42';
const MAY_RECORDED = '2026-05-10T18:30:04.000Z';
const AUGUST_RECORDED = '2026-08-16T09:14:06.000Z';
const BERLIN_DELETED = '2026-07-01T10:00:00.000Z';
const before = (instant: string) => new Date(Date.parse(instant) - 1).toISOString();

let t: TestGateway;
let key: string;
const sent: CommandStartedEvent[] = [];

beforeAll(async () => {
  // The demo's states on this date (the test drive still ahead).
  t = await openTestGateway({
    clientOptions: { monitorCommands: true },
    gateway: { clock: clockFrom('2026-12-01T00:00:00Z') },
  });
  t.database.client.on('commandStarted', (event) => sent.push(event));
  key = await t.key('acme', ['read']);
});

async function facts(variables: Partial<FactsQueryVariables>) {
  const { body } = await t.graphql(FactsDocument, { dataset: DATASET, ...variables }, key);
  expect(body.errors).toBeUndefined();
  const connection = body.data!.dataset!.facts;
  return { connection, nodes: connection.edges.map((e) => e.node) };
}

/** The ids in order; the total must count exactly the page (every answer here fits one). */
async function factIds(variables: Partial<FactsQueryVariables>): Promise<string[]> {
  const { connection, nodes } = await facts(variables);
  expect(connection.totalCount).toBe(nodes.length);
  expect(connection.pageInfo.hasNextPage).toBe(false);
  return nodes.map((n) => n.factId);
}

const MAY_FACTS = [
  DEMO.facts.budget,
  DEMO.facts.familyCar,
  DEMO.facts.hondaInterest,
  DEMO.facts.hondaMadeBy,
];
/**
 * Learned in August with the Corolla interest: the test drive, the Corolla interest and
 * the Civic interest's corrected version (valid from May), in list order.
 */
const AUGUST_FACTS = [
  DEMO.facts.testDrive,
  DEMO.facts.toyotaInterest,
  DEMO.facts.hondaInterestUntilToyota,
];

describe('Dataset.facts: what the store learned (recordedAfter / recordedBy)', () => {
  it('recordedAfter is exclusive, recordedBy inclusive', async () => {
    expect(await factIds({ recordedAfter: MAY_RECORDED })).toEqual(AUGUST_FACTS);
    expect(await factIds({ recordedAfter: before(MAY_RECORDED) })).toEqual([
      DEMO.facts.testDrive,
      DEMO.facts.toyotaInterest,
      DEMO.facts.budget,
      DEMO.facts.hondaInterestUntilToyota,
      DEMO.facts.familyCar,
      DEMO.facts.hondaInterest,
      DEMO.facts.hondaMadeBy,
    ]);
    expect(await factIds({ recordedBy: before(MAY_RECORDED) })).toEqual([DEMO.facts.livesInBerlin]);
  });

  it('recordedBy alone is every fact the store knew then, whatever its state (superseded, deleted, expired or future now)', async () => {
    expect(await factIds({ recordedBy: MAY_RECORDED })).toEqual([
      ...MAY_FACTS,
      DEMO.facts.livesInBerlin,
    ]);
    // Known by the end of August: every fact, the deleted Berlin fact and the future test drive included.
    expect(await factIds({ recordedBy: '2026-08-31' })).toEqual(
      await factIds({ includeInvalidated: true }),
    );
  });

  it('(A, B] is what the store learned between A and B', async () => {
    expect(await factIds({ recordedAfter: '2026-05-01', recordedBy: '2026-06-01' })).toEqual(
      MAY_FACTS,
    );
    expect(
      await factIds({ recordedAfter: before(AUGUST_RECORDED), recordedBy: AUGUST_RECORDED }),
    ).toEqual(AUGUST_FACTS);
    expect(await factIds({ recordedAfter: '2026-06-01', recordedBy: '2026-07-01' })).toEqual([]);
  });
});

describe('Dataset.facts: what the store stopped believing (invalidatedAfter / invalidatedBy)', () => {
  it('(A, B] holds the superseded and the deleted, told apart by invalidReason', async () => {
    const { nodes } = await facts({
      invalidatedAfter: '2026-06-30',
      invalidatedBy: AUGUST_RECORDED,
    });
    expect(nodes.map((n) => [n.factId, n.invalidReason, n.invalidAt])).toEqual([
      [DEMO.facts.hondaInterest, 'SUPERSEDED', AUGUST_RECORDED],
      [DEMO.facts.livesInBerlin, 'DELETED', BERLIN_DELETED],
    ]);
  });

  it('invalidatedAfter is exclusive, invalidatedBy inclusive; a fact still believed never matches', async () => {
    expect(await factIds({ invalidatedBy: BERLIN_DELETED })).toEqual([DEMO.facts.livesInBerlin]);
    expect(await factIds({ invalidatedBy: before(BERLIN_DELETED) })).toEqual([]);
    expect(await factIds({ invalidatedAfter: BERLIN_DELETED })).toEqual([DEMO.facts.hondaInterest]);
    expect(await factIds({ invalidatedAfter: before(BERLIN_DELETED) })).toEqual([
      DEMO.facts.hondaInterest,
      DEMO.facts.livesInBerlin,
    ]);
    expect(await factIds({ invalidatedAfter: '2000-01-01' })).toHaveLength(2);
  });
});

describe('Dataset.facts: the windows AND with every other argument', () => {
  it('with asOf / validAt / knownAt: within that point, not the full history', async () => {
    // Believed true on 1 June, and learned in May: the Berlin fact (April) is left out.
    expect(await factIds({ asOf: '2026-06-01', recordedAfter: '2026-05-01' })).toEqual(MAY_FACTS);
    // Live now and learned in May: the Honda Civic interest (superseded) is left out.
    expect(await factIds({ validAt: '2026-12-01', recordedBy: '2026-06-01' })).toEqual([
      DEMO.facts.familyCar,
      DEMO.facts.hondaMadeBy,
    ]);
    // Believed on 1 August and invalidated later: the Honda Civic interest alone.
    expect(
      await factIds({
        knownAt: '2026-08-01',
        validAt: '2026-08-01',
        invalidatedAfter: '2026-08-01',
      }),
    ).toEqual([DEMO.facts.hondaInterest]);
  });

  it('with q, states, episodeId and includeInvalidated', async () => {
    expect(await factIds({ q: 'interested user', recordedBy: '2026-06-01' })).toEqual([
      DEMO.facts.hondaInterest,
    ]);
    expect(await factIds({ states: ['SUPERSEDED'], invalidatedAfter: BERLIN_DELETED })).toEqual([
      DEMO.facts.hondaInterest,
    ]);
    expect(await factIds({ states: ['LIVE'], recordedBy: MAY_RECORDED })).toEqual([
      DEMO.facts.familyCar,
      DEMO.facts.hondaMadeBy,
    ]);
    expect(
      await factIds({ episodeId: DEMO.episodes.hondaCivic, invalidatedBy: '2026-12-01' }),
    ).toEqual([DEMO.facts.hondaInterest]);
    expect(await factIds({ includeInvalidated: true, recordedAfter: MAY_RECORDED })).toEqual(
      AUGUST_FACTS,
    );
  });

  it('pages agree with totalCount', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const { connection, nodes } = await facts({ recordedBy: MAY_RECORDED, first: 2, after });
      expect(connection.totalCount).toBe(5);
      seen.push(...nodes.map((n) => n.factId));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(seen).toEqual([...MAY_FACTS, DEMO.facts.livesInBerlin]);
  });
});

describe('Dataset.facts: an empty window is refused before the store is asked', () => {
  const refused = async (variables: Partial<FactsQueryVariables>) => {
    sent.length = 0;
    const { status, body } = await t.graphql(
      FactsDocument,
      { dataset: DATASET, ...variables },
      key,
    );
    const factReads = sent
      .map((e) => String(e.command.comment ?? e.commandName))
      .filter((c) => /facts/i.test(c));
    return { status, body, factReads };
  };

  it('the probe sees fact reads when the window is not empty', async () => {
    const { body, factReads } = await refused({
      recordedAfter: before(MAY_RECORDED),
      recordedBy: MAY_RECORDED,
    });
    expect(body.errors).toBeUndefined();
    expect(factReads).toEqual(expect.arrayContaining(['store:listFacts', 'store:countFacts']));
  });

  it('recordedAfter equal to recordedBy is BAD_USER_INPUT naming the argument, and no fact is read', async () => {
    const { status, body, factReads } = await refused({
      recordedAfter: MAY_RECORDED,
      recordedBy: MAY_RECORDED,
    });
    expect(status).toBe(200);
    expect(factReads).toEqual([]);
    // Refused like every argument rule: the whole answer is the error, in the shape the
    // other argument rules give (the problem per argument under extensions.issues).
    expect(body.data?.dataset ?? null).toBeNull();
    expect(body.errors).toEqual([
      {
        message: 'recordedAfter: must be earlier than recordedBy',
        extensions: {
          code: 'BAD_USER_INPUT',
          issues: [{ path: ['recordedAfter'], message: 'must be earlier than recordedBy' }],
        },
      },
    ]);
  });

  it('invalidatedAfter later than invalidatedBy too, each window named, both at once', async () => {
    const one = await refused({ invalidatedAfter: '2026-08-01', invalidatedBy: '2026-07-01' });
    expect(one.factReads).toEqual([]);
    expect(one.body.errors?.[0]?.message).toBe(
      'invalidatedAfter: must be earlier than invalidatedBy',
    );
    const both = await refused({
      recordedAfter: '2026-06-01',
      recordedBy: '2026-05-01',
      invalidatedAfter: '2026-08-01',
      invalidatedBy: '2026-08-01',
    });
    expect(both.factReads).toEqual([]);
    expect(both.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(both.body.errors?.[0]?.message).toBe(
      'recordedAfter: must be earlier than recordedBy; invalidatedAfter: must be earlier than invalidatedBy',
    );
  });

  it('in a literal query too, and a bound from one window may pass the other', async () => {
    sent.length = 0;
    const response = await t.request('/graphql', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        query: `{ dataset(name: "${DATASET}") { facts(recordedAfter: "2026-09-01", recordedBy: "2026-01-01") { totalCount } } }`,
      }),
    });
    const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(sent.map((e) => String(e.command.comment)).filter((c) => /facts/i.test(c))).toEqual([]);
    // Only after < by on the same axis is required: recorded by June, invalidated after it.
    expect(await factIds({ recordedBy: '2026-06-01', invalidatedAfter: '2026-06-01' })).toEqual([
      DEMO.facts.hondaInterest,
      DEMO.facts.livesInBerlin,
    ]);
  });
});

describe('Fact.state on each axis', () => {
  const stateOf = async (
    factId: string,
    at: { stateAt?: string; stateValidAt?: string; stateKnownAt?: string },
  ) => {
    const { nodes } = await facts({ includeInvalidated: true, ...at });
    return nodes.find((n) => n.factId === factId)!.state;
  };

  it('knownAt overrides the transaction axis: superseded from invalidAt == knownAt on', async () => {
    const honda = DEMO.facts.hondaInterest;
    expect(await stateOf(honda, {})).toBe('SUPERSEDED');
    expect(await stateOf(honda, { stateKnownAt: before(AUGUST_RECORDED) })).toBe('LIVE');
    expect(await stateOf(honda, { stateKnownAt: AUGUST_RECORDED })).toBe('SUPERSEDED');
    // Deleted in July, but believed in June: on valid time (now) it is live.
    expect(await stateOf(DEMO.facts.livesInBerlin, { stateKnownAt: '2026-06-30' })).toBe('LIVE');
  });

  it('validAt overrides the valid-time axis: future before validAt, expired from validUntil on', async () => {
    expect(await stateOf(DEMO.facts.budget, { stateValidAt: '2026-08-31T23:59:59.999Z' })).toBe(
      'LIVE',
    );
    expect(await stateOf(DEMO.facts.budget, { stateValidAt: '2026-09-01' })).toBe('EXPIRED');
    expect(await stateOf(DEMO.facts.testDrive, { stateValidAt: '2035-01-15T10:00:00Z' })).toBe(
      'LIVE',
    );
    expect(await stateOf(DEMO.facts.testDrive, { stateValidAt: '2035-01-15T09:59:59.999Z' })).toBe(
      'FUTURE',
    );
    // Valid time never makes a fact superseded: that is knownAt's (here now's) axis.
    expect(await stateOf(DEMO.facts.hondaInterest, { stateValidAt: '2026-06-01' })).toBe(
      'SUPERSEDED',
    );
  });

  it('each overrides one axis of at, the other stays at at', async () => {
    // at sets K = 1 September (superseded by then), validAt moves only T.
    expect(
      await stateOf(DEMO.facts.hondaInterest, {
        stateAt: '2026-09-01',
        stateValidAt: '2026-04-01',
      }),
    ).toBe('SUPERSEDED');
    // at sets T = 1 April (before validAt), knownAt moves only K (before invalidAt).
    expect(
      await stateOf(DEMO.facts.hondaInterest, {
        stateAt: '2026-04-01',
        stateKnownAt: '2026-06-01',
      }),
    ).toBe('FUTURE');
    // Both given: at is ignored.
    expect(
      await stateOf(DEMO.facts.livesInBerlin, {
        stateAt: '2030-01-01',
        stateValidAt: '2026-05-01',
        stateKnownAt: '2026-05-01',
      }),
    ).toBe('LIVE');
  });
});

describe('memories: includeSuperseded', () => {
  const texts = async (variables: Partial<MemoriesQueryVariables>) => {
    const { body } = await t.graphql(MemoriesDocument, { dataset: DATASET, ...variables }, key);
    expect(body.errors).toBeUndefined();
    const connection = body.data!.dataset!.memories;
    expect(connection.totalCount).toBe(connection.edges.length);
    return connection.edges.map((e) => e.node.text);
  };
  const TOYOTA = 'The user is interested in a Toyota Corolla Hybrid.';
  const HONDA = 'The user is considering a Honda Civic.';
  const BERLIN = 'The user lives in Berlin.';
  const SHORT = 'The user prefers short, direct answers.';

  it('adds memories whose validity ended by now; with includeArchived, every memory', async () => {
    expect(await texts({})).toEqual([TOYOTA, SHORT]);
    expect(await texts({ includeSuperseded: true })).toEqual([TOYOTA, HONDA, SHORT]);
    expect(await texts({ includeSuperseded: true, includeArchived: true })).toEqual([
      TOYOTA,
      HONDA,
      BERLIN,
      SHORT,
    ]);
    expect(await texts({ includeSuperseded: false })).toEqual(await texts({}));
  });

  it('with asOf: every memory begun by asOf, whatever its validUntil', async () => {
    // The Honda Civic memory ended on 2026-08-16T09:14:10Z, when the Toyota one began.
    const handOver = '2026-08-16T09:14:10.000Z';
    expect(await texts({ asOf: handOver })).toEqual([TOYOTA, SHORT]);
    expect(await texts({ asOf: handOver, includeSuperseded: true })).toEqual([
      TOYOTA,
      HONDA,
      SHORT,
    ]);
    expect(await texts({ asOf: before(handOver) })).toEqual([HONDA, SHORT]);
    // Not begun yet is not superseded: the Toyota memory stays out before it starts.
    expect(await texts({ asOf: before(handOver), includeSuperseded: true })).toEqual([
      HONDA,
      SHORT,
    ]);
    expect(await texts({ asOf: '2026-05-01', includeSuperseded: true })).toEqual([SHORT]);
    expect(
      await texts({ asOf: '2026-09-01', includeSuperseded: true, includeArchived: true }),
    ).toEqual([TOYOTA, HONDA, BERLIN, SHORT]);
  });

  it('Query.memories takes it too, over every dataset of the workspace, paged', async () => {
    const page = async (variables: { includeSuperseded?: boolean; after?: string | null }) => {
      const { body } = await t.graphql(WorkspaceMemoriesDocument, { first: 2, ...variables }, key);
      expect(body.errors).toBeUndefined();
      return body.data!.memories;
    };
    expect((await page({})).totalCount).toBe(2);
    const first = await page({ includeSuperseded: true });
    expect(first.totalCount).toBe(3);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await page({ includeSuperseded: true, after: first.pageInfo.endCursor });
    expect([...first.edges, ...second.edges].map((e) => e.node.memoryId)).toEqual([
      DEMO.memories.toyota,
      DEMO.memories.hondaCivic,
      DEMO.memories.shortAnswers,
    ]);
    expect(second.pageInfo.hasNextPage).toBe(false);
  });
});
