import { parse } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { docSection, readDoc } from '../helpers/docs.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The recordEpisode example of docs/WRITES.md must run as written against the demo
 * dataset: the first ```graphql block there that calls recordEpisode, with the ```json
 * block after it as its variables. The README's tour writes with curl: its body, sent as
 * written, records the fact it names.
 */
const WRITES = readDoc('WRITES.md');

function writeExample(): { query: string; variables: Record<string, unknown> } {
  const graphql = [...WRITES.matchAll(/```graphql\n([\s\S]*?)```/g)].find((m) =>
    m[1]!.includes('recordEpisode'),
  );
  if (!graphql) throw new Error('docs/WRITES.md has no ```graphql block calling recordEpisode');
  const after = WRITES.slice(graphql.index! + graphql[0].length);
  const json = /```json\n([\s\S]*?)```/.exec(after);
  if (!json) throw new Error('the recordEpisode example is not followed by a ```json block');
  return { query: graphql[1]!, variables: JSON.parse(json[1]!) };
}

/** The README tour's write: the `-d` body of its curl to /graphql that calls recordEpisode. */
function tourWrite(): { query: string; variables: Record<string, unknown> } {
  const readme = readDoc('README.md');
  const curl = [
    ...readme.matchAll(/```sh\n(curl -s http:\/\/127\.0\.0\.1:3004\/graphql[\s\S]*?)```/g),
  ]
    .map((m) => m[1]!)
    .find((c) => c.includes('recordEpisode'));
  if (!curl) throw new Error("the README's tour has no curl calling recordEpisode");
  const body = /-d '([\s\S]*?)'\s*$/.exec(curl.trim());
  if (!body) throw new Error("the README's write curl has no -d '...' body");
  return JSON.parse(body[1]!);
}

let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['development'] });
  key = await t.key('development', ['read', 'write']);
});

describe('docs/WRITES.md: how an extraction pipeline writes', () => {
  it('the recordEpisode example runs as written and records facts', async () => {
    const { query, variables } = writeExample();
    const { status, body } = await t.graphql(parse(query), variables, key);
    expect(body.errors).toBeUndefined();
    expect(status).toBe(200);
    const payload = (body.data as { recordEpisode?: { facts?: unknown[] } } | null)?.recordEpisode;
    expect(payload?.facts?.length).toBeGreaterThan(0);
  });
});

describe("README's tour: a write", () => {
  it('the curl body runs as written and records the fact it names', async () => {
    const { query, variables } = tourWrite();
    const { status, body } = await t.graphql(parse(query), variables, key);
    expect(body.errors).toBeUndefined();
    expect(status).toBe(200);
    const payload = (
      body.data as { recordEpisode: { outcome: string; facts: { object: string }[] } }
    ).recordEpisode;
    expect(payload.outcome).toBe('RECORDED');
    expect(payload.facts.map((f) => f.object)).toEqual(['toyota corolla hybrid']);
  });
});

describe('docs/OPERATIONS.md: what a write-only pipeline key sees', () => {
  /** The pipeline example's variables as a new episode (an id of its own, new content). */
  const freshEpisode = (n: number) => {
    const { variables } = writeExample();
    const input = variables.input as { episode: Record<string, unknown> };
    return {
      ...variables,
      input: {
        ...input,
        episode: {
          ...input.episode,
          episodeId: `d2c4e6f8-1a3b-4c5d-8e7f-00000000000${n}`,
          content: `${input.episode.content} (${n})`,
        },
      },
    };
  };
  const idsOnly = () => {
    const section = docSection('OPERATIONS.md', '## API keys');
    // The section's example of what a write-only key reads back (its others manage keys).
    const example = [...section.matchAll(/```graphql\n([\s\S]*?)```/g)].find((m) =>
      m[1]!.includes('recordEpisode'),
    );
    expect(example?.[1]).toContain('recordEpisode');
    return parse(example![1]!);
  };

  it('the API keys section’s recordEpisode example runs with a write-only key', async () => {
    const writeOnly = await t.key('development', ['write']);
    const { status, body } = await t.graphql(idsOnly(), freshEpisode(1), writeOnly);
    expect(body.errors).toBeUndefined();
    expect(status).toBe(200);
    const payload = (body.data as { recordEpisode: { facts: { factId: string }[] } }).recordEpisode;
    expect(payload.facts.length).toBeGreaterThan(0);
    expect(body.data).toMatchObject({ recordEpisode: { alreadyRecorded: false } });
  });

  it('the pipeline example’s longer selection is refused whole with a write-only key, and writes nothing', async () => {
    const writeOnly = await t.key('development', ['write']);
    const variables = freshEpisode(2);
    const full = await t.graphql(parse(writeExample().query), variables, writeOnly);
    expect(full.status).toBe(403);
    expect(full.body.data).toBeUndefined();
    expect(full.body.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    expect(full.body.errors?.[0]?.message).toBe(
      'This operation needs the read scope (for Episode.recordedAt, Fact.subject, Fact.predicate, Fact.object, Fact.state); nothing was run',
    );
    expect(JSON.stringify(full.body)).not.toMatch(/Corolla|toyota/i);
    // Nothing was written: the same episode sent with the id-only selection is new.
    const ids = await t.graphql(idsOnly(), variables, writeOnly);
    expect(ids.body.errors).toBeUndefined();
    expect(ids.body.data).toMatchObject({ recordEpisode: { alreadyRecorded: false } });
  });
});
