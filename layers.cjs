/**
 * The layers of the gateway, lowest first: a file may import from its own layer and the
 * layers below, never from a layer above (docs/ARCHITECTURE.md draws the same list).
 * `.dependency-cruiser.cjs` turns them into the import rules `npm run check` enforces, and
 * test/architecture/layers.test.ts fails on a file under src/ that no layer claims.
 */
const LAYERS = [
  { name: 'domain', paths: ['^src/domain/'] },
  {
    name: 'foundations',
    paths: [
      '^src/clock\\.ts$',
      '^src/spans\\.ts$',
      '^src/validation\\.ts$',
      '^src/config\\.ts$',
      '^src/embeddings/',
      '^src/generated/',
    ],
  },
  { name: 'store', paths: ['^src/store/'] },
  {
    name: 'services',
    paths: [
      '^src/errors\\.ts$',
      '^src/recall/',
      '^src/transfer/',
      '^src/embedded/',
      '^src/openStore\\.ts$',
      '^src/demo/',
      '^src/loaders\\.ts$',
      '^src/context\\.ts$',
    ],
  },
  { name: 'schema', paths: ['^src/schema/'] },
  { name: 'surfaces', paths: ['^src/rest/', '^src/mcp/'] },
  { name: 'edge', paths: ['^src/http/'] },
  { name: 'entry points', paths: ['^src/main\\.ts$', '^src/cli/'] },
];

module.exports = { LAYERS };
