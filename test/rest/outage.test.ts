import { MongoServerSelectionError } from 'mongodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * A lost database is a 503 in each surface's shape, whether it fails while the key is
 * looked up (before any route runs) or inside a route. (Issue-level outage behaviour, with
 * a real database going away, is tested separately.)
 */
let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['development'] });
  key = await t.key('development', ['read']);
});

const lost = () =>
  new MongoServerSelectionError('connect ECONNREFUSED 127.0.0.1:27017', {} as never);

describe('database unavailable', () => {
  it('while the key is looked up', async () => {
    const spy = vi.spyOn(t.database.collections.apiKeys, 'findOne').mockRejectedValue(lost());
    try {
      const soda = await t.request('/v1/memory/semantic/datasets/user_42/facts', { key });
      expect(soda.status).toBe(503);
      expect(await soda.json()).toEqual({
        error: 'The database is unavailable; try again shortly',
      });
      const supa = await t.request('/api/memories', { key });
      expect(supa.status).toBe(503);
      expect(await supa.json()).toMatchObject({ code: 'database_error', details: null });
      const gql = await t.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ viewer { workspace } }' }),
      });
      expect(gql.status).toBe(503);
      expect(await gql.json()).toEqual({
        errors: [
          {
            message: 'The database is unavailable; try again shortly',
            extensions: { code: 'DATABASE_UNAVAILABLE' },
          },
        ],
      });
    } finally {
      spy.mockRestore();
    }
  });

  it('inside a route', async () => {
    const spy = vi.spyOn(t.database.collections.facts, 'find').mockImplementation(() => {
      throw lost();
    });
    try {
      const soda = await t.request('/v1/memory/semantic/datasets/user_42/facts', { key });
      expect(soda.status).toBe(503);
      expect(await soda.json()).toEqual({
        error: 'The database is unavailable; try again shortly',
      });
    } finally {
      spy.mockRestore();
    }
  });
});
