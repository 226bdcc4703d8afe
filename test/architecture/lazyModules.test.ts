import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * What only some deployments use is loaded when first used, not at start, and what none
 * uses not at all (docs/PERFORMANCE.md, "Memory"): the gateway's app, with everything it
 * imports, loads no MCP SDK (the MCP surface, once imported, does: so the check can see
 * one), and of the date parser's locales only English.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGISTER = fileURLToPath(new URL('../helpers/loadedModules/register.mjs', import.meta.url));

/** The modules a process resolves while it imports `modules`, in order. */
function resolvedBy(modules: string[]): string[] {
  const script = modules.map((m) => `await import(${JSON.stringify(m)});`).join(' ');
  const run = spawnSync(
    process.execPath,
    ['--import', REGISTER, '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  expect(run.status, run.stderr).toBe(0);
  return run.stderr
    .split('\n')
    .filter((line) => line.startsWith('resolved '))
    .map((line) => line.slice('resolved '.length));
}

const isMcpSdk = (url: string) => url.includes('/node_modules/@modelcontextprotocol/');

describe('modules loaded when first used', () => {
  it('the gateway app loads no MCP SDK (the MCP surface does) and one date locale', {
    timeout: 120_000,
  }, () => {
    const app = resolvedBy(['./src/http/app.ts']);
    expect(app.some((url) => url.endsWith('/src/http/app.ts'))).toBe(true);
    expect(app.length).toBeGreaterThan(100);
    expect(app.filter(isMcpSdk)).toEqual([]);
    const mcp = resolvedBy(['./src/mcp/server.ts']);
    expect(mcp.filter(isMcpSdk).length).toBeGreaterThan(0);
    const locales = app.flatMap(
      (url) => /\/chrono-node\/dist\/esm\/locales\/(\w+)\//.exec(url)?.[1] ?? [],
    );
    expect(new Set(locales)).toEqual(new Set(['en']));
  });
});
