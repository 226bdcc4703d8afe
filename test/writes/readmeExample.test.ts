import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The README's recordEpisode example (section "How an extraction pipeline writes") must run
 * as written against the demo dataset: the first ```graphql block there that calls
 * recordEpisode, with the ```json block after it as its variables.
 */
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const HEADING = /^#{1,6} .*How an extraction pipeline writes.*$/m;

function writeExample(): { query: string; variables: Record<string, unknown> } {
  const heading = HEADING.exec(README);
  if (!heading) throw new Error('README.md has no "How an extraction pipeline writes" section');
  const section = README.slice(heading.index);
  const graphql = [...section.matchAll(/```graphql\n([\s\S]*?)```/g)].find((m) =>
    m[1]!.includes('recordEpisode'),
  );
  if (!graphql) throw new Error('that section has no ```graphql block calling recordEpisode');
  const after = section.slice(graphql.index! + graphql[0].length);
  const json = /```json\n([\s\S]*?)```/.exec(after);
  if (!json) throw new Error('the recordEpisode example is not followed by a ```json block');
  return { query: graphql[1]!, variables: JSON.parse(json[1]!) };
}

let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['development'] });
  key = await t.key('development', ['read', 'write']);
});

describe('README: how an extraction pipeline writes', () => {
  it('the recordEpisode example runs as written and records facts', async () => {
    const { query, variables } = writeExample();
    const { status, body } = await t.graphql(parse(query), variables, key);
    expect(body.errors).toBeUndefined();
    expect(status).toBe(200);
    const payload = (body.data as { recordEpisode?: { facts?: unknown[] } } | null)?.recordEpisode;
    expect(payload?.facts?.length).toBeGreaterThan(0);
  });
});

describe('README: what a write-only pipeline key sees', () => {
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
    const heading = /^#{1,6} API keys$/m.exec(README);
    expect(heading).not.toBeNull();
    const section = README.slice(heading!.index, HEADING.exec(README)!.index);
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
      'This operation needs the "read" scope (for Episode.recordedAt, Fact.subject, Fact.predicate, Fact.object, Fact.state); nothing was run',
    );
    expect(JSON.stringify(full.body)).not.toMatch(/Corolla|toyota/i);
    // Nothing was written: the same episode sent with the id-only selection is new.
    const ids = await t.graphql(idsOnly(), variables, writeOnly);
    expect(ids.body.errors).toBeUndefined();
    expect(ids.body.data).toMatchObject({ recordEpisode: { alreadyRecorded: false } });
  });
});
