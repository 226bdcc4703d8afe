import { type AuthenticatedKey, SCOPES } from '../domain/apiKey.js';
import { builder } from './builder.js';

export const ScopeEnum = builder.enumType('Scope', {
  values: Object.fromEntries(SCOPES.map((s) => [s.toUpperCase(), { value: s }])) as {
    READ: { value: 'read' };
    WRITE: { value: 'write' };
    ADMIN: { value: 'admin' };
  },
});

const ViewerRef = builder.objectRef<AuthenticatedKey>('Viewer').implement({
  description: 'The API key making the request: its workspace and scopes.',
  authScopes: { authenticated: true },
  fields: (t) => ({
    keyId: t.exposeID('keyId'),
    workspaceId: t.exposeID('workspaceId'),
    workspace: t.exposeString('workspace', { description: "The workspace's name." }),
    scopes: t.expose('scopes', { type: [ScopeEnum] }),
  }),
});

builder.queryField('viewer', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ViewerRef,
    description: 'Any valid key may ask what it is (a write-only pipeline key included).',
    resolve: (_root, _args, ctx) => ctx.auth,
  }),
);
