import { parse } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { docSection } from '../helpers/docs.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The key management examples (docs/OPERATIONS.md, "API keys"), run as written: the
 * createApiKey mutation with the variables the text gives, the key it answers used on a
 * REST route, the listing, then the revocation, after which the key is refused.
 */
const section = docSection('OPERATIONS.md', '## API keys');
const blocks = [...section.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);
const block = (field: string) => {
  const found = blocks.find((b) => b.includes(`${field}(`) || b.includes(`${field} {`));
  if (!found) throw new Error(`docs/OPERATIONS.md's "API keys" section has no example of ${field}`);
  return parse(found);
};
const variables = JSON.parse(/Variables\s+`(\{[^`]*\})`/.exec(section)?.[1] ?? 'null');

let t: TestGateway;
let admin: string;

beforeAll(async () => {
  t = await openTestGateway({
    demoWorkspaces: ['development'],
    gateway: { clock: () => new Date('2026-12-01T00:00:00Z') },
  });
  admin = await t.key('development', ['read', 'write', 'admin']);
});

describe('docs/OPERATIONS.md: managing keys through GraphQL', () => {
  it('creates a key that works, lists it, revokes it, and the key is then refused', async () => {
    expect(variables).toEqual({
      name: 'ingest pipeline',
      scopes: ['READ', 'WRITE'],
      expiresAt: '2030-01-01T00:00:00Z',
    });
    const created = await t.graphql(block('createApiKey'), variables, admin);
    expect(created.body.errors).toBeUndefined();
    const { key, apiKey } = (
      created.body.data as {
        createApiKey: { key: string; apiKey: { keyId: string; status: string } };
      }
    ).createApiKey;
    expect(apiKey.status).toBe('ACTIVE');
    const path = '/v1/memory/semantic/datasets/user_42/facts';
    expect((await t.request(path, { key })).status).toBe(200);

    const listed = await t.graphql(block('apiKeys'), {}, admin);
    expect(listed.body.errors).toBeUndefined();
    const data = listed.body.data as {
      apiKeys: { keyId: string; name: string }[];
      apiKeyEvents: { action: string; keyId: string }[];
    };
    expect(data.apiKeys).toContainEqual(
      expect.objectContaining({ keyId: apiKey.keyId, name: 'ingest pipeline' }),
    );
    expect(data.apiKeyEvents).toContainEqual(
      expect.objectContaining({ action: 'CREATED', keyId: apiKey.keyId }),
    );

    const revoked = await t.graphql(block('revokeApiKey'), { keyId: apiKey.keyId }, admin);
    expect(revoked.body.errors).toBeUndefined();
    expect(revoked.body.data).toMatchObject({
      revokeApiKey: { revoked: true, apiKey: { status: 'REVOKED' } },
    });
    expect((await t.request(path, { key })).status).toBe(401);
  });
});
