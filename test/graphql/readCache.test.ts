import type { CommandStartedEvent } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../src/store/workspaces.js';
import {
  EpisodesDocument,
  ErasureEraseDatasetDocument,
  ViewerDocument,
} from '../generated/operations.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The gateway's short memory of verified keys and existing datasets: what it saves (the
 * bookkeeping reads), and what it must never change (a wrong secret, another dataset, a
 * dataset this process erased).
 */
const TTL_MS = 400;
let cached: TestGateway;
let uncached: TestGateway;
const sent: CommandStartedEvent[] = [];

beforeAll(async () => {
  cached = await openTestGateway({
    clientOptions: { monitorCommands: true },
    gateway: { readCacheTtlMs: TTL_MS },
  });
  uncached = await openTestGateway({ clientOptions: { monitorCommands: true } });
  for (const t of [cached, uncached]) {
    t.database.client.on('commandStarted', (event) => sent.push(event));
  }
});

/** The store functions behind the commands `run` sends. */
async function storeReads(run: () => Promise<unknown>): Promise<string[]> {
  sent.length = 0;
  await run();
  return sent.map((e) => String(e.command.comment ?? e.commandName));
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('read cache', () => {
  it('a key and a dataset verified a moment ago cost no database read', async () => {
    const key = await cached.key('acme', ['read']);
    const ask = () => cached.graphql(EpisodesDocument, { dataset: 'user_42' }, key);
    const first = await storeReads(ask);
    expect(first).toContain('store:authenticateApiKey');
    expect(first).toContain('store:findDataset');
    const again = await storeReads(async () => {
      const { body } = await ask();
      expect(body.data?.dataset?.episodes.totalCount).toBeGreaterThan(0);
    });
    expect(again).not.toContain('store:authenticateApiKey');
    expect(again).not.toContain('store:findDataset');
    expect(again).toContain('store:listEpisodes');
  });

  it('without it (the default of createGateway) every request reads the key, in one read', async () => {
    const key = await uncached.key('acme', ['read']);
    for (let i = 0; i < 2; i++) {
      const reads = await storeReads(() => uncached.graphql(ViewerDocument, {}, key));
      // The key record carries its workspace's name: no second read for the workspace.
      expect(reads).toEqual(['store:authenticateApiKey']);
    }
  });

  it('a cached key id with another secret is still refused', async () => {
    const key = await cached.key('acme', ['read']);
    expect((await cached.graphql(ViewerDocument, {}, key)).status).toBe(200);
    const forged =
      `${key.slice(0, -4)}AAAA` === key ? `${key.slice(0, -4)}BBBB` : `${key.slice(0, -4)}AAAA`;
    expect((await cached.graphql(ViewerDocument, {}, forged)).status).toBe(401);
  });

  it('a revoked key keeps working at most for the TTL', async () => {
    const key = await cached.key('acme', ['read']);
    expect((await cached.graphql(ViewerDocument, {}, key)).status).toBe(200);
    await revokeApiKey(cached.database.collections, key);
    expect((await uncached.graphql(ViewerDocument, {}, key)).status).toBe(401);
    await sleep(TTL_MS + 200);
    expect((await cached.graphql(ViewerDocument, {}, key)).status).toBe(401);
  });

  it('a dataset erased through this gateway reads as absent at once', async () => {
    const key = await cached.key('acme', ['read', 'write', 'admin']);
    const episodes = () => cached.graphql(EpisodesDocument, { dataset: 'user_42' }, key);
    expect((await episodes()).body.data?.dataset).not.toBeNull();
    const erased = await cached.graphql(ErasureEraseDatasetDocument, { name: 'user_42' }, key);
    expect(erased.body.errors).toBeUndefined();
    expect((await episodes()).body.data?.dataset).toBeNull();
  });

  it('keys created before keys carried their workspace name still authenticate', async () => {
    const key = await uncached.key('legacy', ['read']);
    const keyId = /^mk_([0-9a-f]{24})_/.exec(key)![1]!;
    await uncached.database.collections.apiKeys.updateOne(
      { _id: keyId },
      { $unset: { workspace: '' } },
    );
    const reads = await storeReads(async () => {
      const { body } = await uncached.graphql(ViewerDocument, {}, key);
      expect(body.data?.viewer.workspace).toBe('legacy');
    });
    expect(reads).toEqual(['store:authenticateApiKey', 'store:findWorkspace']);
  });
});
