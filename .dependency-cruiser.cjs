/**
 * The import rules of `npm run check`: no import (type-only ones included) closes a
 * circle, and none runs up a layer of layers.cjs.
 */
const { LAYERS } = require('./layers.cjs');

const upwardImports = LAYERS.slice(0, -1).map((layer, index) => ({
  name: `no-import-up-from-${layer.name.replace(/ /g, '-')}`,
  comment: `${layer.name} imports only from its own layer and the layers below it`,
  severity: 'error',
  from: { path: layer.paths },
  to: { path: LAYERS.slice(index + 1).flatMap((above) => above.paths) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'an import, type-only or not, that closes a circle',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...upwardImports,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
